/**
 * Projection of the `event_types` read model (README § Read models): each event's type, when it was
 * first and last received, and how many events it has.
 */
import type { ChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { touchType } from './type-changes.js'
import { unreachable } from './unreachable.js'

/** Folds one record into `cs.eventTypes`. */
export function evolve(cs: ChangeSet, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded':
      touchType(cs.eventTypes, record.datasetId, record.data.event_type, record.data.received_at, record.position, 1)
      return
    case 'ObjectUpserted':
      return
    default:
      unreachable(record)
  }
}
