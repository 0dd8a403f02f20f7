/**
 * Pure part of the MongoDB read-model store: the collections, their indexes, and the bulkWrite
 * operations each projection's slice turns into (README § Read models; src/core/read-model-changes.ts).
 *
 * Every write is an upsert whose filter is exactly the read model's key, backed by a unique index
 * (MongoDB's manual, upsert with a unique index: only then are concurrent upserts safe), with an update pipeline
 * whose effect is guarded by the stored `position`:
 * - aggregated rows (types, objects) change only when the stored `position` is below the
 *   change's `minPosition`, and then take `maxPosition`;
 * - rows keyed by a position (events, E2O, object changes) are written once: only a document the
 *   upsert has just created (one without a non-key field, see insertOnceUpdate) takes the row.
 * User data (names, ids, attribute keys and values) only ever appears inside `$literal`, so a value
 * such as "$price" is never read as a field path; attribute keys are stored encoded (field-names.ts:
 * no '.' and no '$' in a stored field name) and decoded by the reads.
 */
import type { AnyBulkWriteOperation, Document, Filter, IndexDescription } from 'mongodb'
import {
  type EventsSlice,
  KEY_SEP,
  type NamedObject,
  type ObjectChange,
  type ObjectsSlice,
  objectChangeToApply,
  type TypeChange,
  type TypeChanges,
  typeChangeToApply,
} from '../../core/read-model-changes.js'
import { encodeKeys } from './field-names.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow } from '../../schemas/read-models.js'

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
  dfSteps: 'df_steps',
  dfMemberships: 'df_memberships',
  dfAggregates: 'df_aggregates',
  declaredTypes: 'declared_types',
  declaredAttributes: 'declared_attributes',
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
  // The directly-follows read model (mongodb-df-writes.ts): each object's steps in (t, pos) order for
  // the projector's region reads; the steps by time for a window's map and an event's steps; each
  // edge's couples by elapsed and by raw waiting time, to refill an edge's kept smallest or largest durations.
  df_steps: [
    { key: { dataset_id: 1, object_id: 1, t: 1, pos: 1 }, unique: true, name: 'key' },
    { key: { dataset_id: 1, t: 1, pos: 1 }, name: 'by_time' },
    { key: { dataset_id: 1, object_type: 1, prev_act: 1, activity: 1, prev_dt: 1 }, name: 'by_edge_elapsed' },
    { key: { dataset_id: 1, object_type: 1, prev_act: 1, activity: 1, prev_wait: 1 }, name: 'by_edge_waiting' },
  ],
  df_memberships: [{ key: { dataset_id: 1, object_id: 1, a: 1, b: 1 }, unique: true, name: 'key' }],
  df_aggregates: [{ key: { dataset_id: 1, object_type: 1, a: 1, b: 1 }, unique: true, name: 'key' }],
  // Declared types (mongodb-declared-types.ts): a type by its key, its attributes by theirs (also the read's order).
  declared_types: [{ key: { dataset_id: 1, kind: 1, name: 1 }, unique: true, name: 'key' }],
  declared_attributes: [{ key: { dataset_id: 1, kind: 1, type_name: 1, name: 1 }, unique: true, name: 'key' }],
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
 * reduced before it gets here (typeWrites, objectsWrites: the replay rule), so its `minPosition` is then the
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
 * attributes and the incoming ones (keys encoded, field-names.ts: one key, one field), so an incoming key replaces its value (nested objects whole,
 * null stored as null) and keys not sent are kept.
 */
export function objectWrite(o: ObjectChange): AnyBulkWriteOperation<ObjectRow> {
  return {
    updateOne: {
      filter: { dataset_id: o.datasetId, object_id: o.objectId },
      update: guardedUpdate(o.minPosition, {
        type: { $ifNull: ['$type', lit(o.type)] },
        external_id: { $ifNull: ['$external_id', lit(o.externalId)] },
        properties: { $mergeObjects: [{ $ifNull: ['$properties', lit({})] }, lit(encodeKeys(o.properties))] },
        created_at: { $ifNull: ['$created_at', lit(o.firstSeenAt)] },
        updated_at: lit(o.lastSeenAt),
        position: o.maxPosition,
      }),
      upsert: true,
    },
  }
}

