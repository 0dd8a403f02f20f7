/**
 * Composite keys: the parts of a map key (dataset and name, object and activities, …) joined by one
 * separator, NUL, defined here once. The API accepts NUL inside names and ids, so joinKey writes each
 * part in a code without NUL (src/core/nul-code.ts): two different lists of as many parts never make one key.
 * Keys made by concatenating parts with KEY_SEP directly are only as distinct as their parts: their
 * makers pass parts that hold no NUL (dataset ids, kinds, numbers) but for the last.
 */
import { encodeNul } from './nul-code.js'

export const KEY_SEP = '\u0000'

/** `parts` joined by KEY_SEP, each in the NUL-free code (encodeNul), numbers in their decimal form. */
export function joinKey(...parts: readonly (string | number)[]): string {
  return parts.map((p) => (typeof p === 'number' ? String(p) : encodeNul(p))).join(KEY_SEP)
}

/**
 * The map under `key` of nested maps (a key of several parts without a joined string), added empty
 * when missing.
 */
export function innerMap<K, J, V>(maps: Map<K, Map<J, V>>, key: K): Map<J, V> {
  let map = maps.get(key)
  if (map === undefined) {
    map = new Map()
    maps.set(key, map)
  }
  return map
}
