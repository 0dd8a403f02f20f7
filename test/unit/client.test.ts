/**
 * The client (clients/typescript) over real HTTP.
 * - Against the real Ocelog app (test-app: real SQLite file, listening on a real socket): batching,
 *   item failures, single-item calls, health, and that the log holds each accepted item once.
 * - Against a scripted node:http server for the failures the real service cannot be made to
 *   produce on demand (5xx, dropped connections, 413 at a chosen size): retries, back-off, splits,
 *   and never re-sending accepted items. The scripted answers follow the shapes of src/schemas/api.ts.
 */
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { OcelogClient, OcelogRequestError, type RetryNotice } from '../../clients/typescript/src/index.js'
import type { EventInput } from '../../src/schemas/api.js'
import { acceptAll, events, json, type Scripted, scripted, UUID_V7 } from '../helpers/scripted-api.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

const fast = { baseDelayMs: 5, maxDelayMs: 20 }

describe('OcelogClient against the Ocelog app', () => {
  let t: TestApp
  let baseUrl: string
  let key: string
  let datasetId: string

  beforeAll(async () => {
    t = await makeTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${String((t.app.server.address() as AddressInfo).port)}`
    const created = await t.newKey()
    key = created.key
    datasetId = created.dataset_id
  })
  afterAll(async () => {
    await t.close()
  })

  it('records items sent twice with their keys once, and answers the second time with the event_ids first recorded', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const input = events(120, 5000).map((e, i) => ({ ...e, idempotency_key: `twice-${String(i)}` }))
    const before = (await t.log.readStream(datasetId, null, 100_000)).length
    const first = await client.sendEvents(input)
    const again = await client.sendEvents(input)
    expect([first.failures, again.failures]).toEqual([[], []])
    expect(again.accepted.map((a) => a.value)).toEqual(first.accepted.map((a) => a.value))
    expect((await t.log.readStream(datasetId, null, 100_000)).length - before).toBe(120)
  })

  it('sends any number of events in batches of at most 100 and returns every event_id once', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key, concurrency: 3 })
    const sizes: number[] = []
    const before = (await t.log.readStream(datasetId, null, 100_000)).length
    const result = await client.sendEvents(events(250), { onBatch: (n) => sizes.push(n.items) })
    expect(result.failures).toEqual([])
    expect(result.accepted.map((a) => a.index)).toEqual(Array.from({ length: 250 }, (_, i) => i))
    expect(new Set(result.accepted.map((a) => a.value)).size).toBe(250)
    expect(sizes.sort((a, b) => a - b)).toEqual([50, 100, 100])
    expect(result.requests).toBe(3)
    const stored = await t.log.readStream(datasetId, null, 100_000)
    expect(stored.length - before).toBe(250)
  })

  it('reports a rejected item with its index, the item and the reason, and records the others', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const input = events(150, 1000)
    const bad: EventInput = { event: 'Create Order', timestamp: 'yesterday', objects: [{ type: 'order', id: 'x' }] }
    input[120] = bad
    const result = await client.sendEvents(input)
    expect(result.accepted).toHaveLength(149)
    expect(result.failures).toHaveLength(1)
    const f = result.failures[0]
    expect(f?.index).toBe(120)
    expect(f?.item).toEqual({ ...bad, idempotency_key: expect.stringMatching(UUID_V7) })
    expect(f?.kind).toBe('rejected')
    expect(f?.reason).toMatch(/^Event 120: \/timestamp: /)
    expect(f?.errors).toEqual([{ path: '/timestamp', message: expect.stringContaining('ISO 8601') }])
    expect(result.retries).toBe(0)
  })

  it('upserts objects in batches and returns the object results by index', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const objects = Array.from({ length: 120 }, (_, i) => ({ type: 'product', id: `p${String(i)}`, properties: { price: i } }))
    const result = await client.upsertObjects(objects)
    expect(result.failures).toEqual([])
    expect(result.accepted[119]).toEqual({ index: 119, value: expect.objectContaining({ object_type: 'product', external_id: 'p119', created: true }) })
  })

  it('records one event and one object through the single-item endpoints', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const e = await client.sendEvent(events(1, 5000)[0] ?? { event: 'x', objects: [] })
    expect(e).toMatchObject({ success: true, event_type: 'Create Order', objects_count: 1 })
    const o = await client.upsertObject({ type: 'product', id: 'single', properties: { colour: 'red' } })
    expect(o).toMatchObject({ success: true, object_type: 'product', external_id: 'single', created: true })
  })

  it('throws a rejected OcelogRequestError with the field errors for an invalid single event', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const error = await client.sendEvent({ event: '', objects: [{ type: 'order', id: '1' }] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OcelogRequestError)
    expect(error).toMatchObject({ kind: 'rejected', status: 422 })
    expect((error as OcelogRequestError).errors.map((x) => x.path)).toEqual(['/event'])
  })

  it('answers health with the key dataset', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    expect(await client.health()).toMatchObject({ status: 'ok', dataset_id: datasetId })
  })

  it('stops a bulk call at a 401 and reports the items it did not send', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: 'ocl_0000000000000000_wrong', concurrency: 1 })
    const result = await client.sendEvents(events(250))
    expect(result.accepted).toEqual([])
    expect(result.aborted).toMatch(/^401/)
    expect(result.failures.filter((f) => f.kind === 'request-rejected')).toHaveLength(100)
    expect(result.failures.filter((f) => f.kind === 'aborted')).toHaveLength(150)
    expect(result.requests).toBe(1)
  })
})

function eventIdsSent(s: Scripted): string[] {
  return s.bodies.flatMap((b) => (b.events ?? []).map((e) => e.objects[0]?.id ?? ''))
}

describe('OcelogClient retries', () => {
  let server: Scripted | null = null
  afterEach(async () => {
    await server?.close()
    server = null
  })

  it('waits out Retry-After on a 429 before sending again', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1)
        json(
          res,
          429,
          { type: 'urn:ocelog:problem:rate-limited', title: 'Rate limit exceeded', status: 429, detail: 'retry after 1 s' },
          { 'retry-after': '1' },
        )
      else acceptAll(res, body, n)
    })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, onRetry: (x) => notices.push(x) })
    const started = Date.now()
    const result = await client.sendEvents(events(10))
    expect(Date.now() - started).toBeGreaterThanOrEqual(990)
    expect(result.accepted).toHaveLength(10)
    expect(notices).toEqual([expect.objectContaining({ cause: 'rate-limited', delayMs: 1000, status: 429, items: 10 })])
    expect(result.retries).toBe(1)
  })

  it('pauses every request of the client while one waits out a 429', async () => {
    const times: number[] = []
    server = await scripted((_req, body, n, res) => {
      times.push(Date.now())
      if (n === 1) json(res, 429, { title: 'Rate limit exceeded', detail: 'wait' }, { 'retry-after': '1' })
      else acceptAll(res, body, n)
    }, 50)
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 1, retry: fast })
    const [a, b] = await Promise.all([client.sendEvents(events(5)), new Promise((r) => setTimeout(r, 100)).then(() => client.sendEvents(events(5, 5)))])
    expect(a.accepted).toHaveLength(5)
    expect(b.accepted).toHaveLength(5)
    // The second call's request came after the first one's Retry-After second, not 100 ms in.
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(950)
  })

  it('retries 5xx with back-off and records each event once', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n <= 2) json(res, 503, { title: 'Service unavailable', detail: 'log unavailable' })
      else acceptAll(res, body, n)
    })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, onRetry: (x) => notices.push(x) })
    const result = await client.sendEvents(events(3))
    expect(result.accepted.map((a) => a.value)).toEqual(['3-0', '3-1', '3-2'])
    expect(notices.map((x) => [x.cause, x.attempt])).toEqual([
      ['server-error', 1],
      ['server-error', 2],
    ])
    expect(result.requests).toBe(3)
  })

  it('gives every item without a key a UUIDv7 idempotency key, keeps a key the caller gave, and sends the same keys when it retries', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) json(res, 503, { title: 'Service unavailable', detail: 'log unavailable' })
      else acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast })
    const input = events(3)
    input[1] = { ...(input[1] as EventInput), idempotency_key: 'caller-key' }
    await client.sendEvents(input)
    const keys = server.requests.map((r) => (r.body.events ?? []).map((e) => e.idempotency_key))
    expect(keys).toHaveLength(2)
    expect(keys[1]).toEqual(keys[0])
    expect(keys[0]).toEqual([expect.stringMatching(UUID_V7), 'caller-key', expect.stringMatching(UUID_V7)])
    expect(new Set(keys[0]).size).toBe(3)
    expect(input[0]?.idempotency_key).toBeUndefined()
  })

  it('retries a dropped connection', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) res.socket?.destroy()
      else acceptAll(res, body, n)
    })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, onRetry: (x) => notices.push(x) })
    const result = await client.sendEvents(events(2))
    expect(result.accepted).toHaveLength(2)
    expect(notices.map((x) => x.cause)).toEqual(['network'])
  })

  it('gives up after maxAttempts and reports every item of the batch as retries-exhausted', async () => {
    server = await scripted((_req, _body, _n, res) => json(res, 500, { title: 'Internal error', detail: 'boom' }))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: { ...fast, maxAttempts: 3 } })
    const result = await client.sendEvents(events(4))
    expect(result.accepted).toEqual([])
    expect(result.failures.map((f) => [f.index, f.kind, f.status])).toEqual([0, 1, 2, 3].map((i) => [i, 'retries-exhausted', 500]))
    expect(result.failures[0]?.reason).toBe('500 Internal error: boom (after 3 attempts)')
    expect(server.bodies).toHaveLength(3)
  })

  it('re-sends only the batch that failed, never the accepted ones', async () => {
    let failedOnce = false
    server = await scripted((_req, body, n, res) => {
      const first = (body.events?.[0]?.objects[0]?.id ?? '') === 'o100'
      if (first && !failedOnce) {
        failedOnce = true
        json(res, 502, { title: 'Bad gateway', detail: '' })
      } else acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 1, retry: fast })
    const result = await client.sendEvents(events(300))
    expect(result.accepted).toHaveLength(300)
    const sent = eventIdsSent(server)
    expect(sent).toHaveLength(400)
    const counts = new Map<string, number>()
    for (const id of sent) counts.set(id, (counts.get(id) ?? 0) + 1)
    expect([...counts].filter(([, c]) => c > 1).map(([id]) => id)).toEqual(Array.from({ length: 100 }, (_, i) => `o${String(100 + i)}`))
  })

  it('does not re-send items rejected inside a 200 batch answer', async () => {
    server = await scripted((_req, body, n, res) => {
      const count = body.events?.length ?? 0
      json(res, 200, {
        success: false,
        processed: count - 1,
        failed: 1,
        event_ids: Array.from({ length: count - 1 }, (_, i) => `${String(n)}-${String(i)}`),
        errors: ['Event 0: /event: must NOT have fewer than 1 characters'],
        error_details: [{ index: 0, path: '/event', message: 'must NOT have fewer than 1 characters' }],
      })
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast })
    const result = await client.sendEvents(events(3))
    expect(server.bodies).toHaveLength(1)
    expect(result.failures.map((f) => [f.index, f.kind])).toEqual([[0, 'rejected']])
    expect(result.accepted.map((a) => [a.index, a.value])).toEqual([
      [1, '1-0'],
      [2, '1-1'],
    ])
  })

  it('splits a batch answered 413 until the halves fit', async () => {
    server = await scripted((_req, body, n, res) => {
      if ((body.events?.length ?? 0) > 30) json(res, 413, { title: 'Request body too large', detail: 'too large' })
      else acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast })
    const result = await client.sendEvents(events(100))
    expect(result.accepted.map((a) => a.index)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(server.bodies.map((b) => b.events?.length)).toEqual([100, 50, 25, 25, 50, 25, 25])
  })

  it('keeps at most `concurrency` requests in flight', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n), 30)
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 3 })
    await Promise.all([client.sendEvents(events(1000)), client.sendEvents(events(500, 1000))])
    expect(server.maxInFlight).toBe(3)
  })

  it('stops at the abort signal and reports what it did not send', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n), 50)
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 1 })
    const abort = new AbortController()
    const result = await client.sendEvents(events(500), { signal: abort.signal, onBatch: () => abort.abort() })
    expect(result.accepted).toHaveLength(100)
    expect(result.failures).toHaveLength(400)
    expect(result.failures.every((f) => f.kind === 'aborted')).toBe(true)
    expect(result.aborted).toBe('aborted by the caller')
  })
})
