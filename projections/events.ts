/**
 * Projection of the `events` and `event_objects` read models (README § Read models): one row per
 * event, and one per (event, object, qualifier) of its OCEL 2.0 E2O relations, with the object's
 * type and id and the event's time. One projection for both: the embedded store keeps an event's
 * E2O rows as a range that its event row points to.
 */
import type { EventsSlice } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { unreachable } from './unreachable.js'

/** Folds one record into the events' slice. */
function evolve(slice: EventsSlice, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded': {
      const e = record.data
      slice.events.push({
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
      for (const o of e.objects) {
        slice.eventObjects.push({
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
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const events: Projection<'events'> = {
  name: 'events',
  version: 1,
  readModels: ['events', 'event_objects'],
  emptySlice: () => ({ events: [], eventObjects: [] }),
  evolve,
}
