/**
 * The audit chain's definition (src/core/audit-chain.ts; README § Operations, digests): the
 * canonical form (RFC 8785), the written form of an upcast record, and a fixed known-answer vector
 * whose hashes were also computed outside Ocelog (`printf '%s%s' "$h" "$canonical" | sha256sum`):
 * a digest given to an auditor must verify with any later build.
 */
import { describe, expect, it } from 'vitest'
import { canonicalEnvelope, canonicalJson, canonicalRecord, chainStep, GENESIS_HASH, isChainHash, writtenForm } from '../../src/core/audit-chain.js'
import { decodeRecord } from '../../src/core/record-decoder.js'
import type { StoredRecord } from '../../src/schemas/records.js'

const EVENT: StoredRecord = {
  position: 7,
  stream: 'dataset-acme',
  datasetId: 'acme',
  appendedAt: '2024-05-01T10:00:01.000Z',
  type: 'EventRecorded',
  version: 1,
  data: {
    event_id: '01890a5d-ac96-774b-bcce-b302099a8057',
    event_type: 'Create Order',
    timestamp: '2024-05-01T10:00:00.000Z',
    properties: { total: 12.5, é: 1e21, a: [true, null] },
    objects: [{ type: 'order', id: 'o1', object_id: '5f0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11', qualifier: 'placed' }],
    received_at: '2024-05-01T10:00:00.500Z',
    key_id: 'k1',
    request_id: 'r1',
  },
  idempotency: { key: 'ocel:event:e1', fingerprint: 'ab'.repeat(32) },
}

const UPSERT_V1_DATA = {
  object_id: '5f0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11',
  type: 'order',
  id: 'o1',
  properties: { status: 'paid' },
  received_at: '2024-05-01T10:00:01.000Z',
  key_id: 'k1',
  request_id: 'r2',
}

/** An ObjectUpserted written as v1, read (upcast to v2) by the one decoder. */
const UPSERT = decodeRecord({
  position: 9,
  stream: 'dataset-acme',
  type: 'ObjectUpserted',
  version: 1,
  data: JSON.stringify(UPSERT_V1_DATA),
  appendedAt: '2024-05-01T10:00:02.000Z',
})

const EVENT_CANONICAL =
  '{"data":{"event_id":"01890a5d-ac96-774b-bcce-b302099a8057","event_type":"Create Order","key_id":"k1","objects":[{"id":"o1","object_id":"5f0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11","qualifier":"placed","type":"order"}],"properties":{"a":[true,null],"total":12.5,"é":1e+21},"received_at":"2024-05-01T10:00:00.500Z","request_id":"r1","timestamp":"2024-05-01T10:00:00.000Z"},"dataset":"acme","format":1,"idempotency":{"fingerprint":"abababababababababababababababababababababababababababababababab","key":"ocel:event:e1"},"type":"EventRecorded","version":1}'
const UPSERT_CANONICAL =
  '{"data":{"id":"o1","key_id":"k1","object_id":"5f0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11","properties":{"status":"paid"},"received_at":"2024-05-01T10:00:01.000Z","request_id":"r2","type":"order"},"dataset":"acme","format":1,"type":"ObjectUpserted","version":1}'
const H1 = '76a523c62759472bbbef50c303f884119552995347a7bf2a32ffe9b67fe52191'
const H2 = '931aa10171f33526399f27d8427288ffb1debec6ca3c72a851685ed1b8d1a396'

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units, at every depth, with no whitespace', () => {
    // The key order of RFC 8785 § 3.2.3's example.
    const keys = { '€': 1, '\r': 2, דּ: 3, '1': 4, '😀': 5, '\u0080': 6, ö: 7 }
    expect(canonicalJson({ z: keys, a: [{ b: 1, a: 2 }] })).toBe('{"a":[{"a":2,"b":1}],"z":{"\\r":2,"1":4,"\u0080":6,"ö":7,"€":1,"😀":5,"דּ":3}}')
  })

  it('writes numbers in ECMAScript form and leaves out undefined members', () => {
    expect(canonicalJson([1e21, 1e-7, 0.000001, -0, 333333333.3333333, 4.5])).toBe('[1e+21,1e-7,0.000001,0,333333333.3333333,4.5]')
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}')
  })

  it('orders array-index keys as text too ("10" before "9"), inside any object', () => {
    expect(canonicalJson({ b: [{ '9': 'x', '10': 'y', a: 1 }], '2': null })).toBe('{"2":null,"b":[{"10":"y","9":"x","a":1}]}')
  })

  it('refuses values JSON has no form for', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError)
    expect(() => canonicalJson({ a: [Number.POSITIVE_INFINITY] })).toThrow(TypeError)
    expect(() => canonicalJson([undefined])).toThrow(TypeError)
  })
})