export function eventWrite(e: EventRow): AnyBulkWriteOperation<EventRow> {
  return insertOnce<EventRow>({ dataset_id: e.dataset_id, event_id: e.event_id }, { ...e, properties: encodeKeys(e.properties) }, 'event_type')
}

export function eventObjectWrite(l: EventObjectRow): AnyBulkWriteOperation<EventObjectRow> {
  return insertOnce<EventObjectRow>({ dataset_id: l.dataset_id, event_id: l.event_id, object_id: l.object_id, qualifier: l.qualifier }, l, 'object_type')
}

export function objectChangeWrite(c: ObjectChangeRow): AnyBulkWriteOperation<ObjectChangeRow> {
  return insertOnce<ObjectChangeRow>(
    { dataset_id: c.dataset_id, object_id: c.object_id, position: c.position },
    { ...c, attributes: encodeKeys(c.attributes) },
    'time',
  )
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

/**
 * The identity of an object a batch names (NamedObject), shared by every projection: an upsert
 * that makes the document when it is missing (no attributes, position −1: the objects projection
 * fills it, its guard treating −1 as below every position) and keeps the lowest `first_position`,
 * the record that first named it (countNewObjects counts object types from it). Fields already
 * stored win over these defaults.
 */
export function identityWrite(o: NamedObject): AnyBulkWriteOperation<Document> {
  return {
    updateOne: {
      filter: { dataset_id: o.datasetId, object_id: o.objectId },
      update: [
        {
          $replaceWith: {
            $mergeObjects: [
              {
                type: lit(o.type),
                external_id: lit(o.externalId),
                properties: lit({}),
                created_at: lit(o.firstSeenAt),
                updated_at: lit(o.firstSeenAt),
                position: -1,
              },
              '$$ROOT',
              { first_position: { $min: ['$first_position', o.position] } },
            ],
          },
        },
      ],
      upsert: true,
    },
  }
}

/** The slices' map key of a stored row (`<dataset>KEY_SEP<name or object id>`). */
export function storedKey(datasetId: string, nameOrId: string): string {
  return datasetId + KEY_SEP + nameOrId
}

/** Keeps of `changes` what the stored rows lack, by the replay rule (`rule`: typeChangeToApply or objectChangeToApply), with `stored` the rows' positions by storedKey. */
function reduce<C>(changes: ReadonlyMap<string, C>, stored: ReadonlyMap<string, number>, rule: (c: C, p: number | undefined) => C | null): C[] {
  const out: C[] = []
  for (const [key, c] of changes) {
    const kept = rule(c, stored.get(key))
    if (kept !== null) out.push(kept)
  }
  return out
}

/** event_types or object_types: the type changes reduced by the replay rule (typeChangeToApply) over the stored positions. */
export function typeWrites(changes: TypeChanges, stored: ReadonlyMap<string, number>): AnyBulkWriteOperation<EventTypeRow>[] {
  return reduce(changes, stored, typeChangeToApply).map(typeWrite)
}

/** objects and object_changes: the objects reduced by the replay rule (objectChangeToApply) over the stored positions, and the run's attribute history. */
export function objectsWrites(
  slice: ObjectsSlice,
  stored: ReadonlyMap<string, number>,
): { objects: AnyBulkWriteOperation<ObjectRow>[]; objectChanges: AnyBulkWriteOperation<ObjectChangeRow>[] } {
  return { objects: reduce(slice.objects, stored, objectChangeToApply).map(objectWrite), objectChanges: slice.changes.map(objectChangeWrite) }
}

/** events and event_objects (E2O): each row inserted once. */
export function eventsWrites(slice: EventsSlice): { events: AnyBulkWriteOperation<EventRow>[]; eventObjects: AnyBulkWriteOperation<EventObjectRow>[] } {
  return { events: slice.events.map(eventWrite), eventObjects: slice.eventObjects.map(eventObjectWrite) }
}

/** object_relationships (O2O): the first row of each key, inserted once. */
export function objectRelationshipsWrites(rows: readonly ObjectRelationshipRow[]): AnyBulkWriteOperation<ObjectRelationshipRow>[] {
  return firstPerKey(rows).map(objectRelationshipWrite)
}
