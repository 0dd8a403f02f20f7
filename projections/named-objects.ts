/**
 * The objects each record names (OCEL 2.0 object identity, README § Read models): the objects of an
 * event, an upserted object, and an upsert's O2O targets (objects from their first reference).
 * Folded once per run in shared code, for every store's identity rows (NamedObject in
 * src/core/read-model-changes.ts), whichever projections take the record.
 */
import type { NamedObject } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { unreachable } from './unreachable.js'

function name(into: Map<string, NamedObject>, datasetId: string, objectId: string, type: string, externalId: string, at: string, position: number): void {
  if (!into.has(objectId)) into.set(objectId, { datasetId, objectId, type, externalId, firstSeenAt: at, position })
}

/** Adds the objects `record` names to `into` (by object id: UUIDv5 of dataset, type and id, so unique across datasets), keeping the first record's position and time for each. */
export function nameObjects(into: Map<string, NamedObject>, record: StoredRecord): void {
  const { datasetId, position } = record
  switch (record.type) {
    case 'EventRecorded':
      for (const o of record.data.objects) name(into, datasetId, o.object_id, o.type, o.id, record.data.received_at, position)
      return
    case 'ObjectUpserted': {
      const u = record.data
      name(into, datasetId, u.object_id, u.type, u.id, u.received_at, position)
      for (const r of u.relationships) name(into, datasetId, r.object_id, r.type, r.id, u.received_at, position)
      return
    }
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}
