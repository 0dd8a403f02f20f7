/**
 * The names of checkpoints, built and parsed in one place (README § Read models: checkpoints).
 * A projector runs every projection of projections/registry.ts and keeps one checkpoint per
 * projection: named as the projection (`events`, `objects`, …) for the service's projector
 * (READ_MODELS_PROJECTION), `<projector>.<projection>` for a projector given another name. Shard i
 * of n adds `-<i>-of-<n>` and keeps the datasets whose hash mod n is i. Any checkpoint of a
 * projection that keeps a dataset may have applied its records, so a projection holds a dataset's
 * records up to the highest of them, and the read models up to the lowest over their projections.
 */
import { PROJECTION_NAMES, type ProjectionName } from '../core/read-model-changes.js'
import { SHARD_SUFFIX } from '../core/runner-groups.js'
import type { ProjectionState } from '../schemas/projections.js'
import { datasetHash, type Shard } from './shards.js'

export type { Shard }

/** The name of the projector that keeps the service's read models (Projector's default), in logs and stops; shards are `read-models-<i>-of-<n>`. */
export const READ_MODELS_PROJECTION = 'read-models'

/**
 * The name of `base` on `shard`: `base` alone when unsharded (no shard, or one of one), else
 * `<base>-<i>-of-<n>`.
 * @throws Error when the shard is out of range (count < 1, or index outside 0..count-1).
 */
export function checkpointName(base: string, shard?: Shard): string {
  if (shard === undefined) return base
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    throw new Error(`projector shard ${String(shard.index)} of ${String(shard.count)} is out of range`)
  }
  return shard.count === 1 ? base : `${base}-${String(shard.index)}-of-${String(shard.count)}`
}

/** The unsharded checkpoint name of `projection` in projector `projector`. */
export function projectionBase(projector: string, projection: ProjectionName): string {
  return projector === READ_MODELS_PROJECTION ? projection : `${projector}.${projection}`
}

/** The checkpoint name of `projection` in projector `projector` on `shard` (see checkpointName). */
export function projectionCheckpoint(projector: string, projection: ProjectionName, shard?: Shard): string {
  return checkpointName(projectionBase(projector, projection), shard)
}

/** The unsharded checkpoint names of every projection of `projector`: what `ocelog status` and `/metrics` show before any checkpoint. */
export function projectorCheckpoints(projector: string = READ_MODELS_PROJECTION): string[] {
  return PROJECTION_NAMES.map((p) => projectionBase(projector, p))
}

/** The lowest position among checkpoints `names` in `projections`; null when one of them has none. */
export function lowestCheckpoint(projections: readonly ProjectionState[], names: readonly string[]): number | null {
  let lowest: number | null = null
  for (const name of names) {
    const at = projections.find((p) => p.projection === name)?.position ?? null
    if (at === null) return null
    if (lowest === null || at < lowest) lowest = at
  }
  return lowest
}

/** The base name and shard of a checkpoint name (checkpointName's inverse); no shard for an unsharded one. */
export function parseCheckpointName(name: string): { base: string; shard?: Shard } {
  const m = SHARD_SUFFIX.exec(name)
  if (m === null) return { base: name }
  return { base: m[1] ?? name, shard: { index: Number(m[2]), count: Number(m[3]) } }
}

/** Whether checkpoint `name` is `base` or one of its shards that keeps `datasetId`. */
export function keepsDataset(name: string, base: string, datasetId: string): boolean {
  if (name === base) return true
  const { base: nameBase, shard } = parseCheckpointName(name)
  if (nameBase !== base || shard === undefined || shard.count < 1) return false
  return datasetHash(datasetId) % shard.count === shard.index
}

/**
 * The position up to which the read models of projector `projector` hold `datasetId`'s records:
 * per projection, the highest checkpoint (shards included) among those that keep the dataset; then
 * the lowest over the projections. Null when some projection has applied nothing of it.
 */
export function datasetCheckpoint(projections: readonly ProjectionState[], datasetId: string, projector: string = READ_MODELS_PROJECTION): number | null {
  let lowest: number | null = null
  for (const projection of PROJECTION_NAMES) {
    const base = projectionBase(projector, projection)
    let best: number | null = null
    for (const p of projections) {
      if (p.position === null || !keepsDataset(p.projection, base, datasetId)) continue
      if (best === null || p.position > best) best = p.position
    }
    if (best === null) return null
    if (lowest === null || best < lowest) lowest = best
  }
  return lowest
}
