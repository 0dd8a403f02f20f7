/**
 * The client's request compression (option `compress`, RFC 9110 § 8.4 Content-Encoding) against a
 * node:http server that decompresses what it gets (./helpers/scripted-api.ts) and checks the body.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { OcelogClient } from '../src/index.js'
import type { EventInput } from '../src/api.js'
import { acceptAll, json, type Scripted, scripted } from './helpers/scripted-api.js'

/** `n` events that each carry about 1 KiB of properties: 100 of them make a body of about 110 KiB. Their idempotency keys are given, so the client sends them as they are. */
function heavyEvents(n: number): EventInput[] {
  return Array.from({ length: n }, (_, i) => ({
    event: 'Create Order',
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    objects: [{ type: 'order', id: `o${String(i)}` }],
    properties: { note: `order ${String(i)} `.repeat(80), unicode: 'Zürich – 東京' },
    idempotency_key: `k${String(i)}`,
  }))
}

describe('OcelogClient compress', () => {
  let server: Scripted | null = null
  afterEach(async () => {
    await server?.close()
    server = null
  })

  it('gzips a body of at least 64 KiB with Content-Encoding: gzip, and the server reads back what was sent', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: true })
    const input = heavyEvents(100)
    const result = await client.sendEvents(input)

    expect(result.accepted).toHaveLength(100)
    const [request] = server.requests
    expect(request?.headers['content-encoding']).toBe('gzip')
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.body).toEqual({ events: input })
    const plainBytes = Buffer.byteLength(JSON.stringify({ events: input }))
    expect(plainBytes).toBeGreaterThanOrEqual(64 * 1024)
    expect(request?.wireBytes).toBeLessThan(plainBytes / 4)
  })

  it('sends a body under the threshold as plain JSON', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: true })
    const input = heavyEvents(10)
    await client.sendEvents(input)
    const [request] = server.requests
    expect(request?.headers['content-encoding']).toBeUndefined()
    expect(request?.wireBytes).toBe(Buffer.byteLength(JSON.stringify({ events: input })))
  })

  it('sends plain JSON with compress: false, whatever the size', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: false })
    const input = heavyEvents(100)
    await client.sendEvents(input)
    const [request] = server.requests
    expect(request?.headers['content-encoding']).toBeUndefined()
    expect(request?.body).toEqual({ events: input })
  })

  it('takes its threshold from compressMinBytes, for single-item calls too', async () => {
    server = await scripted((_req, _body, _n, res) =>
      json(res, 200, { success: true, event_id: 'e-1', event_type: 'Create Order', timestamp: '2024-01-01T00:00:00.000Z', objects_count: 1, message: 'ok' }),
    )
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: true, compressMinBytes: 0 })
    const [event] = heavyEvents(1)
    await client.sendEvent(event as EventInput)
    const [request] = server.requests
    expect(request?.url).toBe('/v1/event')
    expect(request?.headers['content-encoding']).toBe('gzip')
    expect(request?.body).toEqual(event)
  })

  it('sends the same gzip body again when it retries', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) json(res, 503, { title: 'Service unavailable', detail: 'log unavailable' })
      else acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: true, retry: { baseDelayMs: 5, maxDelayMs: 20 } })
    const input = heavyEvents(100)
    const result = await client.sendEvents(input)
    expect(result.accepted).toHaveLength(100)
    expect(server.requests.map((r) => r.headers['content-encoding'])).toEqual(['gzip', 'gzip'])
    expect(server.requests.map((r) => r.body)).toEqual([{ events: input }, { events: input }])
  })

  it('gzips queue batches too', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', compress: true, flushIntervalMs: 3_600_000 })
    const input = heavyEvents(100)
    for (const e of input) await client.enqueueEvent(e)
    await client.close()
    expect(server.requests.map((r) => [r.headers['content-encoding'], r.body])).toEqual([['gzip', { events: input }]])
  })

  it('refuses a negative compressMinBytes', () => {
    expect(() => new OcelogClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', compressMinBytes: -1 })).toThrow(/compressMinBytes/)
  })
})
