/**
 * TypeBox schemas of the HTTP contract (docs/api.md#fields,
 * #responses). Every request and response type in Ocelog is derived from these with
 * `Static<typeof …>`; the OpenAPI document at /openapi.json is generated from them too.
 */
import { Type, type Static } from 'typebox'
import { LIMITS } from './limits.js'

/** Any JSON object: OCEL 2.0 attributes (`properties`, docs/api.md#event-input). */
export const Properties = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Attributes: any JSON object. Merged per top-level key into what the object already has.',
})
export type Properties = Static<typeof Properties>

/**
 * ISO 8601 date-time with a `Z` or an offset (docs/api.md#date-times). Read by parseTimestamp in
 * src/core/timestamp.ts, not by a schema format: it accepts more than RFC 3339's profile (basic
 * format, comma decimals, offsets `+0200` and `+02`, `24:00:00`) and refuses leap seconds and
 * years outside 0001–9999 in UTC.
 */
export const Timestamp = Type.String({
  description:
    'ISO 8601 date-time with Z or an offset, complete to the second, e.g. 2024-05-01T10:00:00Z, 2024-05-01T12:00:00.5+02:00, 20240501T120000,5+0200. ' +
    'Stored in UTC with milliseconds (finer fractions are truncated). Refused: no offset, leap seconds (:60), week or ordinal dates, reduced precision, UTC years outside 0001–9999.',
})

/**
 * Ocelog extension: the item's idempotency key. Keys are unique per dataset for ever: an item sent
 * again with the same key and the same content is answered as first recorded and appended once; the
 * same key with other content is a conflict (docs/api.md#idempotency-keys).
 */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: LIMITS.idempotencyKeyMax,
  // No U+0000: PostgreSQL's text cannot hold it, and a key is the same rule on every backend.
  pattern: '^[^\\u0000]*$',
  description:
    'Ocelog extension: 1 to 255 characters, none of them U+0000, unique per dataset for ever. The same key with the same content is recorded once and answered as first recorded; with other content it is a conflict (409, or a failed batch item).',
})

export const ObjectTypeName = Type.String({ minLength: 1, maxLength: LIMITS.objectTypeMax })
export const ObjectExternalId = Type.String({ minLength: 1, maxLength: LIMITS.objectIdMax })

/** One element of `objects` in an event (docs/api.md#object-input). */
export const EventObjectInput = Type.Object(
  {
    type: ObjectTypeName,
    id: ObjectExternalId,
    properties: Type.Optional(Properties),
    qualifier: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.qualifierMax, description: 'The role of the object in this event' })),
  },
  { additionalProperties: false },
)
export type EventObjectInput = Static<typeof EventObjectInput>

/** Body of POST /v1/event and each element of `events` in the batch (docs/api.md#event-input). */
export const EventInput = Type.Object(
  {
    event: Type.String({ minLength: 1, maxLength: LIMITS.eventNameMax, description: 'Name of the event type' }),
    objects: Type.Array(EventObjectInput, { minItems: 1, maxItems: LIMITS.objectsPerEventMax }),
    timestamp: Type.Optional(Timestamp),
    end_timestamp: Type.Optional(Timestamp),
    properties: Type.Optional(Properties),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
)
export type EventInput = Static<typeof EventInput>

/**
 * Ocelog extension: one OCEL 2.0 object-to-object (O2O) relationship from the upserted object to
 * the object (`type`, `id`), with the same limits as an event's objects. The target object (and its
 * type) is created on first reference, as an event's objects are (docs/api.md#auto-creation).
 */
export const RelationshipInput = Type.Object(
  {
    type: ObjectTypeName,
    id: ObjectExternalId,
    qualifier: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.qualifierMax, description: 'The role of the target object for this object' })),
  },
  { additionalProperties: false },
)
export type RelationshipInput = Static<typeof RelationshipInput>

