/**
 * Projection of the `event_objects` read model (OCEL 2.0 E2O, README § Read models): one row per
 * (event, object, qualifier), with the object's type and id and the event's time.
 */
import type { ChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { unreachable } from './unreachable.js'

/** Folds one record into `cs.eventObjects`. */
export function evolve(cs: ChangeSet, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded': {
      const e = record.data
      for (const o of e.objects) {
        cs.eventObjects.push({
          dataset_id: record.datasetId,
          event_id: e.event_id,
          object_id: o.object_id,
          qualifier: o.qualifier ?? null,
          object_type: o.type,
          external_id: o.id,
          event_time: e.timestamp,
          position: record.position,
        })
      }
      return
    }
    case 'ObjectUpserted':
      return
    default:
      unreachable(record)
  }
}
