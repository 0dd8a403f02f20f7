/**
 * Which checkpoints keep a dataset's read models. A projector named `<base>` keeps every dataset;
 * shard i of n (`<base>-<i>-of-<n>`, see Projector) keeps the datasets whose hash mod n is i. Any
 * of them may have applied a dataset's records, so the read models hold a dataset's records up to
 * the highest checkpoint among those that keep it.
 */
import type { ProjectionState } from '../schemas/projections.js'
import { datasetHash, type Shard } from './shards.js'

export type { Shard }

/** The name of the projector that keeps the read models (Projector's default); its shards are `read-models-<i>-of-<n>`. */
export const READ_MODELS_PROJECTION = 'read-models'

const SHARDED = /^(.+)-(\d+)-of-(\d+)$/

/**
 * The checkpoint name of projector `base` on `shard`: `base` alone when unsharded (no shard, or one
 * of one), else `<base>-<i>-of-<n>`.
 * @throws Error when the shard is out of range (count < 1, or index outside 0..count-1).
 */
export function checkpointName(base: string, shard?: Shard): string {
  if (shard === undefined) return base
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    throw new Error(`projector shard ${String(shard.index)} of ${String(shard.count)} is out of range`)
  }
  return shard.count === 1 ? base : `${base}-${String(shard.index)}-of-${String(shard.count)}`
}

/** The base name and shard of a checkpoint name (checkpointName's inverse); no shard for an unsharded projector. */
export function parseCheckpointName(name: string): { base: string; shard?: Shard } {
  const m = SHARDED.exec(name)
  if (m === null) return { base: name }
  return { base: m[1] ?? name, shard: { index: Number(m[2]), count: Number(m[3]) } }
}

/** Whether checkpoint `name` belongs to a projector of `base` that keeps `datasetId`. */
export function keepsDataset(name: string, base: string, datasetId: string): boolean {
  if (name === base) return true
  const { base: nameBase, shard } = parseCheckpointName(name)
  if (nameBase !== base || shard === undefined || shard.count < 1) return false
  return datasetHash(datasetId) % shard.count === shard.index
}

/**
 * The position up to which the read models of projector `base` hold `datasetId`'s records: the
 * highest checkpoint, shards included, among those that keep the dataset; null when none has
 * applied anything.
 */
export function datasetCheckpoint(projections: readonly ProjectionState[], base: string, datasetId: string): number | null {
  let best: number | null = null
  for (const p of projections) {
    if (p.position === null || !keepsDataset(p.projection, base, datasetId)) continue
    if (best === null || p.position > best) best = p.position
  }
  return best
}
