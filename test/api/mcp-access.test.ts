/**
 * API tier: who may reach `/mcp` (through `inject` on a real SQLite file). Host and Origin are
 * checked against DNS rebinding before the key; then the /v1 hook answers 401, 429 and 403 before
 * any MCP message is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultAllowedHosts } from '../../src/api/mcp-route.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp({ perMinute: 3 })
})
afterAll(async () => t.close())

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'inject', version: '1' } },
}

function post(headers: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    payload: JSON.stringify(INITIALIZE),
  })
}

describe('/mcp: Host and Origin (DNS rebinding protection)', () => {
  it('answers a loopback Host with the MCP initialize result', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await post({ host: '127.0.0.1:8080', authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(200)
    expect(res.json().result.serverInfo.name).toBe('ocelog')
  })

  it('answers 403 to a Host that is not one of the server’s names, before the key counts', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await post({ host: 'attacker.example:8080', authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(403)
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(res.json()).toMatchObject({ type: 'urn:ocelog:problem:host-not-allowed', title: 'Host not allowed', status: 403 })
    expect(res.json().detail).toContain('attacker.example')
    expect(res.headers['ratelimit-remaining']).toBeUndefined()
  })

  it('answers 403 to an Origin of another site', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await post({ host: 'localhost:8080', origin: 'http://attacker.example', authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ type: 'urn:ocelog:problem:host-not-allowed', title: 'Host not allowed', status: 403 })
    expect(res.json().detail).toContain('Origin http://attacker.example')
  })

  it('accepts an Origin of the server itself', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await post({ host: 'localhost:8080', origin: 'http://localhost:8080', authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(200)
  })

  it('allows loopback names by default', () => {
    expect(defaultAllowedHosts()).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', '[::1]']))
  })
})

describe('/mcp: datasets', () => {
  it('answers every key from its own dataset only', async () => {
    const a = await t.newKey()
    const b = await t.newKey()
    const sent = await t.app.inject({
      method: 'POST',
      url: '/v1/event',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ event: 'Only In A', timestamp: '2024-05-01T10:00:00Z', objects: [{ type: 'order', id: 'o1' }] }),
    })
    expect(sent.statusCode).toBe(200)
    await t.projector.catchUp()
    const call = (key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_event_types', arguments: {} } }),
      })
    const seenByA = (await call(a.key)).json().result.structuredContent
    const seenByB = (await call(b.key)).json().result.structuredContent
    expect([seenByA.dataset_id, seenByA.event_types.map((e: { name: string }) => e.name)]).toEqual([a.dataset_id, ['Only In A']])
    expect([seenByB.dataset_id, seenByB.event_types]).toEqual([b.dataset_id, []])
  })

  it('answers performance, variants and type_relations from the key’s own dataset only', async () => {
    const a = await t.newKey()
    const b = await t.newKey()
    const sent = await t.app.inject({
      method: 'POST',
      url: '/v1/event',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ event: 'Only In A', timestamp: '2024-05-01T10:00:00Z', objects: [{ type: 'order', id: 'o1' }] }),
    })
    expect(sent.statusCode).toBe(200)
    await t.projector.catchUp()
    /** One call with a fresh key of `datasetId` (the test app's budget is a few requests per key). */
    const tool = async (datasetId: string, name: string, args: Record<string, unknown>) => {
      const key = await t.newKey({ datasetId, scopes: ['process:read'] })
      const res = await t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key.key}` },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } }),
      })
      return res.json().result.structuredContent
    }
    const seen = async (datasetId: string) => ({
      performance: (await tool(datasetId, 'performance', {})).activities.map((x: { activity: string }) => x.activity),
      variants: (await tool(datasetId, 'variants', { object_type: 'order' })).variants.map((v: { activities: string[] }) => v.activities),
      relations: (await tool(datasetId, 'type_relations', {})).activity_object_types.map((r: { activity: string }) => r.activity),
    })
    expect(await seen(a.dataset_id)).toEqual({ performance: ['Only In A'], variants: [['Only In A']], relations: ['Only In A'] })
    expect(await seen(b.dataset_id)).toEqual({ performance: [], variants: [], relations: [] })
  })
})

describe('/mcp: keys and scopes', () => {
  it('answers 401 to no key and to an unknown key', async () => {
    const none = await post({})
    const unknown = await post({ authorization: 'Bearer ocl_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
    expect([none.statusCode, unknown.statusCode]).toEqual([401, 401])
  })

  it('answers 403 to a key with only ingest:write', async () => {
    const k = await t.newKey({ scopes: ['ingest:write'] })
    const res = await post({ authorization: `Bearer ${k.key}` })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ type: 'urn:ocelog:problem:forbidden', title: 'Scope does not permit this endpoint' })
    expect(res.json().detail).toContain('process:read')
  })

  it('answers a key without scopes', async () => {
    const k = await t.newKey()
    expect((await post({ authorization: `Bearer ${k.key}` })).statusCode).toBe(200)
  })

  it('counts requests against the key’s budget and answers 429 once it is spent', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const codes: number[] = []
    for (let i = 0; i < 4; i++) codes.push((await post({ authorization: `Bearer ${k.key}` })).statusCode)
    expect(codes).toEqual([200, 200, 200, 429])
  })

  it('answers 405 to GET: the endpoint is stateless', async () => {
    const k = await t.newKey()
    const res = await t.app.inject({ method: 'GET', url: '/mcp', headers: { authorization: `Bearer ${k.key}`, accept: 'text/event-stream' } })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('POST')
  })
})
