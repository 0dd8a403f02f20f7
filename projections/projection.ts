/**
 * What a projection declares (README § Read models; as in Emmett's projections): its name, the
 * version of its code, the read models it keeps, and its pure fold. A store keeps one checkpoint
 * per projection (and shard), stored with the version: when the code's version differs from the
 * stored one, the projector clears that projection's read models alone and rebuilds them from the
 * log, while the others resume where they were. Raise `version` whenever `evolve` or the rows it
 * writes change meaning.
 */
import type { ProjectionName, Slices } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'

export interface Projection<K extends ProjectionName> {
  name: K
  /** The code's version (an integer from 1), stored with each checkpoint of this projection. */
  version: number
  /** The read models it keeps (README § Read models), for docs and logs. */
  readModels: readonly string[]
  /** A slice that holds nothing yet. */
  emptySlice(): Slices[K]
  /**
   * Folds one record into `slice`, an exhaustive switch over record types (see unreachable.ts).
   * Records arrive in log order, each once per slice.
   */
  evolve(slice: Slices[K], record: StoredRecord): void
}
