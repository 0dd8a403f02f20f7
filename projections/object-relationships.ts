/**
 * Projection of the `object_relationships` read model (OCEL 2.0 O2O, README § Read models): one
 * row per (source object, target object, qualifier) that an object upsert asserted, with the time
 * and position of the first record that asserted it. Asserting it again changes nothing.
 */
import type { ObjectRelationshipRow } from '../src/schemas/read-models.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { unreachable } from './unreachable.js'

/** Folds one record into the O2O slice. */
function evolve(rows: ObjectRelationshipRow[], record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded':
      return
    case 'ObjectUpserted': {
      const u = record.data
      for (const r of u.relationships) {
        rows.push({
          dataset_id: record.datasetId,
          object_id: u.object_id,
          target_object_id: r.object_id,
          qualifier: r.qualifier ?? null,
          target_type: r.type,
          target_external_id: r.id,
          time: u.time,
          position: record.position,
        })
      }
      return
    }
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const objectRelationships: Projection<'object_relationships'> = {
  name: 'object_relationships',
  version: 1,
  readModels: ['object_relationships'],
  emptySlice: () => [],
  evolve,
}
