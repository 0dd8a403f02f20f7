/**
 * Pure part of the MongoDB read-model store: the collections, their indexes, and the bulkWrite
 * operations a ChangeSet turns into (README § Read models; src/core/read-model-changes.ts).
 *
 * Every write is an upsert whose filter is exactly the read model's key, backed by a unique index
 * (MongoDB's manual, upsert with a unique index: only then are concurrent upserts safe), with an update pipeline
 * whose effect is guarded by the stored `position`:
 * - aggregated rows (types, objects) change only when the stored `position` is below the
 *   change's `minPosition`, and then take `maxPosition`;
 * - rows keyed by a position (events, E2O, object changes) are written once: only a document the
 *   upsert has just created (one without a non-key field, see insertOnceUpdate) takes the row.
 * User data (names, ids, attribute keys and values) only ever appears inside `$literal`, so a value
 * such as "$price" is never read as a field path, and attribute keys that contain '.' or start
 * with '$' are stored as they are (MongoDB ≥ 5.0 stores such keys; `$mergeObjects` and `$literal`
 * handle them, where `$set: {"properties.<key>"}` would not).
 */
import type { AnyBulkWriteOperation, Document, Filter, IndexDescription } from 'mongodb'
import { type ChangeSet, KEY_SEP, type ObjectChange, objectChangeToApply, type TypeChange, typeChangeToApply } from '../../core/read-model-changes.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow, ObjectTypeRow } from '../../schemas/read-models.js'

/** Where each read model lives: one collection per read model of README § Read models. */
export const READ_MODEL_COLLECTIONS = {
  eventTypes: 'event_types',
  objectTypes: 'object_types',
  objects: 'objects',
  objectChanges: 'object_changes',
  events: 'events',
  eventObjects: 'event_objects',
  objectRelationships: 'object_relationships',
  auditChain: 'audit_chain',
  checkpoints: 'checkpoints',
} as const

/**
 * Collections of read models that are no longer kept, dropped at start: `object_links` held one
 * document per pair of objects that shared an event (k·(k−1)/2 per event with k objects); objects
 * that share events are now answered at query time from `event_objects`.
 */
export const RETIRED_COLLECTIONS = ['object_links'] as const

type CollectionName = (typeof READ_MODEL_COLLECTIONS)[keyof typeof READ_MODEL_COLLECTIONS]

/**
 * Indexes created at start. The first index of each collection is its read-model key (unique);
 * the others serve the reads' sort orders. Checkpoints are keyed by `_id` (the projector name).
 */
export const READ_MODEL_INDEXES: Record<Exclude<CollectionName, 'checkpoints'>, IndexDescription[]> = {
  event_types: [{ key: { dataset_id: 1, name: 1 }, unique: true, name: 'key' }],
  object_types: [{ key: { dataset_id: 1, name: 1 }, unique: true, name: 'key' }],
  audit_chain: [{ key: { dataset_id: 1, position: 1 }, unique: true, name: 'key' }],
  objects: [
    { key: { dataset_id: 1, object_id: 1 }, unique: true, name: 'key' },
    { key: { dataset_id: 1, type: 1, external_id: 1 }, unique: true, name: 'by_type_id' },
  ],
  object_changes: [{ key: { dataset_id: 1, object_id: 1, position: 1 }, unique: true, name: 'key' }],
  events: [
    { key: { dataset_id: 1, event_id: 1 }, unique: true, name: 'key' },
    { key: { dataset_id: 1, timestamp: 1, position: 1 }, name: 'by_time' },
  ],
  event_objects: [
    { key: { dataset_id: 1, event_id: 1, object_id: 1, qualifier: 1 }, unique: true, name: 'key' },
    { key: { dataset_id: 1, event_time: 1, position: 1, object_id: 1, qualifier: 1 }, name: 'by_time' },
  ],
  object_relationships: [
    { key: { dataset_id: 1, object_id: 1, target_object_id: 1, qualifier: 1 }, unique: true, name: 'key' },
    { key: { dataset_id: 1, target_object_id: 1 }, name: 'by_target' },
  ],
}

/** A constant in an aggregation expression, never interpreted (field paths, operators, dotted keys). */
export function lit(value: unknown): Document {
  return { $literal: value }
}

/**
 * An update pipeline that merges `fields` (field name → aggregation expression) into the document
 * only when its stored `position` is below `minPosition` (a missing document or position counts as
 * −1). Used with `upsert: true` on a unique-key filter: a new document gets the filter's fields plus
 * `fields`; an already-applied one is left exactly as it is. A replay that straddles a row is
 * reduced before it gets here (changesToApply: the replay rule), so its `minPosition` is then the
 * row's position + 1 and this guard applies the rest whole.
 */
