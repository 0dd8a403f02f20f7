import { describe, expect, it } from 'vitest'
import { itemErrorString, validateEvent, validateObjectUpsert } from '../../src/core/validation.js'
import { mergeProperties } from '../../src/core/merge.js'
import { objectIdOf } from '../../src/core/ids.js'
import { buildEventRecorded, toUtcIso } from '../../src/core/records.js'
import { hashSecret, parseToken, newKeyToken, secretMatches } from '../../src/core/api-keys.js'

describe('validateEvent', () => {
  it('accepts a minimal event', () => {
    expect(validateEvent({ event: 'E', objects: [{ type: 't', id: '1' }] }).ok).toBe(true)
  })

  it('reports every broken field at once', () => {
    const v = validateEvent({ event: '', objects: [{ type: '', id: '1', extra: true }], timestamp: 'x' })
    expect(v.ok).toBe(false)
    if (v.ok) return
    expect(v.errors.map((e) => e.path).sort()).toEqual(['/event', '/objects/0/extra', '/objects/0/type', '/timestamp'])
  })

  it('names the rule in the message', () => {
    const v = validateEvent({ event: 'E', objects: [{ type: 't', id: 'x'.repeat(501) }] })
    expect(v.ok ? '' : v.errors[0]?.message).toContain('object id: 1 to 500 characters')
  })

  it('accepts an offset timestamp and an equal end_timestamp', () => {
    expect(
      validateEvent({ event: 'E', objects: [{ type: 't', id: '1' }], timestamp: '2024-01-01T10:00:00+02:00', end_timestamp: '2024-01-01T08:00:00Z' }).ok,
    ).toBe(true)
  })

  it('compares end_timestamp with timestamp as instants, not as strings', () => {
    const v = validateEvent({ event: 'E', objects: [{ type: 't', id: '1' }], timestamp: '2024-01-01T10:00:00+02:00', end_timestamp: '2024-01-01T07:59:59Z' })
    expect(v.ok ? null : v.errors[0]?.path).toBe('/end_timestamp')
  })

  it('skips the item size check when the whole body is within the item limit', () => {
    const big = { event: 'E', objects: [{ type: 't', id: '1' }], properties: { blob: 'x'.repeat(600 * 1024) } }
    expect(validateEvent(big).ok).toBe(false)
    expect(validateEvent(big, { bodyBytes: 1000 }).ok).toBe(true)
  })
})

describe('validateObjectUpsert', () => {
  it('rejects a type longer than 100 characters', () => {
    const v = validateObjectUpsert({ type: 't'.repeat(101), id: '1' })
    expect(v.ok ? null : v.errors[0]?.path).toBe('/type')
  })

  it('rejects properties that are null', () => {
    const v = validateObjectUpsert({ type: 't', id: '1', properties: null })
    expect(v.ok ? null : v.errors[0]?.path).toBe('/properties')
  })
})

describe('itemErrorString', () => {
  it('starts with the label and the 0-based index', () => {
    expect(
      itemErrorString('Event', 3, [
        { path: '/event', message: 'is required' },
        { path: '', message: 'too big' },
      ]),
    ).toBe('Event 3: /event: is required; too big')
  })
})

describe('mergeProperties', () => {
  it('replaces sent keys, keeps the others, stores null, and replaces nested objects whole', () => {
    expect(mergeProperties({ a: 1, b: 2, n: { x: 1 } }, { b: null, n: { y: 1 }, c: 3 })).toEqual({ a: 1, b: null, n: { y: 1 }, c: 3 })
  })
})

describe('objectIdOf', () => {
  it('is a stable UUIDv5 of (dataset, type, id)', () => {
    expect(objectIdOf('d', 't', '1')).toBe(objectIdOf('d', 't', '1'))
    expect(objectIdOf('d', 't', '1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('does not collide when separators move between fields', () => {
    expect(objectIdOf('d', 'a:b', 'c')).not.toBe(objectIdOf('d', 'a', 'b:c'))
  })
})

describe('buildEventRecorded', () => {
  it('stamps key id, request id and received_at, and claims object ids per dataset', () => {
    const r = buildEventRecorded({ event: 'E', objects: [{ type: 't', id: '1', qualifier: 'q' }] }, 'eid', {
      datasetId: 'd',
      keyId: 'k',
      requestId: 'r',
      receivedAt: '2026-01-01T00:00:00.000Z',
    })
    expect(r.data).toEqual({
      event_id: 'eid',
      event_type: 'E',
      timestamp: '2026-01-01T00:00:00.000Z',
      properties: {},
      objects: [{ type: 't', id: '1', object_id: objectIdOf('d', 't', '1'), qualifier: 'q' }],
      received_at: '2026-01-01T00:00:00.000Z',
      key_id: 'k',
      request_id: 'r',
    })
  })

  it('normalises offsets to UTC with milliseconds', () => {
    expect(toUtcIso('2024-05-01T12:00:00+02:00')).toBe('2024-05-01T10:00:00.000Z')
  })
})

describe('API key tokens', () => {
  it('round-trips a new token and matches only its own secret', () => {
    const t = newKeyToken()
    const parsed = parseToken(t.token)
    expect(parsed?.keyId).toBe(t.keyId)
    expect(secretMatches(parsed?.secret ?? '', t.secretHash)).toBe(true)
    expect(secretMatches('B'.repeat(43), t.secretHash)).toBe(false)
  })

  it('stores a secret as the SHA-256 hex of its text, so keys made by earlier builds still match (FIPS 180-4 test vector "abc")', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(secretMatches('abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')).toBe(true)
  })

  it('rejects tokens of the wrong shape', () => {
    expect(parseToken('ocl_short_x')).toBeNull()
  })
})
