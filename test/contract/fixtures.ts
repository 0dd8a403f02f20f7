/**
 * Records and change sets for the contract suites, built with the same pure functions as the
 * ingest path (src/core/records.ts, projections/registry.ts).
 */
import { randomUUID } from 'node:crypto'
import { wholeBatch } from '../../projections/registry.js'
import type { ChangeBatch } from '../../src/core/read-model-changes.js'
import { newEventId } from '../../src/core/ids.js'
import { buildEventRecorded, buildObjectUpserted, buildTypesDeclared, type RecordContext } from '../../src/core/records.js'
import type { ObjectUpsertInput, Properties, TypesInput } from '../../src/schemas/api.js'
import { type NewRecord, type StoredRecord, streamName } from '../../src/schemas/records.js'

/** A dataset id no other test uses (engines shared between runs keep old streams). */
export function freshDatasetId(): string {
  return `ct${randomUUID().replaceAll('-', '').slice(0, 20)}`
}

export function context(datasetId: string, receivedAt = '2024-05-01T10:00:00.000Z'): RecordContext {
  return { datasetId, keyId: 'key_contract', requestId: `req_${randomUUID()}`, receivedAt }
}

export interface ObjectRef {
  type: string
  id: string
  qualifier?: string
  properties?: Properties
}

export function eventRecord(
  datasetId: string,
  event: string,
  objects: ObjectRef[],
  options: { timestamp?: string; endTimestamp?: string; properties?: Properties; receivedAt?: string } = {},
): NewRecord {
  return buildEventRecorded(
    {
      event,
      objects,
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
      ...(options.endTimestamp === undefined ? {} : { end_timestamp: options.endTimestamp }),
      ...(options.properties === undefined ? {} : { properties: options.properties }),
    },
    newEventId(),
    context(datasetId, options.receivedAt),
  )
}

export function upsertRecord(
  datasetId: string,
  type: string,
  id: string,
  properties: Properties,
  receivedAt?: string,
  extension: Pick<ObjectUpsertInput, 'timestamp' | 'relationships'> = {},
): NewRecord {
  return buildObjectUpserted({ type, id, properties, ...extension }, context(datasetId, receivedAt))
}

/** A `TypesDeclared` record of `body` (a POST /v1/types body as accepted). */
export function typesRecord(datasetId: string, body: TypesInput, receivedAt?: string): NewRecord {
  return buildTypesDeclared(body, context(datasetId, receivedAt))
}

/**
 * Three `TypesDeclared` records of `datasetId`: `pay order` with `amount` (float), and `warehouse`;
 * `pay order` again, `amount` now integer and a new `$x.y`; `warehouse` again with `capacity`.
 */
export function declarationRecords(datasetId: string): NewRecord[] {
  const amount = (type: 'float' | 'integer') => ({ name: 'amount', type })
  return [
    typesRecord(datasetId, { event_types: [{ name: 'pay order', attributes: [amount('float')] }], object_types: [{ name: 'warehouse', attributes: [] }] }),
    typesRecord(datasetId, { event_types: [{ name: 'pay order', attributes: [amount('integer'), { name: '$x.y', type: 'string' }] }] }),
    typesRecord(datasetId, { object_types: [{ name: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] }] }),
  ]
}

/** Gives records consecutive positions from `first`, as a log would, for read-model tests. */
export function stored(datasetId: string, records: readonly NewRecord[], first: number): StoredRecord[] {
  return records.map((r, i) => ({ ...r, position: first + i, stream: streamName(datasetId), datasetId, appendedAt: '2024-05-01T10:00:00.000Z' }))
}

/** The records of a batch and the position of the last one (the checkpoints it moves to). */
export function changesOf(records: readonly StoredRecord[]): { changes: readonly StoredRecord[]; to: number } {
  const last = records[records.length - 1]
  if (last === undefined) throw new Error('changesOf: no records')
  return { changes: records, to: last.position }
}

/**
 * The batch of every projection's slice of all of `records` (wholeBatch, replays included), moving
 * the checkpoints of projector `name` (`<name>.<projection>`) from `expected` to `to`.
 */
export function batchOf(name: string, expected: number | null, to: number, records: readonly StoredRecord[]): ChangeBatch {
  return wholeBatch(records, to, (projection) => ({ checkpoint: `${name}.${projection}`, expected }))
}

/** Object ids of a record's objects (what ingest claims for it). */
export { objectIdsOf } from '../../src/core/idempotency.js'

/** `record` with an idempotency key and fingerprint, as the ingest core sends keyed items. */
export function keyed(record: NewRecord, key: string, fingerprint: string): NewRecord {
  return { ...record, idempotency: { key, fingerprint } }
}

/** A string of `bytes` ASCII characters, to make records of a chosen size. */
export function filler(bytes: number): string {
  return 'x'.repeat(bytes)
}
