/**
 * Counts of an object's own enumerable keys (what JSON.parse makes) without the array of them that
 * `Object.keys` would make: the projections ask this of every record, event object and attributes
 * object they fold (bench/HISTORY.md#the-entities-runners-allocations-cut-on-8b6b2a9).
 */

/** The number of own enumerable keys of `value`. */
export function ownKeyCount(value: object): number {
  let count = 0
  for (const key in value) if (Object.hasOwn(value, key)) count++
  return count
}

/** Whether `value` has no own enumerable key (`{}`; also an empty array). */
export function hasNoOwnKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false
  return true
}
