/**
 * Composite keys: the parts of a map key (dataset and name, object and activities, …) joined by one
 * separator, NUL, defined here once. The API does not refuse NUL inside names and ids, so parts that
 * hold one could make two keys meet; no log seen so far holds one (the key's users say what they key).
 */
export const KEY_SEP = '\u0000'

/** `parts` joined by KEY_SEP, numbers in their decimal form. */
export function joinKey(...parts: readonly (string | number)[]): string {
  return parts.join(KEY_SEP)
}
