/**
 * The objects each record names (OCEL 2.0 object identity, README § Read models): the objects of an
 * event, an upserted object, and an upsert's O2O targets (objects from their first reference).
 * Folded once per run in shared code, for every store's identity rows (NamedObject in
 * src/core/read-model-changes.ts), whichever projections take the record.
 */
import type { NamedObject } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { unreachable } from './unreachable.js'

function name(
  into: Map<string, NamedObject>,
  datasetId: string,
  objectId: string,
  type: string,
  externalId: string,
  at: string,
  position: number,
  index: number,
): void {
  if (!into.has(objectId)) into.set(objectId, { datasetId, objectId, type, externalId, firstSeenAt: at, position, index })
}

/**
 * Adds the objects `record` names to `into` (by object id: UUIDv5 of dataset, type and id, so unique
 * across datasets), keeping the first record's position and time for each, and the object's index in
 * that record: an event's objects in their order (0 to 49), an upsert's object 0 and its O2O targets
 * 1 to 100. The index of an object a record names twice is its first.
 */
export function nameObjects(into: Map<string, NamedObject>, record: StoredRecord): void {
  const { datasetId, position } = record
  switch (record.type) {
    case 'EventRecorded':
      record.data.objects.forEach((o, i) => {
        name(into, datasetId, o.object_id, o.type, o.id, record.data.received_at, position, i)
      })
      return
    case 'ObjectUpserted': {
      const u = record.data
      name(into, datasetId, u.object_id, u.type, u.id, u.received_at, position, 0)
      u.relationships.forEach((r, i) => {
        name(into, datasetId, r.object_id, r.type, r.id, u.received_at, position, i + 1)
      })
      return
    }
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}
