/**
 * User attribute keys as MongoDB field names (README § Read models). MongoDB stores field names
 * that start with `$` or contain `.` since 5.0, but its manual still warns against them: most
 * update operators, `$set` paths, some drivers and tools read them as operators or paths. So the
 * store keeps the keys of `properties` (objects, events) and `attributes` (object changes)
 * encoded, at every depth (nested objects, objects inside arrays): `%` → `%25`, `.` → `%2E`,
 * `$` → `%24`, and U+0000, which BSON cannot hold in a field name at all ("must not contain null
 * bytes"), → `%00`. The encoding is one to one, so a key read back is decoded to the key written, and
 * two keys never meet in one field. Only those fields are encoded: names, ids, types and the E2O
 * and O2O qualifiers are values, never field names, and stay as they are.
 */

const ENCODE: Readonly<Record<string, string>> = { '%': '%25', '.': '%2E', $: '%24', '\u0000': '%00' }
const DECODE: Readonly<Record<string, string>> = { '%25': '%', '%2E': '.', '%24': '$', '%00': '\u0000' }

/** One key as a field name: `%`, `.`, `$` and U+0000 percent-encoded. */
export function encodeKey(key: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is one of the characters it encodes
  return /[%.$\u0000]/.test(key) ? key.replace(/[%.$\u0000]/g, (c) => ENCODE[c] ?? c) : key
}

/** The key that encodeKey turned into `field`. */
export function decodeKey(field: string): string {
  return field.includes('%') ? field.replace(/%(25|2E|24|00)/g, (m) => DECODE[m] ?? m) : field
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
}

function mapKeys(value: unknown, f: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, f))
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[f(k)] = mapKeys(v, f)
  return out
}

/** A JSON object of user attributes with every key at every depth encoded (encodeKey); values untouched. */
export function encodeKeys<T extends Record<string, unknown>>(properties: T): T {
  return mapKeys(properties, encodeKey) as T
}

/** The attributes as written: every key at every depth decoded (decodeKey). */
export function decodeKeys<T extends Record<string, unknown>>(properties: T): T {
  return mapKeys(properties, decodeKey) as T
}
