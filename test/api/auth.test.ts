import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { revokeKey } from '../../src/write/admin.js'
import { eventBody, makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp()
})
afterAll(async () => t.close())

function call(method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  })
}

describe('authentication', () => {
  it('accepts Authorization: Bearer', async () => {
    const k = await t.newKey()
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(200)
  })

  it('accepts X-Ocelog-Api-Key', async () => {
    const k = await t.newKey()
    const res = await call('GET', '/v1/health', { 'x-ocelog-api-key': k.key })
    expect(res.statusCode).toBe(200)
  })

  it.each([
    ['no key', {}],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['a scheme other than Bearer', { authorization: 'Basic abc' }],
    ['an unknown key', { 'x-ocelog-api-key': 'ocl_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
  ])('answers 401 problem+json for %s', async (_name, headers) => {
    const res = await call('POST', '/v1/event', headers, eventBody(1))
    expect(res.statusCode).toBe(401)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.headers['www-authenticate']).toContain('Bearer')
    expect(res.json().type).toBe('urn:ocelog:problem:unauthorized')
  })

  it('answers 401 for a known key id with a wrong secret', async () => {
    const k = await t.newKey()
    const forged = `ocl_${k.key_id}_${'B'.repeat(43)}`
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${forged}` })
    expect(res.statusCode).toBe(401)
  })

  it('answers 401 for a revoked key', async () => {
    const k = await t.newKey()
    await revokeKey(t.keys, k.key_id)
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(401)
    expect(res.json().detail).toContain('revoked')
  })

  it('answers 401 when the two headers carry different keys', async () => {
    const a = await t.newKey()
    const b = await t.newKey()
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${a.key}`, 'x-ocelog-api-key': b.key })
    expect(res.statusCode).toBe(401)
  })
})

describe('scopes', () => {
  it('answers 403, not 401, when the key lacks ingest:write', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await call('POST', '/v1/event', { authorization: `Bearer ${k.key}` }, eventBody(1))
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toContain('ingest:write')
  })

  it.each(['/v1/event/batch', '/v1/object/upsert', '/v1/object/batch'])('answers 403 on %s without ingest:write', async (url) => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await call('POST', url, { authorization: `Bearer ${k.key}` }, {})
    expect(res.statusCode).toBe(403)
  })

  it('lets a process:read key call /v1/health (exempt from ingest:write)', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(200)
    expect(res.json().scopes).toEqual(['process:read'])
  })

  it('lets a key with ingest:write send events', async () => {
    const k = await t.newKey({ scopes: ['ingest:write'] })
    const res = await call('POST', '/v1/event', { authorization: `Bearer ${k.key}` }, eventBody(1))
    expect(res.statusCode).toBe(200)
  })

  it('lets a key without scopes do everything', async () => {
    const k = await t.newKey({ scopes: [] })
    const res = await call('POST', '/v1/object/upsert', { authorization: `Bearer ${k.key}` }, { type: 't', id: '1' })
    expect(res.statusCode).toBe(200)
  })
})

describe('GET /v1/health', () => {
  it('answers the dataset id and name, the key id and name, and the scopes', async () => {
    const k = await t.newKey({ name: 'erp-feed', scopes: ['ingest:write'] })
    const res = await call('GET', '/v1/health', { authorization: `Bearer ${k.key}` })
    expect(res.json()).toEqual({
      status: 'ok',
      dataset_id: k.dataset_id,
      dataset_name: k.dataset_name,
      key_id: k.key_id,
      key_name: 'erp-feed',
      scopes: ['ingest:write'],
    })
  })
})

describe('datasets', () => {
  it('lands data sent with a key in that key’s dataset and no other', async () => {
    const a = await t.newKey()
    const b = await t.newKey()
    const res = await call('POST', '/v1/event', { authorization: `Bearer ${a.key}` }, eventBody(1, { event: 'Only In A' }))
    const inA = await t.log.readStream(a.dataset_id, null, 1000)
    const inB = await t.log.readStream(b.dataset_id, null, 1000)
    expect(inA.map((r) => (r.type === 'EventRecorded' ? r.data.event_id : null))).toContain(res.json().event_id)
    expect(inB).toEqual([])
  })

  it('lets two keys of one dataset write to the same stream', async () => {
    const a = await t.newKey()
    const b = await t.newKey({ datasetId: a.dataset_id })
    await call('POST', '/v1/event', { authorization: `Bearer ${a.key}` }, eventBody(1))
    await call('POST', '/v1/event', { authorization: `Bearer ${b.key}` }, eventBody(1))
    const records = await t.log.readStream(a.dataset_id, null, 1000)
    expect(records.map((r) => r.data.key_id)).toEqual([a.key_id, b.key_id])
  })

  it('gives the same external id different object ids in different datasets', async () => {
    const a = await t.newKey()
    const b = await t.newKey()
    const ra = await call('POST', '/v1/object/upsert', { authorization: `Bearer ${a.key}` }, { type: 't', id: 'shared' })
    const rb = await call('POST', '/v1/object/upsert', { authorization: `Bearer ${b.key}` }, { type: 't', id: 'shared' })
    expect(ra.json().created).toBe(true)
    expect(rb.json().created).toBe(true)
    expect(ra.json().object_id).not.toBe(rb.json().object_id)
  })
})

describe('records never carry the secret', () => {
  it('stores the key id, not the key, on every record', async () => {
    const k = await t.newKey()
    await call('POST', '/v1/event', { authorization: `Bearer ${k.key}` }, eventBody(1))
    const records = await t.log.readStream(k.dataset_id, null, 10)
    expect(JSON.stringify(records)).not.toContain(k.key.slice(22))
    expect(records[0]?.data.key_id).toBe(k.key_id)
  })
})
