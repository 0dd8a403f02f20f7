/**
 * The log's vocabulary (docs/architecture.md#records-and-ids): immutable, versioned records. A record type's
 * shape never changes once written; a new shape is a new version, and readers keep reading old ones.
 */
import { Type, type Static } from 'typebox'
import { AttributeType, Properties } from './api.js'

/** An object as it took part in one event: its identity, its E2O qualifier and inline attributes. */
export const RecordedEventObject = Type.Object({
  type: Type.String(),
  id: Type.String(),
  object_id: Type.String({ format: 'uuid' }),
  qualifier: Type.Optional(Type.String()),
  properties: Type.Optional(Properties),
})
export type RecordedEventObject = Static<typeof RecordedEventObject>

/** `EventRecorded` v1: one accepted event (POST /v1/event or one item of /v1/event/batch). */
export const EventRecordedV1 = Type.Object({
  event_id: Type.String({ format: 'uuid', description: 'UUIDv7, assigned on acceptance' }),
  event_type: Type.String(),
  timestamp: Type.String({ description: 'UTC ISO 8601 with milliseconds' }),
  end_timestamp: Type.Optional(Type.String({ description: 'UTC ISO 8601 with milliseconds' })),
  properties: Properties,
  objects: Type.Array(RecordedEventObject),
  received_at: Type.String({ description: 'UTC ISO 8601 with milliseconds, server clock' }),
  key_id: Type.String({ description: 'The API key id (never the secret)' }),
  request_id: Type.String(),
})
export type EventRecordedV1 = Static<typeof EventRecordedV1>

/** `ObjectUpserted` v1: one accepted object upsert (POST /v1/object/upsert or one item of /v1/object/batch). */
export const ObjectUpsertedV1 = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  id: Type.String(),
  properties: Properties,
  received_at: Type.String(),
  key_id: Type.String(),
  request_id: Type.String(),
})
export type ObjectUpsertedV1 = Static<typeof ObjectUpsertedV1>

/** An O2O relationship as recorded: the target's identity and the qualifier sent. */
export const RecordedRelationship = Type.Object({
  type: Type.String(),
  id: Type.String(),
  object_id: Type.String({ format: 'uuid' }),
  qualifier: Type.Optional(Type.String()),
})
export type RecordedRelationship = Static<typeof RecordedRelationship>

/**
 * `ObjectUpserted` v2: v1 plus `time`, when the attribute values took effect (the upsert's
 * `timestamp`, else its receipt time), and `relationships`, the O2O relationships it asserts
 * (README § Exactly once and O2O). Written by this build; v1 records are upcast to it on read
 * (src/core/record-decoder.ts) with `time = received_at` and no relationships.
 */
export const ObjectUpsertedV2 = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  id: Type.String(),
  properties: Properties,
  time: Type.String({ description: 'UTC ISO 8601 with milliseconds' }),
  relationships: Type.Array(RecordedRelationship),
  received_at: Type.String(),
  key_id: Type.String(),
  request_id: Type.String(),
})
export type ObjectUpsertedV2 = Static<typeof ObjectUpsertedV2>

/** A type as a `TypesDeclared` record holds it: its name and attribute declarations (OCEL 2.0 `{name, type}`). */
export const RecordedTypeDeclaration = Type.Object({
  name: Type.String(),
  attributes: Type.Array(Type.Object({ name: Type.String(), type: AttributeType })),
})
export type RecordedTypeDeclaration = Static<typeof RecordedTypeDeclaration>

/**
 * `TypesDeclared` v1: one accepted POST /v1/types (docs/api.md#declared-types): event and object
 * types with their attribute declarations, whether or not any event or object uses them.
 */
export const TypesDeclaredV1 = Type.Object({
  event_types: Type.Array(RecordedTypeDeclaration),
  object_types: Type.Array(RecordedTypeDeclaration),
  received_at: Type.String({ description: 'UTC ISO 8601 with milliseconds, server clock' }),
  key_id: Type.String(),
  request_id: Type.String(),
})
export type TypesDeclaredV1 = Static<typeof TypesDeclaredV1>

/**
 * A record's idempotency key and the fingerprint of the item it was recorded from, kept in the
 * record's envelope beside its data (so record data versions do not change): the SQLite columns
 * `idempotency_key` and `fingerprint`, EventStoreDB metadata.
 */
export const RecordIdempotency = Type.Object({
  key: Type.String({ minLength: 1 }),
  fingerprint: Type.String({ description: 'sha256 (hex) of the item as sent, without its key (src/core/idempotency.ts)' }),
})
export type RecordIdempotency = Static<typeof RecordIdempotency>

/**
 * A record before it has a position: what the ingest core hands to the log's `append`, and what
 * the decoder gives back (the current version of each type; older versions are upcast on read).
 */
export type NewRecord = (
  | { type: 'EventRecorded'; version: 1; data: EventRecordedV1 }
  | { type: 'ObjectUpserted'; version: 2; data: ObjectUpsertedV2 }
  | { type: 'TypesDeclared'; version: 1; data: TypesDeclaredV1 }
) & {
  /** Present when the item carried an idempotency key. */
  idempotency?: RecordIdempotency
}

/** A record as the log stores it: its global position, its stream and dataset, and when it was appended. */
export type StoredRecord = NewRecord & {
  /** Global order of the log (SQLite rowid; EventStoreDB commit position). Integers below 2^53. */
  position: number
  /** `dataset-<datasetId>` */
  stream: string
  datasetId: string
  /** UTC ISO 8601 with ms: when the log committed the record. */
  appendedAt: string
  /** The version the record was written in, when the decoder upcast it to `version` (src/core/record-decoder.ts). */
  upcastFrom?: number
}

export const RECORD_TYPES = ['EventRecorded', 'ObjectUpserted', 'TypesDeclared'] as const
export type RecordType = (typeof RECORD_TYPES)[number]

/** Dataset D has the stream `dataset-D`. */
export const STREAM_PREFIX = 'dataset-'
export function streamName(datasetId: string): string {
  return `${STREAM_PREFIX}${datasetId}`
}
