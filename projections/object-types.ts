/**
 * Projection of the `object_types` read model (README § Read models): each object type, when it
 * was first and last seen (in an event, an upsert, or as an upsert's O2O target); its count of distinct objects is kept by the
 * store from the objects it creates.
 */
import type { ChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { touchType } from './type-changes.js'
import { unreachable } from './unreachable.js'

/** Folds one record into `cs.objectTypes`. */
export function evolve(cs: ChangeSet, record: StoredRecord): void {
  switch (record.type) {
    case 'EventRecorded':
      for (const o of record.data.objects) touchType(cs.objectTypes, record.datasetId, o.type, record.data.received_at, record.position, 0)
      return
    case 'ObjectUpserted':
      touchType(cs.objectTypes, record.datasetId, record.data.type, record.data.received_at, record.position, 0)
      for (const r of record.data.relationships) touchType(cs.objectTypes, record.datasetId, r.type, record.data.received_at, record.position, 0)
      return
    default:
      unreachable(record)
  }
}
