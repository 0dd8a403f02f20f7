/**
 * Bringing the read models up to date from a CLI command on the embedded default, where no
 * separate projector process keeps them (`ocelog export`, `ocelog mcp`).
 */
import { READ_MODELS_PROJECTION } from '../../projections/checkpoints.js'
import { Projector } from '../projector.js'
import type { Backends } from '../composition.js'
import { CheckpointConflictError } from '../ports/read-model-store.js'

/** The projector whose read models the CLI reads (the default name of Projector). */
export const READ_MODELS_PROJECTOR = READ_MODELS_PROJECTION

/**
 * Applies every record of the log that the read models lack; a projector elsewhere (a running
 * `serve`) may move the checkpoint first, then this retries from it (at most 10 times).
 * @returns the position reached.
 * @throws CheckpointConflictError after 10 conflicts in a row; the log's and the store's errors.
 */
export async function catchUpReadModels(backends: Pick<Backends, 'log' | 'readModels'>): Promise<number> {
  const projector = new Projector(backends.log, backends.readModels, { name: READ_MODELS_PROJECTOR })
  for (let attempt = 1; ; attempt++) {
    try {
      return await projector.catchUp()
    } catch (error) {
      if (!(error instanceof CheckpointConflictError) || attempt >= 10) throw error
    }
  }
}