export function guardedUpdate(minPosition: number, fields: Document): Document[] {
  return [
    {
      $replaceWith: {
        $cond: {
          if: { $lt: [{ $ifNull: ['$position', -1] }, minPosition] },
          // biome-ignore lint/suspicious/noThenProperty: the `then` of MongoDB's $cond operator
          then: { $mergeObjects: ['$$ROOT', fields] },
          else: '$$ROOT',
        },
      },
    },
  ]
}

/**
 * An update pipeline that sets `fields` only on a new document: one without `probe`, a field every
 * written document has and the upsert filter does not hold (the filter's equality fields, position
 * included, are already in a document the upsert creates, so `position` cannot tell).
 */
export function insertOnceUpdate(probe: string, fields: Document): Document[] {
  return [
    {
      $replaceWith: {
        $cond: {
          if: { $eq: [{ $type: `$${probe}` }, 'missing'] },
          // biome-ignore lint/suspicious/noThenProperty: the `then` of MongoDB's $cond operator
          then: { $mergeObjects: ['$$ROOT', fields] },
          else: '$$ROOT',
        },
      },
    },
  ]
}

/** Insert-once write of a row keyed by a position: every field as a literal, written only when the row is new. */
function insertOnce<T extends Document>(filter: Filter<T>, row: T, probe: keyof T & string): AnyBulkWriteOperation<T> {
  if (Object.hasOwn(filter, probe)) throw new Error(`insertOnce: probe ${probe} must not be part of the filter`)
  const fields: Document = {}
  for (const [name, value] of Object.entries(row)) fields[name] = lit(value)
  return { updateOne: { filter, update: insertOnceUpdate(probe, fields), upsert: true } }
}

/** event_types / object_types: count grows by the run's events (0 for object types), times widen. */
export function typeWrite(t: TypeChange): AnyBulkWriteOperation<EventTypeRow> {
  return {
    updateOne: {
      filter: { dataset_id: t.datasetId, name: t.name },
      update: guardedUpdate(t.minPosition, {
        source: lit('public_api'),
        first_seen_at: { $min: ['$first_seen_at', lit(t.firstSeenAt)] },
        last_seen_at: { $max: ['$last_seen_at', lit(t.lastSeenAt)] },
        count: { $add: [{ $ifNull: ['$count', 0] }, t.added] },
        position: t.maxPosition,
      }),
      upsert: true,
    },
  }
}

/**
 * objects: attributes merged per top-level key (src/core/merge.ts): `$mergeObjects` of the stored
 * attributes and the incoming ones, so an incoming key replaces its value (nested objects whole,
 * null stored as null) and keys not sent are kept.
 */
export function objectWrite(o: ObjectChange): AnyBulkWriteOperation<ObjectRow> {
  return {
    updateOne: {
      filter: { dataset_id: o.datasetId, object_id: o.objectId },
      update: guardedUpdate(o.minPosition, {
        type: { $ifNull: ['$type', lit(o.type)] },
        external_id: { $ifNull: ['$external_id', lit(o.externalId)] },
        properties: { $mergeObjects: [{ $ifNull: ['$properties', lit({})] }, lit(o.properties)] },
        created_at: { $ifNull: ['$created_at', lit(o.firstSeenAt)] },
        updated_at: lit(o.lastSeenAt),
        position: o.maxPosition,
      }),
      upsert: true,
    },
  }
}

export function eventWrite(e: EventRow): AnyBulkWriteOperation<EventRow> {
  return insertOnce<EventRow>({ dataset_id: e.dataset_id, event_id: e.event_id }, e, 'event_type')
}

export function eventObjectWrite(l: EventObjectRow): AnyBulkWriteOperation<EventObjectRow> {
  return insertOnce<EventObjectRow>({ dataset_id: l.dataset_id, event_id: l.event_id, object_id: l.object_id, qualifier: l.qualifier }, l, 'object_type')
}

export function objectChangeWrite(c: ObjectChangeRow): AnyBulkWriteOperation<ObjectChangeRow> {
  return insertOnce<ObjectChangeRow>({ dataset_id: c.dataset_id, object_id: c.object_id, position: c.position }, c, 'time')
}

/** O2O: inserted once per (object, target, qualifier); the first record that asserted it keeps its time and position. */
export function objectRelationshipWrite(r: ObjectRelationshipRow): AnyBulkWriteOperation<ObjectRelationshipRow> {
  return insertOnce<ObjectRelationshipRow>(
    { dataset_id: r.dataset_id, object_id: r.object_id, target_object_id: r.target_object_id, qualifier: r.qualifier },
    r,
    'position',
  )
}