/** Body of POST /v1/object/upsert and each element of the object batch, with Ocelog's extensions (docs/api.md#object-upsert-input). */
export const ObjectUpsertInput = Type.Object(
  {
    type: ObjectTypeName,
    id: ObjectExternalId,
    properties: Type.Optional(Properties),
    timestamp: Type.Optional(
      Type.String({
        description:
          'Ocelog extension: when these attribute values took effect (OCEL 2.0 attribute time), ISO 8601 with Z or an offset as for an event. Default: the time of receipt.',
      }),
    ),
    relationships: Type.Optional(
      Type.Array(RelationshipInput, {
        maxItems: LIMITS.relationshipsPerObjectMax,
        description: `Ocelog extension: 0 to ${String(LIMITS.relationshipsPerObjectMax)} O2O relationships from this object; targets are created on first reference`,
      }),
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
)
export type ObjectUpsertInput = Static<typeof ObjectUpsertInput>

/** POST /v1/event/batch request (docs/api.md#batches). Items are validated one by one, so one bad item fails alone. */
export const EventBatchBody = Type.Object({ events: Type.Array(EventInput, { maxItems: LIMITS.batchItemsMax }) }, { additionalProperties: false })
/** POST /v1/object/batch request (docs/api.md#batches). */
export const ObjectBatchBody = Type.Object({ objects: Type.Array(ObjectUpsertInput, { maxItems: LIMITS.batchItemsMax }) }, { additionalProperties: false })

/** OCEL 2.0's attribute types: what a declared attribute's values are (docs/api.md#declared-types). */
export const AttributeType = Type.Union(
  [Type.Literal('string'), Type.Literal('time'), Type.Literal('integer'), Type.Literal('float'), Type.Literal('boolean')],
  {
    description: "OCEL 2.0 attribute type: 'string', 'time', 'integer', 'float' or 'boolean'",
  },
)
export type AttributeType = Static<typeof AttributeType>

/** One attribute declaration of a declared type (OCEL 2.0 `{name, type}`). */
export const AttributeDeclaration = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: LIMITS.attributeNameMax }), type: AttributeType },
  { additionalProperties: false },
)
export type AttributeDeclaration = Static<typeof AttributeDeclaration>

const declaredAttributes = Type.Array(AttributeDeclaration, {
  maxItems: LIMITS.attributesPerTypeMax,
  description: `0 to ${String(LIMITS.attributesPerTypeMax)} attribute declarations, each name once`,
})

/** An event type as OCEL 2.0 declares it: its name (an event name) and its attributes. */
export const EventTypeDeclaration = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: LIMITS.eventNameMax }), attributes: declaredAttributes },
  { additionalProperties: false },
)
export type EventTypeDeclaration = Static<typeof EventTypeDeclaration>

/** An object type as OCEL 2.0 declares it: its name (an object type) and its attributes. */
export const ObjectTypeDeclaration = Type.Object({ name: ObjectTypeName, attributes: declaredAttributes }, { additionalProperties: false })
export type ObjectTypeDeclaration = Static<typeof ObjectTypeDeclaration>

/**
 * Ocelog extension: body of POST /v1/types (docs/api.md#declared-types). Declares event and object
 * types with their attributes, whether or not any event or object uses them; a later declaration
 * of a type adds its attributes and changes the type of those it names again.
 */
