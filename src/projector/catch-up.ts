/**
 * Bringing the read models up to date from a CLI command on the embedded default, where no
 * separate projector process keeps them (`ocelog export`, `ocelog mcp`).
 */
import { lowestCheckpoint, projectorCheckpoints, READ_MODELS_PROJECTION } from './checkpoints.js'
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
export async function catchUpReadModels(backends: { log: EventLog; readModels: ReadModelStore }): Promise<number> {
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
