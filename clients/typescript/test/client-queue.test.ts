/**
 * The client's queue-and-flush mode (enqueueEvent, enqueueObject, flush, close) over real HTTP,
 * against the scripted server (./helpers/scripted-api.ts), where the test must control the answers:
 * when batches go out, a full queue that blocks or drops, 429/413/5xx in queue mode. Against the
 * real service: the service's test/integration/client-app.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { OcelogClient, type OcelogQueueError } from '../src/index.js'
import type { EventInput } from '../src/api.js'
import { acceptAll, events, json, type Scripted, scripted, UUID_V7 } from './helpers/scripted-api.js'

const fast = { baseDelayMs: 5, maxDelayMs: 20 }
/** A timer that never fires within a test: batches go out only by flushAt, flush() or close(). */
const NO_TIMER = 3_600_000

/**
 * A scripted server whose answers wait behind a gate: while it is shut, every request is held
 * (`held` counts them); open() answers the held ones and every later one at once.
 */
async function gated(): Promise<{ server: Scripted; held: () => number; open: () => void }> {
  const waiting: (() => void)[] = []
  let shut = true
  const server = await scripted((_req, body, n, res) => {
    if (shut) waiting.push(() => acceptAll(res, body, n))
    else acceptAll(res, body, n)
  })
  return {
    server,
    held: () => waiting.length,
    open: () => {
      shut = false
      for (const answer of waiting.splice(0)) answer()
    },
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

describe('OcelogClient queue', () => {
  let server: Scripted | null = null
  afterEach(async () => {
    await server?.close()
    server = null
  })

  it('sends a batch as soon as flushAt items wait, without flush()', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', flushAt: 10, flushIntervalMs: NO_TIMER })
    for (const e of events(10)) await client.enqueueEvent(e)
    await expect.poll(() => client.stats().recorded).toBe(10)
    for (const e of events(9, 10)) await client.enqueueEvent(e)
    await settle()
    expect(client.stats().queued).toBe(9)
    await client.close()
    expect(server.bodies.map((b) => b.events?.length)).toEqual([10, 9])
  })

  it('sends what waits when the timer fires, fewer than flushAt', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', flushIntervalMs: 20 })
    for (const e of events(3)) await client.enqueueEvent(e)
    await expect.poll(() => client.stats().recorded).toBe(3)
    expect(server.bodies.map((b) => b.events?.map((e) => e.objects[0]?.id))).toEqual([['o0', 'o1', 'o2']])
    await client.close()
  })

  it('sends in enqueue order, one batch at a time, events and objects in separate batches', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n), 5)
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 4, flushIntervalMs: NO_TIMER })
    const [e0, e1, e2] = events(3)
    await client.enqueueEvent(e0 as EventInput)
    await client.enqueueEvent(e1 as EventInput)
    await client.enqueueObject({ type: 'order', id: 'o0', properties: { v: 1 } })
    await client.enqueueObject({ type: 'order', id: 'o0', properties: { v: 2 } })
    await client.enqueueEvent(e2 as EventInput)
    await client.flush()
    expect(server.requests.map((r) => [r.url, r.body.events?.length ?? r.body.objects?.length])).toEqual([
      ['/v1/event/batch', 2],
      ['/v1/object/batch', 2],
      ['/v1/event/batch', 1],
    ])
    expect(server.bodies[1]?.objects).toEqual([
      { type: 'order', id: 'o0', properties: { v: 1 }, idempotency_key: expect.stringMatching(UUID_V7) },
      { type: 'order', id: 'o0', properties: { v: 2 }, idempotency_key: expect.stringMatching(UUID_V7) },
    ])
    expect(server.maxInFlight).toBe(1)
    await client.close()
  })

  it('makes enqueue wait for room while the queue is full (whenFull: block), then sends every item', async () => {
    const gate = await gated()
    server = gate.server
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', flushAt: 5, maxQueueSize: 10, flushIntervalMs: NO_TIMER })
    for (const e of events(15)) await client.enqueueEvent(e)
    await expect.poll(() => gate.held()).toBe(1)
    let admitted = false
    const last = client.enqueueEvent(events(1, 15)[0] as EventInput).then((queued) => {
      admitted = queued
    })
    await settle()
    expect(admitted).toBe(false)
    expect(client.stats().queued).toBe(11)

    gate.open()
    await last
    expect(admitted).toBe(true)
    await client.flush()
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 16, recorded: 16, dropped: 0 }))
    expect(server.bodies.flatMap((b) => b.events?.map((e) => e.objects[0]?.id))).toEqual(events(16).map((e) => e.objects[0]?.id))
    await client.close()
  })

  it('drops an item when the queue is full (whenFull: drop), counts it and reports it to onError', async () => {
    const gate = await gated()
    server = gate.server
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({
      baseUrl: server.url,
      apiKey: 'k',
      flushAt: 5,
      maxQueueSize: 10,
      whenFull: 'drop',
      flushIntervalMs: NO_TIMER,
      onError: (e) => errors.push(e),
    })
    for (const e of events(15)) await client.enqueueEvent(e)
    await expect.poll(() => gate.held()).toBe(1)
    const extra = events(1, 15)[0] as EventInput
    expect(await client.enqueueEvent(extra)).toBe(false)
    expect(errors.map((e) => [e.kind, e.status, e.queued])).toEqual([
      ['dropped', null, { type: 'event', item: { ...extra, idempotency_key: expect.stringMatching(UUID_V7) } }],
    ])
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 15, queued: 10, dropped: 1 }))

    gate.open()
    await client.close()
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 15, failed: 0, dropped: 1 }))
  })

  it('waits out a 429 in queue mode and loses nothing, counting the 429', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 2) json(res, 429, { title: 'Rate limit exceeded', detail: 'wait' }, { 'retry-after': '1' })
      else acceptAll(res, body, n)
    })
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, flushIntervalMs: NO_TIMER, onError: (e) => errors.push(e) })
    for (const e of events(300)) await client.enqueueEvent(e)
    await client.flush()
    expect(errors).toEqual([])
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 300, rateLimited: 1, retries: 1, requests: 4 }))
    const sent = server.bodies.flatMap((b) => b.events?.map((e) => e.objects[0]?.id))
    // The second batch went twice: once answered 429, once recorded.
    expect(sent.slice(100, 200)).toEqual(sent.slice(200, 300))
    expect(new Set(sent)).toEqual(new Set(events(300).map((e) => e.objects[0]?.id)))
    await client.close()
  })

  it('splits a queue batch answered 413 and records every item', async () => {
    server = await scripted((_req, body, n, res) => {
      if ((body.events?.length ?? 0) > 40) json(res, 413, { title: 'Request body too large', detail: 'too large' })
      else acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, flushIntervalMs: NO_TIMER })
    for (const e of events(100)) await client.enqueueEvent(e)
    await client.flush()
    expect(server.bodies.map((b) => b.events?.length)).toEqual([100, 50, 25, 25, 50, 25, 25])
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 100, failed: 0 }))
    await client.close()
  })

  it('adds up the duplicates of every batch answer, the halves of a 413 split and object batches included', async () => {
    server = await scripted((_req, body, n, res) => {
      const items = body.events?.length ?? body.objects?.length ?? 0
      if (items > 40) json(res, 413, { title: 'Request body too large', detail: 'too large' })
      else acceptAll(res, body, n, { duplicates: body.objects !== undefined ? 2 : Math.floor(items / 5) })
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, flushIntervalMs: NO_TIMER })
    for (const e of events(100)) await client.enqueueEvent(e)
    for (let i = 0; i < 3; i++) await client.enqueueObject({ type: 'order', id: `o${String(i)}` })
    await client.flush()
    expect(server.bodies.map((b) => b.events?.length ?? b.objects?.length)).toEqual([100, 50, 25, 25, 50, 25, 25, 3])
    // Four event answers of 25 items with 5 duplicates each, and one object answer with 2.
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 103, recorded: 103, duplicates: 22, failed: 0 }))
    await client.close()
  })

  it('reports every item of a batch that outlasts the retries as retries-exhausted', async () => {
    server = await scripted((_req, _body, _n, res) => json(res, 503, { title: 'Service unavailable', detail: 'log unavailable' }))
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({
      baseUrl: server.url,
      apiKey: 'k',
      retry: { ...fast, maxAttempts: 2 },
      flushIntervalMs: NO_TIMER,
      onError: (e) => errors.push(e),
    })
    for (const e of events(3)) await client.enqueueEvent(e)
    await client.flush()
    expect(errors.map((e) => [e.kind, e.status, e.queued.type === 'event' ? e.queued.item.objects[0]?.id : ''])).toEqual([
      ['retries-exhausted', 503, 'o0'],
      ['retries-exhausted', 503, 'o1'],
      ['retries-exhausted', 503, 'o2'],
    ])
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 0, failed: 3, requests: 2 }))
    await client.close()
  })

  it('keeps sending when onError throws', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) json(res, 400, { title: 'Bad request', detail: 'no' })
      else acceptAll(res, body, n)
    })
    const client = new OcelogClient({
      baseUrl: server.url,
      apiKey: 'k',
      flushAt: 2,
      flushIntervalMs: NO_TIMER,
      onError: () => {
        throw new Error('callback failed')
      },
    })
    for (const e of events(4)) await client.enqueueEvent(e)
    await client.flush()
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 2, failed: 2 }))
    await client.close()
  })

  it('flushes on close, and rejects enqueues after it', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', flushIntervalMs: NO_TIMER })
    for (const e of events(7)) await client.enqueueEvent(e)
    await client.close()
    expect(server.bodies.map((b) => b.events?.length)).toEqual([7])
    const late = events(1, 7)[0] as EventInput
    await expect(client.enqueueEvent(late)).rejects.toMatchObject({ name: 'OcelogQueueError', kind: 'aborted', queued: { type: 'event', item: late } })
    expect(server.bodies).toHaveLength(1)
  })

  it('resolves flush at once when nothing was enqueued', async () => {
    const client = new OcelogClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' })
    await client.flush()
    expect(client.stats()).toEqual({ enqueued: 0, queued: 0, recorded: 0, duplicates: 0, failed: 0, dropped: 0, requests: 0, retries: 0, rateLimited: 0 })
  })

  it('refuses queue options out of range', () => {
    const base = { baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }
    expect(() => new OcelogClient({ ...base, flushAt: 0 })).toThrow(/flushAt must be a whole number from 1 to 100, got 0/)
    expect(() => new OcelogClient({ ...base, flushAt: 101 })).toThrow(/flushAt/)
    expect(() => new OcelogClient({ ...base, maxQueueSize: 0 })).toThrow(/maxQueueSize/)
    expect(() => new OcelogClient({ ...base, flushIntervalMs: 0.5 })).toThrow(/flushIntervalMs/)
  })
})