export const TypesInput = Type.Object(
  {
    event_types: Type.Optional(
      Type.Array(EventTypeDeclaration, {
        maxItems: LIMITS.declaredTypesMax,
        description: `0 to ${String(LIMITS.declaredTypesMax)} event types, each name once`,
      }),
    ),
    object_types: Type.Optional(
      Type.Array(ObjectTypeDeclaration, {
        maxItems: LIMITS.declaredTypesMax,
        description: `0 to ${String(LIMITS.declaredTypesMax)} object types, each name once`,
      }),
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
)
export type TypesInput = Static<typeof TypesInput>

/** POST /v1/types response: how many types of each kind the request declared. */
export const TypesResponse = Type.Object({
  success: Type.Boolean(),
  event_types: Type.Integer({ description: 'Event types declared by the request' }),
  object_types: Type.Integer({ description: 'Object types declared by the request' }),
  duplicate: Type.Boolean({ description: 'True when the idempotency key was already recorded with the same content: nothing new was recorded' }),
})
export type TypesResponse = Static<typeof TypesResponse>

/** Single event response (docs/api.md#responses). */
export const EventResponse = Type.Object({
  success: Type.Boolean(),
  event_id: Type.String({ format: 'uuid' }),
  event_type: Type.String(),
  timestamp: Type.String(),
  objects_count: Type.Integer(),
  message: Type.String(),
})
export type EventResponse = Static<typeof EventResponse>

/** One failed batch item, beside the `errors` strings: `index` is 0-based, `path` a JSON pointer inside the item. */
export const ItemErrorDetail = Type.Object({
  index: Type.Integer(),
  path: Type.String(),
  message: Type.String(),
})
export type ItemErrorDetail = Static<typeof ItemErrorDetail>

/** Event batch response, with `error_details` (docs/api.md#responses). */
export const EventBatchResponse = Type.Object({
  success: Type.Boolean(),
  processed: Type.Integer(),
  failed: Type.Integer(),
  duplicates: Type.Integer({ description: 'Ocelog extension: items whose idempotency key was already recorded with the same content (counted in processed)' }),
  event_ids: Type.Array(Type.String({ format: 'uuid' })),
  errors: Type.Array(Type.String()),
  error_details: Type.Array(ItemErrorDetail),
})
export type EventBatchResponse = Static<typeof EventBatchResponse>

/** Object result (docs/api.md#responses). */
export const ObjectResult = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  object_type: Type.String(),
  external_id: Type.String(),
  created: Type.Boolean(),
})
export type ObjectResult = Static<typeof ObjectResult>

/** POST /v1/object/upsert response (Ocelog's choice: success plus the object result). */
export const ObjectUpsertResponse = Type.Object({
  success: Type.Boolean(),
  object_id: Type.String({ format: 'uuid' }),
  object_type: Type.String(),
  external_id: Type.String(),
  created: Type.Boolean(),
})
export type ObjectUpsertResponse = Static<typeof ObjectUpsertResponse>

/** Object batch response, with `error_details` (docs/api.md#responses). */
export const ObjectBatchResponse = Type.Object({
  success: Type.Boolean(),
  processed: Type.Integer(),
  failed: Type.Integer(),
  duplicates: Type.Integer({ description: 'Ocelog extension: items whose idempotency key was already recorded with the same content (counted in processed)' }),
  objects: Type.Array(ObjectResult),
  errors: Type.Array(Type.String()),
  error_details: Type.Array(ItemErrorDetail),
})
export type ObjectBatchResponse = Static<typeof ObjectBatchResponse>

/** GET /v1/health response (Ocelog's choice: the key's dataset, name and scopes). */
export const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  dataset_id: Type.String(),
  dataset_name: Type.String(),
  key_id: Type.String(),
  key_name: Type.String(),
  scopes: Type.Array(Type.String()),
})
export type HealthResponse = Static<typeof HealthResponse>

/** RFC 9457 problem details, with `errors` for validation failures (RFC 9457; docs/api.md#errors). */
export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  instance: Type.Optional(Type.String()),
  request_id: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  rebuild: Type.Optional(
    Type.Object(
      { position: Type.Integer({ description: 'the read models checkpoint' }), head: Type.Integer({ description: 'the log position the rebuild must reach' }) },
      { description: 'On a 503 while the read models are rebuilt from the log after their file was found damaged: how far the rebuild is' },
    ),
  ),
})
export type Problem = Static<typeof Problem>

/** Scopes of a key (docs/api.md#authentication-and-scopes). A key with no scopes may do everything. */
export const Scope = Type.Union([Type.Literal('ingest:write'), Type.Literal('process:read')])
export type Scope = Static<typeof Scope>
export const ALL_SCOPES: readonly Scope[] = ['ingest:write', 'process:read']