/** The first row of each O2O key in `rows` (log order): one upsert per key in a bulkWrite. */
function firstPerKey(rows: readonly ObjectRelationshipRow[]): ObjectRelationshipRow[] {
  const seen = new Set<string>()
  return rows.filter((r) => {
    const key = JSON.stringify([r.dataset_id, r.object_id, r.target_object_id, r.qualifier])
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** The bulkWrite operations of one ChangeSet, per collection, in the order the store runs them. */
export interface ReadModelWrites {
  eventTypes: AnyBulkWriteOperation<EventTypeRow>[]
  objectTypes: AnyBulkWriteOperation<ObjectTypeRow>[]
  objects: AnyBulkWriteOperation<ObjectRow>[]
  /** The (dataset, object type) of each entry of `objects`, by index: counts follow new objects. */
  objectTypeOf: { datasetId: string; type: string }[]
  objectChanges: AnyBulkWriteOperation<ObjectChangeRow>[]
  events: AnyBulkWriteOperation<EventRow>[]
  eventObjects: AnyBulkWriteOperation<EventObjectRow>[]
  objectRelationships: AnyBulkWriteOperation<ObjectRelationshipRow>[]
}

/** The stored `position` of the aggregated rows a ChangeSet touches, by the ChangeSet's map keys (`<dataset>\u0000<name or object id>`). */
export interface StoredPositions {
  eventTypes: ReadonlyMap<string, number>
  objectTypes: ReadonlyMap<string, number>
  objects: ReadonlyMap<string, number>
}

/**
 * `changes` reduced by the replay rule (src/core/read-model-changes.ts: typeChangeToApply,
 * objectChangeToApply) to what the stored rows still lack: the same rule as every store runs, so
 * a replay that straddles a row counts and merges only the records after the row's position.
 */
export function changesToApply(changes: ChangeSet, stored: StoredPositions): ChangeSet {
  const reduce = <C>(map: ReadonlyMap<string, C>, positions: ReadonlyMap<string, number>, rule: (c: C, p: number | undefined) => C | null) => {
    const out = new Map<string, C>()
    for (const [key, c] of map) {
      const kept = rule(c, positions.get(key))
      if (kept !== null) out.set(key, kept)
    }
    return out
  }
  return {
    ...changes,
    eventTypes: reduce(changes.eventTypes, stored.eventTypes, typeChangeToApply),
    objectTypes: reduce(changes.objectTypes, stored.objectTypes, typeChangeToApply),
    objects: reduce(changes.objects, stored.objects, objectChangeToApply),
  }
}

/** The ChangeSet map key of a stored row (see StoredPositions). */
export function storedKey(datasetId: string, nameOrId: string): string {
  return datasetId + KEY_SEP + nameOrId
}

/** Turns a ChangeSet (already reduced by changesToApply) into its bulkWrite operations (no I/O). */
export function changeSetWrites(changes: ChangeSet): ReadModelWrites {
  const objects = [...changes.objects.values()]
  return {
    eventTypes: [...changes.eventTypes.values()].map(typeWrite),
    objectTypes: [...changes.objectTypes.values()].map(typeWrite),
    objects: objects.map(objectWrite),
    objectTypeOf: objects.map((o) => ({ datasetId: o.datasetId, type: o.type })),
    objectChanges: changes.objectChanges.map(objectChangeWrite),
    events: changes.events.map(eventWrite),
    eventObjects: changes.eventObjects.map(eventObjectWrite),
    objectRelationships: firstPerKey(changes.objectRelationships).map(objectRelationshipWrite),
  }
}

/**
 * How many objects of each (dataset, type) a bulkWrite of `writes.objects` inserted, from the
 * result's `upsertedIds` (operation index → _id). Object type `count` = distinct objects of the type.
 */
export function newObjectsPerType(
  objectTypeOf: ReadModelWrites['objectTypeOf'],
  upsertedIndexes: Iterable<number>,
): Map<string, { datasetId: string; type: string; added: number }> {
  const out = new Map<string, { datasetId: string; type: string; added: number }>()
  for (const index of upsertedIndexes) {
    const t = objectTypeOf[index]
    if (t === undefined) continue
    const key = `${t.datasetId}\u0000${t.type}`
    const found = out.get(key)
    if (found === undefined) out.set(key, { ...t, added: 1 })
    else found.added += 1
  }
  return out
}
