/**
 * Sharding of the projection work by dataset (README § Operations: several projectors): shard i of
 * n takes the datasets whose FNV-1a hash mod n is i.
 */

/** Shard `index` (0-based) of `count` shards. */
export interface Shard {
  index: number
  count: number
}

/** 32-bit FNV-1a of a dataset id: stable across processes and versions. */
export function datasetHash(datasetId: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < datasetId.length; i++) {
    h ^= datasetId.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
