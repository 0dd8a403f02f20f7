/**
 * Splitting one append call into EventStoreDB appends under the 1 MiB default MaxAppendSize
 * (src/adapters/eventstore/append-chunks.ts): pure, no engine needed.
 */
import { describe, expect, it } from 'vitest'
import {
  AppendTooLargeError,
  DEFAULT_APPEND_BUDGET_BYTES,
  EVENT_OVERHEAD_BYTES,
  EVENTSTORE_MAX_APPEND_SIZE,
  proposedEventSize,
  splitIntoAppends,
  toProposedEvent,
} from '../../src/adapters/eventstore/append-chunks.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from '../../src/core/records.js'

const MiB = 1024 * 1024
const ctx: RecordContext = { datasetId: 'ds1', keyId: 'key_1', requestId: 'req_1', receivedAt: '2024-05-01T10:00:00.000Z' }
const bySize = (n: number) => n

describe('splitIntoAppends', () => {
  it('keeps items that add up to exactly 1 MiB in one append', () => {
    expect(splitIntoAppends([MiB / 2, MiB / 4, MiB / 4], bySize, EVENTSTORE_MAX_APPEND_SIZE)).toEqual([[MiB / 2, MiB / 4, MiB / 4]])
  })

  it('starts a second append when one more byte would pass 1 MiB', () => {
    expect(splitIntoAppends([MiB / 2, MiB / 4, MiB / 4 + 1], bySize, EVENTSTORE_MAX_APPEND_SIZE)).toEqual([[MiB / 2, MiB / 4], [MiB / 4 + 1]])
  })

  it('accepts one item of exactly 1 MiB alone', () => {
    expect(splitIntoAppends([1, MiB, 1], bySize, EVENTSTORE_MAX_APPEND_SIZE)).toEqual([[1], [MiB], [1]])
  })

  it('refuses an item one byte over 1 MiB, which no append could hold', () => {
    expect(() => splitIntoAppends([10, MiB + 1], bySize, EVENTSTORE_MAX_APPEND_SIZE)).toThrow(AppendTooLargeError)
    expect(() => splitIntoAppends([10, MiB + 1], bySize, EVENTSTORE_MAX_APPEND_SIZE)).toThrow(/item 1 is 1048577 bytes/)
  })

  it('keeps the order of the items across appends', () => {
    const items = Array.from({ length: 10 }, (_, i) => 300 + i)
    const chunks = splitIntoAppends(items, bySize, 1000)
    expect(chunks.flat()).toEqual(items)
    expect(chunks.map((c) => c.length)).toEqual([3, 3, 3, 1])
  })

  it('answers no appends for no items', () => {
    expect(splitIntoAppends([], bySize)).toEqual([])
  })

  it('fills an append up to the default budget and no further', () => {
    expect(splitIntoAppends([DEFAULT_APPEND_BUDGET_BYTES, 1], bySize)).toEqual([[DEFAULT_APPEND_BUDGET_BYTES], [1]])
  })

  it('splits real records of ~300 KiB into appends of three under the default budget', () => {
    const records = Array.from({ length: 7 }, (_, i) =>
      buildObjectUpserted({ type: 'doc', id: `d${String(i)}`, properties: { body: 'x'.repeat(300 * 1024) } }, ctx),
    )
    const events = records.map((r) => toProposedEvent(r, () => '00000000-0000-4000-8000-000000000000'))
    const chunks = splitIntoAppends(events, (e) => e.size)
    expect(chunks.map((c) => c.length)).toEqual([3, 3, 1])
    for (const chunk of chunks) expect(chunk.reduce((sum, e) => sum + e.size, 0)).toBeLessThanOrEqual(DEFAULT_APPEND_BUDGET_BYTES)
  })
})

describe('proposedEventSize', () => {
  it('counts UTF-8 bytes of data and metadata, twice the type, plus the fixed overhead', () => {
    const metadata = { key_id: 'k', request_id: 'r', schema_version: 1 }
    const data = { s: 'é' }
    const expected = Buffer.byteLength('{"s":"é"}') + Buffer.byteLength(JSON.stringify(metadata)) + 2 * 'T'.length + EVENT_OVERHEAD_BYTES
    expect(proposedEventSize('T', data, metadata)).toBe(expected)
    expect(Buffer.byteLength('{"s":"é"}')).toBe(10)
  })
})

describe('toProposedEvent', () => {
  it('uses the event_id of an EventRecorded as the EventStoreDB event id, with key, request and schema version as metadata', () => {
    const record = buildEventRecorded({ event: 'Pay', objects: [{ type: 'order', id: 'o1' }] }, '0190f5a2-0000-7000-8000-000000000001', ctx)
    const e = toProposedEvent(record, () => 'unused')
    expect([e.id, e.type, e.metadata]).toEqual([
      '0190f5a2-0000-7000-8000-000000000001',
      'EventRecorded',
      { key_id: 'key_1', request_id: 'req_1', schema_version: 1 },
    ])
    expect(e.data).toBe(record.data)
  })

  it('gives an ObjectUpserted a fresh id', () => {
    const e = toProposedEvent(buildObjectUpserted({ type: 'order', id: 'o1' }, ctx), () => 'fresh-id')
    expect([e.id, e.type]).toEqual(['fresh-id', 'ObjectUpserted'])
  })

  it("puts a record's idempotency key and fingerprint into its metadata", () => {
    const record = { ...buildObjectUpserted({ type: 'order', id: 'o1' }, ctx), idempotency: { key: 'k1', fingerprint: 'f1' } }
    expect(toProposedEvent(record, () => 'fresh-id').metadata).toEqual({
      key_id: 'key_1',
      request_id: 'req_1',
      schema_version: 2,
      idempotency_key: 'k1',
      fingerprint: 'f1',
    })
  })
})
