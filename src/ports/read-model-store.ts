/**
 * Port: the read-model store, the projector's writer port (README § Read models). Readers use
 * the query port (read-model-query.ts), which filters and pages in the engine. Adapters: SQLite
 * (embedded default), MongoDB (production). Contract tests: test/contract/read-model-store.contract.ts.
 */
import type { ChangeBatch, ProjectionName } from '../core/read-model-changes.js'
import type { ProjectionState, ProjectionStop } from '../schemas/projections.js'

export interface ReadModelStore {
  /** The last position that checkpoint `name` (a projection's, or its shard's) applied, or null when it has applied nothing. */
  checkpoint(name: string): Promise<number | null>

  /**
   * Applies a batch atomically: each projection's slice (folded from the records after its own
   * checkpoint up to `batch.to`), the identities of the objects the batch names, and moves each of
   * those checkpoints from its `expected` to `batch.to`, storing the projection's version with it.
   * Compare-and-set: when any stored checkpoint is not its `expected`, nothing is applied and
   * CheckpointConflictError is thrown. Applying slices that were already applied leaves the read
   * models unchanged (the replay rule, src/core/read-model-changes.ts).
   */
  apply(batch: ChangeBatch): Promise<void>

  /**
   * Empties the read models of projection `projection` alone (the other projections' rows, and the
   * objects' identities, stay) and deletes the checkpoints and stops named in `checkpoints` (that
   * projection's, shards included): the projector then rebuilds it from the log. SQLite does it in
   * one transaction; MongoDB in bounded steps (mongodb-clear.ts), the checkpoints marked first and
   * deleted last, so an interrupted clear is cleared again and never taken for applied read models.
   */
  clearProjection(projection: ProjectionName, checkpoints: readonly string[]): Promise<void>

  /** Drops every read model row, every checkpoint and every stop, for a rebuild from the log. */
  reset(): Promise<void>

  /**
   * The projector has applied everything the log held a moment ago (the end of `catchUp`, a short
   * batch while following the log). A store may finish work it deferred while far behind; the
   * SQLite store makes the query indexes that a rebuild left out (read-models-database.ts). Cheap
   * when there is nothing to do. Optional: stores that defer nothing leave it out.
   */
  atHead?(): Promise<void>

  /** Every checkpoint or stop, ordered by name, with its projection's stored version: what `ocelog status` and `/metrics` show. */
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
