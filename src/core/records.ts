/**
 * Building records from validated input (docs/architecture.md#records-and-ids). Pure: ids and clocks come in
 * through `RecordContext`, so the same input and context always give the same record.
 */
import type { EventInput, ObjectUpsertInput, TypesInput } from '../schemas/api.js'
import type { EventRecordedV1, NewRecord, ObjectUpsertedV2, RecordedEventObject, RecordedRelationship, TypesDeclaredV1 } from '../schemas/records.js'
import { objectIdOf } from './ids.js'
import { parseTimestamp } from './timestamp.js'

/** Who sent the request and when: stamped on every record it produces. */
export interface RecordContext {
  datasetId: string
  keyId: string
  requestId: string
  /** UTC ISO 8601 with ms: when the request was received. */
  receivedAt: string
}

/**
 * Normalises an accepted ISO 8601 date-time (any offset) to UTC with milliseconds (parseTimestamp).
 * @throws Error when `timestamp` was not accepted by validation: a bug, never a client's error.
 */
export function toUtcIso(timestamp: string): string {
  const parsed = parseTimestamp(timestamp)
  if (!parsed.ok) throw new Error(`toUtcIso: ${JSON.stringify(timestamp)} ${parsed.reason}; validate first`)
  return parsed.utc
}

/**
 * Builds an `EventRecorded` v1 record. `timestamp` defaults to `receivedAt` (docs/api.md#event-input).
 * @param eventId a fresh UUIDv7 (newEventId()).
 */
export function buildEventRecorded(input: EventInput, eventId: string, ctx: RecordContext): NewRecord & { data: EventRecordedV1 } {
  const objects: RecordedEventObject[] = input.objects.map((o) => {
    const out: RecordedEventObject = { type: o.type, id: o.id, object_id: objectIdOf(ctx.datasetId, o.type, o.id) }
    if (o.qualifier !== undefined) out.qualifier = o.qualifier
    if (o.properties !== undefined) out.properties = o.properties
    return out
  })
  const data: EventRecordedV1 = {
    event_id: eventId,
    event_type: input.event,
    timestamp: input.timestamp === undefined ? ctx.receivedAt : toUtcIso(input.timestamp),
    properties: input.properties ?? {},
    objects,
    received_at: ctx.receivedAt,
    key_id: ctx.keyId,
    request_id: ctx.requestId,
  }
  if (input.end_timestamp !== undefined) data.end_timestamp = toUtcIso(input.end_timestamp)
  return { type: 'EventRecorded', version: 1, data }
}

/**
 * Builds an `ObjectUpserted` v2 record. `time` is the upsert's `timestamp` in UTC, defaulting to
 * `receivedAt`; each O2O relationship gets its target's object id (README § O2O relationships and
 * attribute times).
 */
export function buildObjectUpserted(input: ObjectUpsertInput, ctx: RecordContext): NewRecord & { data: ObjectUpsertedV2 } {
  const relationships = (input.relationships ?? []).map((r) => {
    const out: RecordedRelationship = { type: r.type, id: r.id, object_id: objectIdOf(ctx.datasetId, r.type, r.id) }
    if (r.qualifier !== undefined) out.qualifier = r.qualifier
    return out
  })
  return {
    type: 'ObjectUpserted',
    version: 2,
    data: {
      object_id: objectIdOf(ctx.datasetId, input.type, input.id),
      type: input.type,
      id: input.id,
      properties: input.properties ?? {},
      time: input.timestamp === undefined ? ctx.receivedAt : toUtcIso(input.timestamp),
      relationships,
      received_at: ctx.receivedAt,
      key_id: ctx.keyId,
      request_id: ctx.requestId,
    },
  }
}

/**
 * Builds a `TypesDeclared` v1 record from a validated POST /v1/types body (docs/api.md#declared-types):
 * the event and object types as sent (absent lists are empty), each attribute as `{name, type}`.
 */
export function buildTypesDeclared(input: TypesInput, ctx: RecordContext): NewRecord & { data: TypesDeclaredV1 } {
  const declared = (types: TypesInput['event_types']) =>
    (types ?? []).map((t) => ({ name: t.name, attributes: t.attributes.map((a) => ({ name: a.name, type: a.type })) }))
  return {
    type: 'TypesDeclared',
    version: 1,
    data: {
      event_types: declared(input.event_types),
      object_types: declared(input.object_types),
      received_at: ctx.receivedAt,
      key_id: ctx.keyId,
      request_id: ctx.requestId,
    },
  }
}
