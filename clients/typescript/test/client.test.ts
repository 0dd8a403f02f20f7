/**
 * The client over real HTTP, against a scripted node:http server (./helpers/scripted-api.ts) for the
 * failures the real service cannot be made to produce on demand (5xx, dropped connections, 413 at a
 * chosen size): retries, back-off, splits, and never re-sending accepted items. The scripted answers
 * follow the shapes of src/contract/schemas.ts. The client against the real service is tested in the
 * service's test/integration/client-app.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { OcelogClient, type RetryNotice } from '../src/index.js'
import type { EventInput } from '../src/api.js'
import { acceptAll, events, json, type Scripted, scripted, UUID_V7 } from './helpers/scripted-api.js'

const fast = { baseDelayMs: 5, maxDelayMs: 20 }

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
    // The second call starts when the client has the 429 (its onRetry notice), not after a guessed delay.
    let rateLimited: () => void = () => {}
    const noticed = new Promise<void>((resolve) => {
      rateLimited = resolve
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 1, retry: fast, onRetry: () => rateLimited() })
    const [a, b] = await Promise.all([client.sendEvents(events(5)), noticed.then(() => client.sendEvents(events(5, 5)))])
    expect(a.accepted).toHaveLength(5)
    expect(b.accepted).toHaveLength(5)
    // The second call's request waited out the first one's Retry-After second with it.
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
