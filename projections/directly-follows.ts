/**
 * Projection of the directly-follows read model (docs/process-map.md#the-directly-follows-read-model):
 * each event with its distinct objects (E2O pairs, qualifiers merged) and times. The store links
 * each (object, event) step into its object's trace and keeps the couples' aggregates, by the
 * rules of src/core/directly-follows.ts, which need the stored traces; this fold only lists the
 * steps a run of records adds.
 */
import type { DirectlyFollowsEvent } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { unreachable } from './unreachable.js'

/** Folds one record into the slice: an event's steps; upserts add none (an object without events is in no trace). */
function evolve(slice: DirectlyFollowsEvent[], record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded': {
      const e = record.data
      const seen = new Set<string>()
      const objects: DirectlyFollowsEvent['objects'] = []
      for (const o of e.objects) {
        if (seen.has(o.object_id)) continue
        seen.add(o.object_id)
        objects.push({ objectId: o.object_id, type: o.type })
      }
      slice.push({
        datasetId: record.datasetId,
        position: record.position,
        activity: e.event_type,
        time: Date.parse(e.timestamp),
        endTime: e.end_timestamp === undefined ? null : Date.parse(e.end_timestamp),
        objects,
      })
      return
    }
    case 'ObjectUpserted':
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const directlyFollows: Projection<'directly_follows'> = {
  name: 'directly_follows',
  version: 2,
  readModels: ['df_steps', 'df_aggregates', 'df_memberships'],
  emptySlice: () => [],
  evolve,
}
