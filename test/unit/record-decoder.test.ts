/**
 * The one record decoder (src/core/record-decoder.ts): every readable (type, version), and a loud
 * failure, by name and position, for everything else.
 */
import { describe, expect, it } from 'vitest'
import { decodeRecord, type EncodedRecord, UnreadableRecordError, upcastObjectUpsertedV1 } from '../../src/core/record-decoder.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from '../../src/core/records.js'

const ctx: RecordContext = { datasetId: 'ds1', keyId: 'key_1', requestId: 'req_1', receivedAt: '2024-05-01T10:00:00.000Z' }
const event = buildEventRecorded(
  { event: 'Pay', timestamp: '2024-05-01T09:00:00Z', objects: [{ type: 'order', id: 'o1', qualifier: 'paid', properties: { amount: 5 } }] },
  '0190f5a2-0000-7000-8000-000000000001',
  ctx,
)
const upsert = buildObjectUpserted({ type: 'order', id: 'o1', properties: { status: 'open' } }, ctx)

function encoded(overrides: Partial<EncodedRecord>): EncodedRecord {
  return { position: 42, stream: 'dataset-ds1', type: 'ObjectUpserted', version: 2, data: upsert.data, appendedAt: '2024-05-01T10:00:00.123Z', ...overrides }
}

function failure(overrides: Partial<EncodedRecord>): unknown {
  try {
    decodeRecord(encoded(overrides))
  } catch (error) {
    return error
  }
  return undefined
}

describe('decodeRecord', () => {
  it('decodes an EventRecorded v1 with its data unchanged, its dataset taken from the stream', () => {
    const r = decodeRecord(encoded({ type: 'EventRecorded', version: 1, data: JSON.parse(JSON.stringify(event.data)) }))
    expect([r.type, r.version, r.position, r.stream, r.datasetId, r.appendedAt]).toEqual([
      'EventRecorded',
      1,
      42,
      'dataset-ds1',
      'ds1',
      '2024-05-01T10:00:00.123Z',
    ])
    expect(r.data).toEqual(event.data)
  })

  it('decodes a TypesDeclared v1 as written (JSON text), and refuses one whose attribute type is not an OCEL 2.0 attribute type', () => {
    const text =
      '{"event_types":[{"name":"pay order","attributes":[{"name":"amount","type":"float"}]}],"object_types":[{"name":"warehouse","attributes":[]}],' +
      '"received_at":"2024-05-01T10:00:00.000Z","key_id":"key_1","request_id":"req_1"}'
    const r = decodeRecord(encoded({ type: 'TypesDeclared', version: 1, data: text }))
    expect([r.type, r.version, r.data]).toEqual(['TypesDeclared', 1, JSON.parse(text)])
    expect(failure({ type: 'TypesDeclared', version: 1, data: text.replace('"float"', '"date"') })).toBeInstanceOf(UnreadableRecordError)
  })

  it('decodes an ObjectUpserted v2 given as JSON text', () => {
    const r = decodeRecord(encoded({ data: JSON.stringify(upsert.data) }))
    expect([r.type, r.version, r.upcastFrom, r.data]).toEqual(['ObjectUpserted', 2, undefined, upsert.data])
  })

  it('upcasts an ObjectUpserted v1 to v2: its values took effect when received, and it asserts no O2O', () => {
    const v1 = {
      object_id: upsert.data.object_id,
      type: 'order',
      id: 'o1',
      properties: { status: 'open' },
      received_at: '2024-05-01T10:00:00.000Z',
      key_id: 'key_1',
      request_id: 'req_1',
    }
    const r = decodeRecord(encoded({ version: 1, data: JSON.stringify(v1) }))
    expect([r.type, r.version, r.upcastFrom]).toEqual(['ObjectUpserted', 2, 1])
    expect(r.data).toEqual({ ...v1, time: '2024-05-01T10:00:00.000Z', relationships: [] })
    expect(upcastObjectUpsertedV1(v1)).toEqual(r.data)
  })

  it('fails on an unknown record type, naming it and its position', () => {
    const error = failure({ type: 'OrderShipped', version: 1 })
    expect(error).toBeInstanceOf(UnreadableRecordError)
    expect(error).toMatchObject({ type: 'OrderShipped', version: 1, position: 42, stream: 'dataset-ds1' })
    expect(String(error)).toMatch(
      /record OrderShipped v1 at position 42 in dataset-ds1 is unreadable: this build reads only EventRecorded v1, ObjectUpserted v1, ObjectUpserted v2, TypesDeclared v1/,
    )
  })

  it('fails on an unknown version of a known type', () => {
    expect(String(failure({ version: 3 }))).toMatch(/record ObjectUpserted v3 at position 42/)
    expect(String(failure({ type: 'EventRecorded', version: 2 }))).toMatch(/record EventRecorded v2 at position 42/)
  })

  it('fails on a version that is not a whole number, even one that prints as a known one', () => {
    expect(failure({ version: '1' })).toBeInstanceOf(UnreadableRecordError)
    expect(String(failure({ version: undefined }))).toMatch(/record ObjectUpserted vundefined at position 42/)
  })

  it('fails on data that breaks its schema', () => {
    expect(String(failure({ type: 'EventRecorded', version: 1 }))).toMatch(/EventRecorded v1 at position 42 .* does not match the EventRecorded v1 schema/)
  })

  it('leaves the data unchecked when asked to, but never the (type, version)', () => {
    expect(decodeRecord(encoded({ type: 'EventRecorded', version: 1 }), { checkData: false }).type).toBe('EventRecorded')
    expect(() => decodeRecord(encoded({ version: 3 }), { checkData: false })).toThrow(/ObjectUpserted v3 at position 42/)
  })

  it('fails on data that is not JSON', () => {
    expect(String(failure({ data: '{"object_id":' }))).toMatch(/at position 42 .* its data is not JSON/)
  })

  it('fails on a record outside a dataset stream', () => {
    expect(String(failure({ stream: '$stats-127.0.0.1:2113' }))).toMatch(/stream \$stats-127.0.0.1:2113 is not a dataset stream/)
  })
})
