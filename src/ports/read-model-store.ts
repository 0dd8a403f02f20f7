/**
 * Port: the read-model store, the projector's writer port (README § Read models). Readers use
 * the query port (read-model-query.ts), which filters and pages in the engine. Adapters: SQLite
 * (embedded default), MongoDB (production). Contract tests: test/contract/read-model-store.contract.ts.
 */
import type { ChangeSet } from '../core/read-model-changes.js'
import type { ProjectionState, ProjectionStop } from '../schemas/projections.js'

export interface ReadModelStore {
  /** The last position that projector `name` applied, or null when it has applied nothing. */
  checkpoint(name: string): Promise<number | null>

  /**
   * Applies `changes` (folded from the records after `expected` up to and including `to`) and moves
   * the checkpoint of projector `name` from `expected` to `to`. Compare-and-set: when the stored
   * checkpoint is not `expected`, nothing is applied and CheckpointConflictError is thrown.
   * Applying changes that were already applied leaves the read models unchanged (see src/core/read-model-changes.ts).
   */
  apply(name: string, expected: number | null, to: number, changes: ChangeSet): Promise<void>

  /** Drops every read model row, every checkpoint and every stop, for a rebuild from the log. */
  reset(): Promise<void>

  /**
   * The projector has applied everything the log held a moment ago (the end of `catchUp`, a short
   * batch while following the log). A store may finish work it deferred while far behind; the
   * SQLite store makes the query indexes that a rebuild left out (read-models-database.ts). Cheap
   * when there is nothing to do. Optional: stores that defer nothing leave it out.
   */
  atHead?(): Promise<void>

  /** Every projection with a checkpoint or a stop, ordered by name: what `ocelog status` and `/metrics` show. */
  projections(): Promise<ProjectionState[]>

  /**
   * Records that projection `stop.projection` stopped on a record (ProjectionStop), replacing an
   * earlier stop; `clearStop` removes it when a projector with that name starts again.
   */
  recordStop(stop: ProjectionStop): Promise<void>
  clearStop(name: string): Promise<void>

  close(): Promise<void>
}

/** Another projector moved the checkpoint first; the caller re-reads the checkpoint and retries. */
export { CheckpointConflictError } from '../core/errors.js'
