/**
 * The read models' text on PostgreSQL (docs/read-models.md#control-characters-on-postgresql): the
 * API accepts U+0000 in every name, id, qualifier and value (docs/api.md#limits), which PostgreSQL's
 * `text` cannot hold and its `jsonb` refuses, even escaped. The PostgreSQL read models therefore
 * store every string of a record with U+0000 and U+0001 written as two characters, and give them
 * back as they were:
 *
 *   U+0000 → U+0001 U+0001,   U+0001 → U+0001 U+0002,   any other character as it is.
 *
 * The code (src/core/nul-code.ts) is prefix-free and keeps the order of text by its bytes, so text
 * compared with `COLLATE "C"` orders coded as it orders plain, and equal strings stay equal: the
 * readers' orders, groups and joins are unchanged. A string without U+0000 or U+0001, nearly every
 * one, is stored and read as it is.
 */
import { decodeNul, encodeNul, NEEDS_NUL_CODE } from '../../core/nul-code.js'

/** Whether `value` is an object literal's kind (its prototype Object.prototype or null), not a class instance. */
function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * `value` with `code` applied to every string in it: the strings of arrays, the keys and values of
 * plain objects, the values of Maps (their keys are the program's own, e.g. `<dataset>\u0000<name>`,
 * and stay), and of Sets. Anything else (numbers, class instances) is kept. Copy on write: a part
 * with no string that `code` changes is the same object, and a part reached twice is copied once,
 * so shared references stay shared.
 */
export function mapStrings<T>(value: T, code: (text: string) => string): T {
  const seen = new Map<object, unknown>()
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return code(v)
    if (typeof v !== 'object' || v === null) return v
    if (seen.has(v)) return seen.get(v)
    seen.set(v, v)
    let out: unknown = v
    if (Array.isArray(v)) {
      const items = v.map(walk)
      if (items.some((x, i) => x !== v[i])) out = items
    } else if (v instanceof Map) {
      const entries = [...v].map(([k, x]) => [k, walk(x)] as const)
      if (entries.some(([k, x]) => x !== v.get(k))) out = new Map(entries)
    } else if (v instanceof Set) {
      const items = [...v].map(walk)
      if (items.some((x) => !v.has(x))) out = new Set(items)
    } else if (isPlainObject(v)) {
      const entries = Object.entries(v).map(([k, x]) => [code(k), walk(x)] as const)
      if (entries.some(([k, x]) => !Object.hasOwn(v, k) || x !== v[k])) out = Object.fromEntries(entries)
    }
    seen.set(v, out)
    return out
  }
  return walk(value) as T
}

/**
 * Whether any string that mapStrings would code in `value` holds U+0000 or U+0001. A walk that
 * allocates nothing: a projector's batch of ordinary records costs about 3 µs a record to check
 * (bench/HISTORY.md#control-characters-on-postgresql), against about 20 to copy.
 */
export function holdsCodedCharacters(value: unknown): boolean {
  if (typeof value === 'string') return NEEDS_NUL_CODE.test(value)
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) {
    for (const x of value) if (holdsCodedCharacters(x)) return true
    return false
  }
  if (value instanceof Map || value instanceof Set) {
    for (const x of value.values()) if (holdsCodedCharacters(x)) return true
    return false
  }
  if (!isPlainObject(value)) return false
  for (const k in value) if (NEEDS_NUL_CODE.test(k) || holdsCodedCharacters(value[k])) return true
  return false
}

/** `value` with every string as the read models store it (encodeNul; mapStrings says which): `value` itself when none needs it. */
export const encodeStrings = <T>(value: T): T => (holdsCodedCharacters(value) ? mapStrings(value, encodeNul) : value)

/** `value` with every stored string as it was sent (decodeNul; mapStrings says which). */
export const decodeStrings = <T>(value: T): T => mapStrings(value, decodeNul)
