import type { Properties } from '../schemas/api.js'

/**
 * Per-top-level-key merge of object attributes (README § Read models, merging; docs/api.md#object-upsert-input:
 * "merged into existing properties, never replacing them wholesale").
 * An incoming key replaces that key's value (nested objects are replaced, not deep-merged, and a
 * `null` value is stored as null, not deleted); keys that are not sent are kept.
 * Unlike SQLite's json_patch (RFC 7396), which deep-merges and deletes keys set to null.
 * Keys such as `__proto__` stay plain attributes: spread defines own data properties and never
 * sets a prototype (an assignment `out[key] = value` would).
 * @returns a new object; neither argument is modified.
 */
export function mergeProperties(existing: Properties, incoming: Properties): Properties {
  return { ...existing, ...incoming }
}
