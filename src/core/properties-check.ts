/**
 * Checks of the JSON values inside `properties` that a schema cannot state (docs/api.md#event-input,
 * `properties`: "any JSON-serializable data"; the limits are Ocelog's choice, docs/api.md#limits).
 * Pure and iterative: it runs before anything recursive (JSON.stringify, the log's encoders)
 * touches the value, so no input can overflow the call stack.
 */
import { LIMITS } from './limits.js'

/** One failed rule of an item: where (a JSON pointer) and which rule. */
export interface FieldError {
  /** JSON pointer inside the item, e.g. `/objects/3/type`; '' for the item itself. */
  path: string
  message: string
}

/** A UTF-16 surrogate without its partner: not a Unicode character, and lost (as U+FFFD) when written as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Whether `text` holds a lone UTF-16 surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text)
}

export const LONE_SURROGATE_MESSAGE = 'contains a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not a Unicode character'

/** One segment of an RFC 6901 JSON pointer. */
export function pointerSegment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

/**
 * Whether `propertiesErrors(value, …)` finds nothing, without building a path or an error: the
 * same walk and rules (depth past LIMITS.propertiesDepthMax, a non-finite number, a lone surrogate
 * in a string or an object's key), none of their reports. Most items pass, and for them this is the
 * whole check (validation.ts runs propertiesErrors only when this says false). Iterative, as
 * propertiesErrors is: no input can overflow the call stack.
 */
export function propertiesPass(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  const values: unknown[] = [value]
  const depths: number[] = [1]
  for (;;) {
    const v = values.pop()
    const depth = depths.pop()
    if (depth === undefined) return true
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false
    } else if (typeof v === 'string') {
      if (hasLoneSurrogate(v)) return false
    } else if (typeof v === 'object' && v !== null) {
      if (depth > LIMITS.propertiesDepthMax) return false
      if (Array.isArray(v)) {
        for (const child of v) {
          values.push(child)
          depths.push(depth + 1)
        }
      } else {
        const record = v as Record<string, unknown>
        for (const key of Object.keys(record)) {
          if (hasLoneSurrogate(key)) return false
          values.push(record[key])
          depths.push(depth + 1)
        }
      }
    }
  }
}

/** Stop after this many findings per properties value: enough to fix the item, cheap to report. */
const MAX_FINDINGS = 10

/**
 * Walks one `properties` value (at JSON pointer `path`, itself level 1) and reports:
 * - a container nested deeper than LIMITS.propertiesDepthMax levels (its path; nothing below it is read);
 * - a number that is not finite (JSON such as `1e309` parses to Infinity, which JSON cannot write back);
 * - a string or key with a lone surrogate.
 * @returns the errors found, at most 10; [] when the value is not an object (the schema reports that).
 */
export function propertiesErrors(value: unknown, path: string): FieldError[] {
  const errors: FieldError[] = []
  if (typeof value !== 'object' || value === null) return errors
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path, depth: 1 }]
  while (stack.length > 0 && errors.length < MAX_FINDINGS) {
    const top = stack.pop()
    if (top === undefined) break
    const v = top.value
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) errors.push({ path: top.path, message: 'is a number too large for a 64-bit float (JSON numbers must be finite)' })
    } else if (typeof v === 'string') {
      if (hasLoneSurrogate(v)) errors.push({ path: top.path, message: LONE_SURROGATE_MESSAGE })
    } else if (typeof v === 'object' && v !== null) {
      if (top.depth > LIMITS.propertiesDepthMax) {
        errors.push({
          path: top.path,
          message: `nests deeper than ${String(LIMITS.propertiesDepthMax)} levels of objects and arrays (properties: at most ${String(LIMITS.propertiesDepthMax)} levels)`,
        })
        continue
      }
      const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const entry = entries[i]
        if (entry === undefined) continue
        const [key, child] = entry
        const childPath = `${top.path}/${pointerSegment(key)}`
        if (!Array.isArray(v) && hasLoneSurrogate(key)) errors.push({ path: childPath, message: `key ${LONE_SURROGATE_MESSAGE}` })
        stack.push({ value: child, path: childPath, depth: top.depth + 1 })
      }
    }
  }
  return errors
}
