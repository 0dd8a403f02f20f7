/**
 * Projection of the `events` read model (README § Read models): one row per event.
 */
import type { ChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { unreachable } from './unreachable.js'

/** Folds one record into `cs.events`. */
export function evolve(cs: ChangeSet, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded': {
      const e = record.data
      cs.events.push({
        dataset_id: record.datasetId,
        event_id: e.event_id,
        event_type: e.event_type,
        timestamp: e.timestamp,
        end_timestamp: e.end_timestamp ?? null,
        properties: e.properties,
        objects_count: e.objects.length,
        received_at: e.received_at,
        position: record.position,
      })
      return
    }
    case 'ObjectUpserted':
      return
    default:
      unreachable(record)
  }
}
