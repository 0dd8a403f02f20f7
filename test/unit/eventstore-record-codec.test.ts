/**
 * Decoding EventStoreDB events back into records (src/adapters/eventstore/record-codec.ts): pure,
 * no engine needed.
 */
import { describe, expect, it } from 'vitest'
import { positionToNumber, type ReadEvent, toStoredRecord } from '../../src/adapters/eventstore/record-codec.js'
import { UnreadableRecordError } from '../../src/core/record-decoder.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from '../../src/core/records.js'

const ctx: RecordContext = { datasetId: 'ds1', keyId: 'key_1', requestId: 'req_1', receivedAt: '2024-05-01T10:00:00.000Z' }
const created = new Date('2024-05-01T10:00:00.123Z')

function readEvent(overrides: Partial<ReadEvent>): ReadEvent {
  const record = buildObjectUpserted({ type: 'order', id: 'o1', properties: { status: 'open' } }, ctx)
  return {
    streamId: 'dataset-ds1',
    type: record.type,
    data: JSON.parse(JSON.stringify(record.data)),
    metadata: { key_id: 'key_1', request_id: 'req_1', schema_version: 2 },
    commitPosition: 4096n,
    created,
    ...overrides,
  }
}

describe('toStoredRecord', () => {
  it('turns an ObjectUpserted event into a record of its dataset at its commit position', () => {
    const r = toStoredRecord(readEvent({}))
    expect([r.type, r.version, r.position, r.stream, r.datasetId, r.appendedAt]).toEqual([
      'ObjectUpserted',
      2,
      4096,
      'dataset-ds1',
      'ds1',
      '2024-05-01T10:00:00.123Z',
    ])
    expect(r.type === 'ObjectUpserted' ? r.data.properties : null).toEqual({ status: 'open' })
  })

  it('turns an EventRecorded event into a record with its data unchanged', () => {
    const record = buildEventRecorded({ event: 'Pay', objects: [{ type: 'order', id: 'o1', qualifier: 'paid' }] }, '0190f5a2-0000-7000-8000-000000000001', ctx)
    const data = JSON.parse(JSON.stringify(record.data))
    const r = toStoredRecord(readEvent({ type: 'EventRecorded', data, metadata: { key_id: 'key_1', request_id: 'req_1', schema_version: 1 } }))
    expect(r.type).toBe('EventRecorded')
    expect(r.data).toEqual(record.data)
  })

  it('carries the idempotency key and fingerprint from the metadata, and none when the metadata has none', () => {
    const keyed = toStoredRecord(readEvent({ metadata: { key_id: 'key_1', request_id: 'req_1', schema_version: 2, idempotency_key: 'k1', fingerprint: 'f1' } }))
    expect([keyed.idempotency, toStoredRecord(readEvent({})).idempotency]).toEqual([{ key: 'k1', fingerprint: 'f1' }, undefined])
  })

  it('refuses an event whose data does not match its record type', () => {
    expect(() => toStoredRecord(readEvent({ type: 'EventRecorded', metadata: { schema_version: 1 } }))).toThrow(
      /EventRecorded v1 at position 4096 .* does not match the EventRecorded v1 schema/,
    )
  })

  it('reads the schema version from the metadata, and refuses one this build cannot read', () => {
    expect(() => toStoredRecord(readEvent({ metadata: { schema_version: 3 } }))).toThrow(UnreadableRecordError)
    expect(() => toStoredRecord(readEvent({ metadata: { schema_version: 3 } }))).toThrow(/ObjectUpserted v3 at position 4096/)
    expect(() => toStoredRecord(readEvent({ metadata: undefined }))).toThrow(/ObjectUpserted vundefined at position 4096/)
  })

  it('refuses an event outside a dataset stream', () => {
    expect(() => toStoredRecord(readEvent({ streamId: '$stats-127.0.0.1:2113' }))).toThrow(/is not a dataset stream/)
  })
})

describe('positionToNumber', () => {
  it('keeps commit positions up to 2^53 − 1', () => {
    expect(positionToNumber(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER)
  })

  it('refuses a commit position above 2^53 − 1', () => {
    expect(() => positionToNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(RangeError)
  })
})
