/**
 * The pure rules of exactly-once ingestion (src/core/idempotency.ts): fingerprints and decisions.
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { claimsOfAppended, decideClaim, decideKey, fingerprintOf, objectIdsOf } from '../../src/core/idempotency.js'
import { eventRecord, upsertRecord } from '../contract/fixtures.js'

/** The definition, written plainly (map, sort, join): what every stored fingerprint was computed with. */
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${referenceCanonical((value as Record<string, unknown>)[k])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

function referenceFingerprint(item: Record<string, unknown>): string {
  const { idempotency_key: _key, ...content } = item
  return createHash('sha256').update(referenceCanonical(content)).digest('hex')
}

describe('fingerprintOf', () => {
  it('is sha256 of the canonical JSON without the key: a fixed value, since fingerprints are stored', () => {
    const item = { timestamp: '2024-05-01T10:00:00Z', event: 'Pay é', objects: [{ type: 'order', id: 'o"1', qualifier: null }], idempotency_key: 'k' }
    const canonical = '{"event":"Pay é","objects":[{"id":"o\\"1","qualifier":null,"type":"order"}],"timestamp":"2024-05-01T10:00:00Z"}'
    expect(fingerprintOf(item)).toBe(createHash('sha256').update(canonical, 'utf8').digest('hex'))
  })

  it('equals the plain definition for any JSON item', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.option(fc.string(), { nil: undefined }), (item, key) => {
        const withKey: Record<string, unknown> = key === undefined ? item : { ...item, idempotency_key: key }
        expect(fingerprintOf(withKey)).toBe(referenceFingerprint(withKey))
      }),
      { numRuns: 500 },
    )
  })

  it('is the same whatever the key order and whatever the idempotency key', () => {
    const a = fingerprintOf({ event: 'Pay', objects: [{ type: 'order', id: 'o1' }], properties: { x: 1, y: { b: 2, a: 1 } }, idempotency_key: 'k1' })
    const b = fingerprintOf({ properties: { y: { a: 1, b: 2 }, x: 1 }, idempotency_key: 'k2', objects: [{ id: 'o1', type: 'order' }], event: 'Pay' })
    expect(a).toBe(b)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
  })

  it('differs when a value differs, array order included, and compares timestamps as sent', () => {
    const base = { event: 'Pay', objects: [{ type: 'order', id: 'o1' }], timestamp: '2024-05-01T10:00:00Z' }
    const prints = new Set([
      fingerprintOf(base),
      fingerprintOf({ ...base, timestamp: '2024-05-01T12:00:00+02:00' }),
      fingerprintOf({ ...base, objects: [{ type: 'order', id: 'o2' }] }),
      fingerprintOf({ ...base, objects: [...base.objects, { type: 'item', id: 'i1' }] }),
      fingerprintOf({ ...base, objects: [{ type: 'item', id: 'i1' }, ...base.objects] }),
    ])
    expect(prints.size).toBe(5)
  })
})

describe('decideKey', () => {
  it('appends a record without a key or with a new key, and compares fingerprints under a recorded key', () => {
    const k = { key: 'k', fingerprint: 'f' }
    expect([
      decideKey(undefined, undefined),
      decideKey(k, undefined),
      decideKey(undefined, k),
      decideKey(k, { key: 'k', fingerprint: 'f' }),
      decideKey(k, { key: 'k', fingerprint: 'g' }),
    ]).toEqual(['append', 'append', 'append', 'duplicate', 'conflict'])
  })
})

describe('decideClaim', () => {
  it('appends when this append took the claim, resumes a claim whose append is not known to have landed, and else compares fingerprints', () => {
    expect([
      decideClaim('f', undefined),
      decideClaim('f', { fingerprint: 'f', position: null }),
      decideClaim('f', { fingerprint: 'f', position: 42 }),
      decideClaim('f', { fingerprint: 'g', position: 42 }),
      decideClaim('f', { fingerprint: 'g', position: null }),
    ]).toEqual(['append', 'resume', 'duplicate', 'conflict', 'conflict'])
  })
})

describe('claimsOfAppended', () => {
  it('keeps the claims of objects that an appended record names, in order', () => {
    const event = eventRecord('d', 'Pay', [
      { type: 'order', id: 'o1' },
      { type: 'item', id: 'i1' },
    ])
    const skipped = upsertRecord('d', 'customer', 'c1', {})
    const claims = [...objectIdsOf(skipped), ...objectIdsOf(event)]
    expect(claimsOfAppended(claims, [event])).toEqual(objectIdsOf(event))
    expect(claimsOfAppended(claims, [])).toEqual([])
  })
})
