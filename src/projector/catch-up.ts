/**
 * Bringing the read models up to date from a CLI command before it reads them (`ocelog export`,
 * `ocelog digest`, `ocelog mcp`): on the embedded default, where no separate projector process
 * keeps them, and on PostgreSQL, where this process applies the runners nobody leases and waits
 * for the holders of the others.
 */
import { lowestCheckpoint, parseCheckpointName, projectorCheckpoints, READ_MODELS_PROJECTION } from './checkpoints.js'
import type { Leases } from '../ports/leases.js'
import { leaseName, RUNNER_NAMES } from './runners.js'
import { Projector } from './runner.js'
import type { EventLog } from '../ports/event-log.js'
import { projectorOptions } from './options.js'
import { CheckpointConflictError, type ReadModelStore } from '../ports/read-model-store.js'

/** While another projector holds the work, how often the checkpoint is looked at, ms, and how long without progress before giving up. */
const WAIT_MS = 100
const STALLED_MAX_MS = 10_000

/**
 * Applies every record of the log that the read models lack, up to the log's head when called.
 * A projector elsewhere (a running `serve`'s worker) may be applying the same records: after a
 * moved checkpoint this waits for that projector to reach the head rather than race it, and takes
 * the work back when the checkpoint stops moving.
 * @returns the position the read models reached.
 * @throws CheckpointConflictError when the checkpoint keeps moving under this projector's feet and
 *   yet stays short of the head for STALLED_MAX_MS; the log's and the store's errors.
 */
export async function catchUpReadModels(backends: { log: EventLog; readModels: ReadModelStore; leases?: Leases }): Promise<number> {
  if (backends.leases !== undefined) return catchUpUnderLeases({ ...backends, leases: backends.leases })
  const head = (await backends.log.lastPosition()) ?? 0
  const projector = new Projector(backends.log, backends.readModels, projectorOptions('catch-up', { name: READ_MODELS_PROJECTION }))
  const names = projectorCheckpoints(READ_MODELS_PROJECTION)
  const readModelsAt = async () => lowestCheckpoint(await backends.readModels.projections(), names)
  let last = await readModelsAt()
  let stalledMs = 0
  for (;;) {
    try {
      await projector.catchUp()
      return projector.position ?? 0
    } catch (error) {
      if (!(error instanceof CheckpointConflictError)) throw error
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS))
      const at = await readModelsAt()
      if ((at ?? 0) >= head) return at ?? 0
      stalledMs = at === last ? stalledMs + WAIT_MS : 0
      last = at
      if (stalledMs >= STALLED_MAX_MS) throw error
    }
  }
}

/**
 * catchUpReadModels where projectors run under leases (docs/architecture.md#projection-runners-and-leases):
 * each runner whose lease is free is caught up here, holding its lease; then this waits until every
 * checkpoint reaches the log's head as it was at the call, which the holders of the other leases
 * bring about. Sharded deployments (checkpoints `<projection>-<i>-of-<n>`) are only waited for.
 * @returns the position the read models reached.
 * @throws Error when the read models stay short of the head with no progress for STALLED_MAX_MS
 *   (no projector runs for a runner that another process leases and does not apply).
 */
async function catchUpUnderLeases(backends: { log: EventLog; readModels: ReadModelStore; leases: Leases }): Promise<number> {
  const head = (await backends.log.lastPosition()) ?? 0
  const sharded = (await backends.readModels.projections()).some((p) => parseCheckpointName(p.projection).shard !== undefined)
  if (!sharded) {
    for (const runner of RUNNER_NAMES) {
      const lease = await backends.leases.tryAcquire(leaseName(runner))
      if (lease === null) continue
      try {
        await new Projector(backends.log, backends.readModels, projectorOptions('catch-up', { name: READ_MODELS_PROJECTION, runner })).catchUp()
      } finally {
        await lease.release()
      }
    }
  }
  const names = projectorCheckpoints(READ_MODELS_PROJECTION)
  let last: number | null = null
  let stalledMs = 0
  for (;;) {
    const states = await backends.readModels.projections()
    // Per projection, its furthest checkpoint (unsharded, or the lowest of its shards' when sharded).
    const at = sharded ? lowestOfShards(states, names) : lowestCheckpoint(states, names)
    if ((at ?? 0) >= head) return at ?? 0
    stalledMs = at === last ? stalledMs + WAIT_MS : 0
    last = at
    if (stalledMs >= STALLED_MAX_MS) {
      throw new Error(
        `the read models are at position ${String(at ?? 'none')} of the log's ${String(head)} and have not moved for ${String(STALLED_MAX_MS / 1000)} s: is an ocelog project process running?`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS))
  }
}

/** The lowest checkpoint over every shard of every projection in `names` (null: one has applied nothing). */
function lowestOfShards(states: readonly { projection: string; position: number | null }[], names: readonly string[]): number | null {
  const mine = states.filter((s) => names.includes(parseCheckpointName(s.projection).base))
  if (mine.length === 0 || mine.some((s) => s.position === null)) return null
  return Math.min(...mine.map((s) => s.position ?? 0))
}
