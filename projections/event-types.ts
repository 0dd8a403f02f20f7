/**
 * Projection of the `event_types` read model (README § Read models): each event's type, when it was
 * first and last received, and how many events it has.
 */
import type { TypeChanges } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { touchType } from './type-changes.js'
import { unreachable } from './unreachable.js'

/** Folds one record into the event types' slice. */
function evolve(types: TypeChanges, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded':
      touchType(types, record.datasetId, record.data.event_type, record.data.received_at, record.position, 1)
      return
    case 'ObjectUpserted':
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const eventTypes: Projection<'event_types'> = { name: 'event_types', version: 1, readModels: ['event_types'], emptySlice: () => new Map(), evolve }
