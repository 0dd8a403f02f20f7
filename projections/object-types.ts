/**
 * Projection of the `object_types` read model (README § Read models): each object type, when it
 * was first and last seen (in an event, an upsert, or as an upsert's O2O target), and its count of
 * distinct objects: the slice keeps the objects it saw, and every store counts the new ones the
 * same way (countNewObjects in src/core/read-model-changes.ts).
 */
import { KEY_SEP, type ObjectTypesSlice } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { touchType } from './type-changes.js'
import { unreachable } from './unreachable.js'

function see(slice: ObjectTypesSlice, datasetId: string, objectId: string, type: string, at: string, position: number): void {
  touchType(slice.types, datasetId, type, at, position, 0)
  const key = datasetId + KEY_SEP + objectId
  if (!slice.objects.has(key)) slice.objects.set(key, { datasetId, objectId, type, position })
}

/** Folds one record into the object types' slice. */
function evolve(slice: ObjectTypesSlice, record: StoredRecord): void {
  const { datasetId, position } = record
  switch (record.type) {
    case 'EventRecorded':
      for (const o of record.data.objects) see(slice, datasetId, o.object_id, o.type, record.data.received_at, position)
      return
    case 'ObjectUpserted': {
      const u = record.data
      see(slice, datasetId, u.object_id, u.type, u.received_at, position)
      for (const r of u.relationships) see(slice, datasetId, r.object_id, r.type, u.received_at, position)
      return
    }
    default:
      unreachable(record)
  }
}

export const objectTypes: Projection<'object_types'> = {
  name: 'object_types',
  version: 1,
  readModels: ['object_types'],
  emptySlice: () => ({ types: new Map(), objects: new Map() }),
  evolve,
}
