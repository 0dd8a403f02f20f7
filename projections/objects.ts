/**
 * Projection of the `objects` and `object_changes` read models (README § Read models): each object
 * with its attributes merged in log order, and the attribute values each record set (OCEL 2.0
 * attribute history; `time` is the event's timestamp for attributes sent inside an event, the
 * upsert's `time` for an upsert: its `timestamp`, else its receipt time). The targets of an upsert's
 * O2O relationships are objects too, created on first reference.
 */
import { mergeProperties } from '../src/core/merge.js'
import { hasNoOwnKeys } from '../src/core/own-keys.js'
import { KEY_SEP, type ObjectsSlice } from '../src/core/read-model-changes.js'
import type { Properties } from '../src/schemas/api.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { unreachable } from './unreachable.js'

function touchObject(
  cs: ObjectsSlice,
  datasetId: string,
  objectId: string,
  type: string,
  externalId: string,
  properties: Properties | undefined,
  at: string,
  position: number,
): void {
  const key = datasetId + KEY_SEP + objectId
  const found = cs.objects.get(key)
  if (found === undefined) {
    cs.objects.set(key, {
      datasetId,
      objectId,
      type,
      externalId,
      properties: properties === undefined ? {} : { ...properties },
      deltas: properties === undefined ? [] : [{ position, properties }],
      firstSeenAt: at,
      lastSeenAt: at,
      minPosition: position,
      maxPosition: position,
    })
    return
  }
  if (properties !== undefined) {
    found.properties = mergeProperties(found.properties, properties)
    found.deltas.push({ position, properties })
  }
  if (at > found.lastSeenAt) found.lastSeenAt = at
  found.maxPosition = position
}

function addObjectChange(cs: ObjectsSlice, datasetId: string, objectId: string, position: number, time: string, attributes: Properties): void {
  if (hasNoOwnKeys(attributes)) return
  const last = cs.changes[cs.changes.length - 1]
  // One event may name the same object twice; its attribute changes share one position.
  if (last !== undefined && last.position === position && last.object_id === objectId && last.dataset_id === datasetId) {
    last.attributes = mergeProperties(last.attributes, attributes)
    return
  }
  cs.changes.push({ dataset_id: datasetId, object_id: objectId, position, time, attributes: { ...attributes } })
}

/** Folds one record into the objects' slice (`objects` and `changes`). */
function evolve(cs: ObjectsSlice, record: StoredRecord): void {
  const { position, datasetId } = record
  switch (record.type) {
    case 'EventRecorded': {
      const e = record.data
      for (const o of e.objects) {
        touchObject(cs, datasetId, o.object_id, o.type, o.id, o.properties, e.received_at, position)
        if (o.properties !== undefined) addObjectChange(cs, datasetId, o.object_id, position, e.timestamp, o.properties)
      }
      return
    }
    case 'ObjectUpserted': {
      const u = record.data
      touchObject(cs, datasetId, u.object_id, u.type, u.id, u.properties, u.received_at, position)
      addObjectChange(cs, datasetId, u.object_id, position, u.time, u.properties)
      // O2O targets exist from their first reference (docs/api.md#auto-creation), without attributes.
      for (const r of u.relationships) touchObject(cs, datasetId, r.object_id, r.type, r.id, undefined, u.received_at, position)
      return
    }
    case 'TypesDeclared':
      return
    default:
      unreachable(record)
  }
}

export const objects: Projection<'objects'> = {
  name: 'objects',
  version: 1,
  readModels: ['objects', 'object_changes'],
  emptySlice: () => ({ objects: new Map(), changes: [] }),
  evolve,
}