describe('writtenForm', () => {
  it('gives back the version and data an upcast record was written in', () => {
    expect(UPSERT.version).toBe(2)
    expect(writtenForm(UPSERT)).toEqual({ type: 'ObjectUpserted', version: 1, data: UPSERT_V1_DATA })
  })

  it('leaves a record read in its written version as it is', () => {
    expect(writtenForm(EVENT)).toEqual({ type: 'EventRecorded', version: 1, data: EVENT.data })
  })
})

describe('the audit chain, format 1 (known-answer vector)', () => {
  it('has the canonical forms of the vector, without position or append time', () => {
    expect(canonicalRecord(EVENT)).toBe(EVENT_CANONICAL)
    expect(canonicalRecord(UPSERT)).toBe(UPSERT_CANONICAL)
    expect(canonicalRecord({ ...EVENT, position: 70, appendedAt: '2030-01-01T00:00:00.000Z' })).toBe(EVENT_CANONICAL)
  })

  it('chains h_n = SHA-256(h_(n−1) ‖ canonical(record_n)) from 64 zeros to the vector’s hashes', () => {
    expect(GENESIS_HASH).toBe('0'.repeat(64))
    const h1 = chainStep(GENESIS_HASH, canonicalRecord(EVENT))
    expect(h1).toBe(H1)
    expect(chainStep(h1, canonicalRecord(UPSERT))).toBe(H2)
    expect(isChainHash(H2)).toBe(true)
  })

  it('changes with any change of a record’s data, dataset, idempotency key or order', () => {
    const edited: StoredRecord = { ...EVENT, data: { ...EVENT.data, event_type: 'Create order' } }
    expect(chainStep(GENESIS_HASH, canonicalRecord(edited))).not.toBe(H1)
    expect(chainStep(GENESIS_HASH, canonicalRecord({ ...EVENT, datasetId: 'acme2', stream: 'dataset-acme2' }))).not.toBe(H1)
    const { idempotency: _, ...withoutKey } = EVENT
    expect(chainStep(GENESIS_HASH, canonicalRecord(withoutKey))).not.toBe(H1)
    expect(chainStep(chainStep(GENESIS_HASH, UPSERT_CANONICAL), EVENT_CANONICAL)).not.toBe(H2)
  })
})

describe('canonicalRecord, member by member, against the definition (canonicalEnvelope)', () => {
  const V2_UPSERT: StoredRecord = {
    position: 11,
    stream: 'dataset-acme',
    datasetId: 'acme',
    appendedAt: '2024-05-01T10:00:03.000Z',
    type: 'ObjectUpserted',
    version: 2,
    data: {
      object_id: '5f0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11',
      type: 'order',
      id: 'o1',
      properties: { status: 'paid', '10': 1, '9': 2 },
      time: '2024-05-01T10:00:01.000Z',
      relationships: [
        { type: 'customer', id: 'c"1\\', object_id: '7a0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11', qualifier: 'placed by' },
        { type: 'item', id: 'i\u0001', object_id: '8a0c4d5e-8a57-5b8e-9a3c-2f1d1f0e6a11' },
      ],
      received_at: '2024-05-01T10:00:01.000Z',
      key_id: 'k1',
      request_id: 'r3',
    },
  }
  const withData = (record: StoredRecord, data: Record<string, unknown>): StoredRecord => ({ ...record, data }) as StoredRecord
  const event = EVENT.type === 'EventRecorded' ? EVENT.data : null
  const cases: [string, StoredRecord][] = [
    ['an event with an idempotency key', EVENT],
    [
      'an event with end_timestamp, object attributes and no key',
      {
        ...withData(EVENT, {
          ...event,
          end_timestamp: '2024-05-01T11:00:00.000Z',
          objects: [{ type: 'item', id: 'é😀', object_id: 'x', properties: { b: 1, a: { d: null, c: [1.5, 'x'] } } }],
        }),
        idempotency: undefined,
      },
    ],
    [
      'an event whose strings need escapes (quote, backslash, control, lone surrogate)',
      withData(EVENT, { ...event, event_type: 'a"b\\c\nd\ud800', request_id: '\u2028' }),
    ],
    ['an event with a member its schema does not name', withData(EVENT, { ...event, extra: 1 })],
    [
      'an event whose object has a member its schema does not name',
      withData(EVENT, { ...event, objects: [{ type: 'order', id: 'o1', object_id: 'x', zz: true }] }),
    ],
    ['an event with an undefined optional member', withData(EVENT, { ...event, end_timestamp: undefined })],
    ['an event whose objects are not all objects', withData(EVENT, { ...event, objects: [null, 'o1', ['x']] })],
    ['an upsert of v2 with relationships and index keys in its attributes', V2_UPSERT],
    ['an upsert of v1, upcast on read', UPSERT],
  ]
  it.each(cases)('gives the same text for %s', (_name, record) => {
    expect(canonicalRecord(record)).toBe(canonicalEnvelope(record))
    expect(JSON.parse(canonicalRecord(record))).toEqual(JSON.parse(canonicalEnvelope(record)))
  })
})
