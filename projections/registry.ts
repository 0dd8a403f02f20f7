/**
 * The registry of projections (README § Read models), one module per read model, each a pure
 * `evolve(changes, record)` as in Emmett: adding a read model is one module, one line here, its
 * field in ChangeSet (src/core/read-model-changes.ts, the type the store's port names), and the
 * store's write of its changes. `foldRecords` runs a run of records, in log order, through every one.
 * This folder depends only on src/core and the record schemas.
 */
import { type ChangeSet, emptyChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { evolve as auditChain } from './audit-chain.js'
import { evolve as eventObjects } from './event-objects.js'
import { evolve as eventTypes } from './event-types.js'
import { evolve as events } from './events.js'
import { evolve as objectRelationships } from './object-relationships.js'
import { evolve as objectTypes } from './object-types.js'
import { evolve as objects } from './objects.js'

/** One projection: the read model(s) it keeps and its pure step. */
export interface Projection {
  readModels: readonly string[]
  evolve: (changes: ChangeSet, record: StoredRecord) => void
}

/** Every projection, in the order they fold a record. */
export const PROJECTIONS: readonly Projection[] = [
  { readModels: ['event_types'], evolve: eventTypes },
  { readModels: ['object_types'], evolve: objectTypes },
  { readModels: ['objects', 'object_changes'], evolve: objects },
  { readModels: ['events'], evolve: events },
  { readModels: ['event_objects'], evolve: eventObjects },
  { readModels: ['object_relationships'], evolve: objectRelationships },
  { readModels: ['audit_chain'], evolve: auditChain },
]

/**
 * Folds records (ascending `position`) through every projection into `cs` and returns it.
 * @param records records in log order, decoded by the one record decoder; a record type no
 *   projection knows throws (see unreachable.ts), since skipping one would silently corrupt the read models.
 */
export function foldRecords(records: readonly StoredRecord[], cs: ChangeSet = emptyChangeSet()): ChangeSet {
  for (const record of records) {
    for (const p of PROJECTIONS) p.evolve(cs, record)
    cs.recordCount += 1
  }
  return cs
}
