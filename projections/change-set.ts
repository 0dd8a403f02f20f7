/**
 * The pure step of every projection: a run of records (in log order) → the read-model changes
 * they imply (README § Read models). No I/O here; the read-model store applies a ChangeSet
 * and moves the checkpoint in one step.
 *
 * Idempotency contract for stores: every aggregated change carries `minPosition`/`maxPosition`,
 * the range of records that produced it, and the positions of its non-idempotent parts (counts
 * in `addedAt`, attribute values in `deltas`). A store applies the whole change when the stored
 * row's `position` is below `minPosition`, nothing when it is at or above `maxPosition`, and in
 * between only the parts after the row's position (a replay that straddles a row: a changed shard
 * count, two checkpoints over one store); then it sets the row's `position` to `maxPosition`.
 * Times (min/max) and event-type sets are idempotent and always applied whole. Rows keyed by a
 * position (events, E2O, object changes) are inserted once and ignored when present.
 */
import type { StoredRecord } from '../src/schemas/records.js'
import type { EventObjectRow, EventRow, ObjectChangeRow } from '../src/schemas/read-models.js'
import { mergeProperties } from '../src/core/merge.js'
import type { Properties } from '../src/schemas/api.js'

/** An event or object type seen in this run of records. */
export interface TypeChange {
  datasetId: string
  name: string
  firstSeenAt: string
  lastSeenAt: string
  /** Events of this type in the run (always 0 for object types: their count is distinct objects). */
  added: number
  /** The position of each unit of `added`, ascending. */
  addedAt: number[]
  minPosition: number
  maxPosition: number
}

/** An object touched in this run: attributes set (merged in log order) and when. */
export interface ObjectChange {
  datasetId: string
  objectId: string
  type: string
  externalId: string
  /** Per top-level key, the last value this run set. Merge these over the stored attributes. */
  properties: Properties
  /** The attribute values each record set, in log order: `properties` is their merge. */
  deltas: { position: number; properties: Properties }[]
  firstSeenAt: string
  lastSeenAt: string
  minPosition: number
  maxPosition: number
}

export interface ChangeSet {
  eventTypes: Map<string, TypeChange>
  objectTypes: Map<string, TypeChange>
  objects: Map<string, ObjectChange>
  objectChanges: ObjectChangeRow[]
  events: EventRow[]
  eventObjects: EventObjectRow[]
  /** Records folded in; the store's checkpoint moves to the last one's position. */
  recordCount: number
}

export function emptyChangeSet(): ChangeSet {
  return {
    eventTypes: new Map(),
    objectTypes: new Map(),
    objects: new Map(),
    objectChanges: [],
    events: [],
    eventObjects: [],
    recordCount: 0,
  }
}

const SEP = '\u0000'

function touchType(map: Map<string, TypeChange>, datasetId: string, name: string, at: string, position: number, added: number): void {
  const key = datasetId + SEP + name
  const found = map.get(key)
  if (found === undefined) {
    map.set(key, {
      datasetId,
      name,
      firstSeenAt: at,
      lastSeenAt: at,
      added,
      addedAt: added > 0 ? [position] : [],
      minPosition: position,
      maxPosition: position,
    })
    return
  }
  if (at < found.firstSeenAt) found.firstSeenAt = at
  if (at > found.lastSeenAt) found.lastSeenAt = at
  found.added += added
  if (added > 0) found.addedAt.push(position)
  found.maxPosition = position
}

function touchObject(
  cs: ChangeSet,
  datasetId: string,
  objectId: string,
  type: string,
  externalId: string,
  properties: Properties | undefined,
  at: string,
  position: number,
): void {
  const key = datasetId + SEP + objectId
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

function addObjectChange(cs: ChangeSet, datasetId: string, objectId: string, position: number, time: string, attributes: Properties): void {
  if (Object.keys(attributes).length === 0) return
  const last = cs.objectChanges[cs.objectChanges.length - 1]
  // One event may name the same object twice; its attribute changes share one position.
  if (last !== undefined && last.position === position && last.object_id === objectId && last.dataset_id === datasetId) {
    last.attributes = mergeProperties(last.attributes, attributes)
    return
  }
  cs.objectChanges.push({ dataset_id: datasetId, object_id: objectId, position, time, attributes: { ...attributes } })
}

/**
 * Folds records (ascending `position`) into `cs` and returns it.
 * @param records records in log order; unknown record types or versions throw, since skipping
 *   one would silently corrupt the read models.
 */
export function foldRecords(records: readonly StoredRecord[], cs: ChangeSet = emptyChangeSet()): ChangeSet {
  for (const record of records) {
    const { position, datasetId } = record
    if (record.type === 'EventRecorded' && record.version === 1) {
      const e = record.data
      touchType(cs.eventTypes, datasetId, e.event_type, e.received_at, position, 1)
      cs.events.push({
        dataset_id: datasetId,
        event_id: e.event_id,
        event_type: e.event_type,
        timestamp: e.timestamp,
        end_timestamp: e.end_timestamp ?? null,
        properties: e.properties,
        objects_count: e.objects.length,
        received_at: e.received_at,
        position,
      })
      for (const o of e.objects) {
        touchType(cs.objectTypes, datasetId, o.type, e.received_at, position, 0)
        touchObject(cs, datasetId, o.object_id, o.type, o.id, o.properties, e.received_at, position)
        if (o.properties !== undefined) addObjectChange(cs, datasetId, o.object_id, position, e.timestamp, o.properties)
        cs.eventObjects.push({
          dataset_id: datasetId,
          event_id: e.event_id,
          object_id: o.object_id,
          qualifier: o.qualifier ?? null,
          object_type: o.type,
          external_id: o.id,
          event_time: e.timestamp,
          position,
        })
      }
    } else if (record.type === 'ObjectUpserted' && record.version === 1) {
      const u = record.data
      touchType(cs.objectTypes, datasetId, u.type, u.received_at, position, 0)
      touchObject(cs, datasetId, u.object_id, u.type, u.id, u.properties, u.received_at, position)
      addObjectChange(cs, datasetId, u.object_id, position, u.received_at, u.properties)
    } else {
      throw new Error(`projection: unknown record ${record.type} v${String(record.version)} at position ${String(position)}`)
    }
    cs.recordCount += 1
  }
  return cs
}
