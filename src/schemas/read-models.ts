/**
 * The read models that analysis jobs read (README § Read models). Each schema is a contract:
 * the SQLite tables (`rm_*`) and the MongoDB collections hold exactly these fields.
 * Times are UTC ISO 8601 strings with milliseconds; `position` is the last applied log position.
 */
import { Type, type Static } from 'typebox'
import { AttributeType, Properties } from './api.js'

/** Key (dataset_id, name). `count`: events recorded of this type. Times: `received_at` of the first/last record. */
export const EventTypeRow = Type.Object({
  dataset_id: Type.String(),
  name: Type.String(),
  source: Type.Literal('public_api'),
  first_seen_at: Type.String(),
  last_seen_at: Type.String(),
  count: Type.Integer(),
  position: Type.Integer(),
})
export type EventTypeRow = Static<typeof EventTypeRow>

/** Key (dataset_id, name). `count`: distinct objects of this type. Times: `received_at` of the first/last record naming it. */
export const ObjectTypeRow = EventTypeRow
export type ObjectTypeRow = Static<typeof ObjectTypeRow>

/** Key (dataset_id, type, external_id), also unique on (dataset_id, object_id). */
export const ObjectRow = Type.Object({
  dataset_id: Type.String(),
  object_id: Type.String(),
  type: Type.String(),
  external_id: Type.String(),
  /** Merged attributes: per top-level key, the latest value in log order. */
  properties: Properties,
  created_at: Type.String(),
  updated_at: Type.String(),
  position: Type.Integer(),
})
export type ObjectRow = Static<typeof ObjectRow>

/**
 * Key (dataset_id, object_id, position): the attribute values one record set on one object
 * (OCEL 2.0 object attribute history). `time` is the event's `timestamp` for properties sent inline
 * in an event, and the upsert's `time` for an object upsert (its `timestamp`, else `received_at`).
 */
export const ObjectChangeRow = Type.Object({
  dataset_id: Type.String(),
  object_id: Type.String(),
  position: Type.Integer(),
  time: Type.String(),
  attributes: Properties,
})
export type ObjectChangeRow = Static<typeof ObjectChangeRow>

/** Key (dataset_id, event_id). */
export const EventRow = Type.Object({
  dataset_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  timestamp: Type.String(),
  end_timestamp: Type.Union([Type.String(), Type.Null()]),
  properties: Properties,
  objects_count: Type.Integer(),
  received_at: Type.String(),
  position: Type.Integer(),
})
export type EventRow = Static<typeof EventRow>

/** E2O. Key (dataset_id, event_id, object_id, qualifier); `qualifier` is null when none was sent. */
export const EventObjectRow = Type.Object({
  dataset_id: Type.String(),
  event_id: Type.String(),
  object_id: Type.String(),
  qualifier: Type.Union([Type.String(), Type.Null()]),
  object_type: Type.String(),
  external_id: Type.String(),
  event_time: Type.String(),
  position: Type.Integer(),
})
export type EventObjectRow = Static<typeof EventObjectRow>

/**
 * O2O (OCEL 2.0 object-to-object). Key (dataset_id, object_id, target_object_id, qualifier);
 * `qualifier` is null when none was sent. `time` and `position`: of the first upsert that asserted
 * it (`time` is that upsert's `time`).
 */
export const ObjectRelationshipRow = Type.Object({
  dataset_id: Type.String(),
  object_id: Type.String(),
  target_object_id: Type.String(),
  qualifier: Type.Union([Type.String(), Type.Null()]),
  target_type: Type.String(),
  target_external_id: Type.String(),
  time: Type.String(),
  position: Type.Integer(),
})
export type ObjectRelationshipRow = Static<typeof ObjectRelationshipRow>

/** One declared type as the `declared_types` read model gives it: its name and attributes by name (docs/read-models.md#declared_types). */
export const DeclaredType = Type.Object({
  name: Type.String(),
  attributes: Type.Array(Type.Object({ name: Type.String(), type: AttributeType })),
})
export type DeclaredType = Static<typeof DeclaredType>

/** A dataset's declared event and object types, each list by name (ReadModelQuery.declaredTypes). */
export const DeclaredTypes = Type.Object({ event_types: Type.Array(DeclaredType), object_types: Type.Array(DeclaredType) })
export type DeclaredTypes = Static<typeof DeclaredTypes>
