/**
 * Projection of the `object_types` read model (README § Read models): each object type, when it
 * was first and last seen (in an event, an upsert, or as an upsert's O2O target), and its count of
 * distinct objects, which every store adds the same way from the objects' identities
 * (countNewObjects in src/core/read-model-changes.ts).
 */
import type { TypeChanges } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { touchType } from './type-changes.js'
import { unreachable } from './unreachable.js'

/** Folds one record into the object types' slice. */
function evolve(types: TypeChanges, record: StoredRecord): void {
  const { datasetId, position } = record
  switch (record.type) {
    case 'EventRecorded':
      for (const o of record.data.objects) touchType(types, datasetId, o.type, record.data.received_at, position, 0)
      return
    case 'ObjectUpserted': {
      const u = record.data
      touchType(types, datasetId, u.type, u.received_at, position, 0)
      for (const r of u.relationships) touchType(types, datasetId, r.type, u.received_at, position, 0)
      return
    }
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const objectTypes: Projection<'object_types'> = { name: 'object_types', version: 1, readModels: ['object_types'], emptySlice: () => new Map(), evolve }
