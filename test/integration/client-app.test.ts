/**
 * Integration: the TypeScript client (`@ocelog/client`) against the real Ocelog app (test-app: a real
 * SQLite file, listening on a real socket of 127.0.0.1): batching, item failures, single-item calls,
 * health, queue mode, gzip bodies, and that the log holds each accepted item once. The client's own
 * tests, against a scripted server, are in clients/typescript/test/.
 */
import { OcelogClient, OcelogQueueError, OcelogRequestError } from '@ocelog/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventInput } from '../../src/schemas/api.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

/** A UUIDv7 (RFC 9562 § 5.7), as the client makes idempotency keys. */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
/** A timer that never fires within a test: batches go out only by flushAt, flush() or close(). */
const NO_TIMER = 3_600_000

/** `n` events of type Create Order, one second apart from 2024-01-01, each on order o<from + i>. */
function events(n: number, from = 0): EventInput[] {
  return Array.from({ length: n }, (_, i) => ({
    event: 'Create Order',
    timestamp: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(),
    objects: [{ type: 'order', id: `o${String(from + i)}`, qualifier: 'order' }],
  }))
}

describe('OcelogClient against the Ocelog app', () => {
  let t: TestApp
  let baseUrl: string
  let key: string
  let datasetId: string

  beforeAll(async () => {
    t = await makeTestApp()
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
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

  it('declares types once under the idempotency key it gives them, and throws a rejected error naming the field for a bad one', async () => {
    const client = new OcelogClient({ baseUrl, apiKey: key })
    const body = { event_types: [{ name: 'pay order', attributes: [{ name: 'amount', type: 'float' as const }] }] }
    const first = await client.declareTypes({ ...body, idempotency_key: 'client-types-1' })
    const again = await client.declareTypes({ ...body, idempotency_key: 'client-types-1' })
    expect([first, again]).toEqual([
      { success: true, event_types: 1, object_types: 0, duplicate: false },
      { success: true, event_types: 1, object_types: 0, duplicate: true },
    ])
    const unkeyed = await client.declareTypes({ object_types: [{ name: 'warehouse', attributes: [] }] })
    expect(unkeyed.duplicate).toBe(false)
    const declared = (await t.log.readStream(datasetId, null, 100_000)).filter((r) => r.type === 'TypesDeclared')
    expect(declared.map((r) => r.idempotency?.key)).toEqual(['client-types-1', expect.stringMatching(UUID_V7)])
    const error = await client.declareTypes({ event_types: [{ name: '', attributes: [] }] }).catch((e: unknown) => e)
    expect(error).toMatchObject({ kind: 'rejected', status: 422 })
    expect((error as OcelogRequestError).errors.map((x) => x.path)).toEqual(['/event_types/0/name'])
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

describe('OcelogClient queue against the Ocelog app', () => {
  let t: TestApp
  let baseUrl: string

  beforeAll(async () => {
    t = await makeTestApp()
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('records every enqueued event and object once, and flush resolves after they are answered', async () => {
    const key = await t.newKey()
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({ baseUrl, apiKey: key.key, flushIntervalMs: NO_TIMER, onError: (e) => errors.push(e) })
    for (const e of events(250)) await client.enqueueEvent(e)
    await client.enqueueObject({ type: 'order', id: 'o1', properties: { status: 'paid' } })
    await client.flush()

    expect(errors).toEqual([])
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 251, queued: 0, recorded: 251, failed: 0, dropped: 0 }))
    const stored = await t.log.readStream(key.dataset_id, null, 100_000)
    const ids = stored.flatMap((r) => (r.type === 'EventRecorded' ? [r.data.objects[0]?.id] : []))
    expect(ids).toEqual(events(250).map((e) => e.objects[0]?.id))
    expect(stored.filter((r) => r.type === 'ObjectUpserted').map((r) => r.data.properties)).toEqual([{ status: 'paid' }])
    await client.close()
  })

  it('reports an item the service rejects to onError with the item and its field errors, and records the others', async () => {
    const key = await t.newKey()
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({ baseUrl, apiKey: key.key, flushIntervalMs: NO_TIMER, onError: (e) => errors.push(e) })
    const bad: EventInput = { event: 'Create Order', timestamp: 'yesterday', objects: [{ type: 'order', id: 'x' }] }
    await client.enqueueEvent(events(1)[0] as EventInput)
    await client.enqueueEvent(bad)
    await client.enqueueEvent(events(1, 1)[0] as EventInput)
    await client.close()

    expect(errors).toHaveLength(1)
    const e = errors[0]
    expect(e).toBeInstanceOf(OcelogQueueError)
    expect(e?.kind).toBe('rejected')
    expect(e?.status).toBe(200)
    expect(e?.queued).toEqual({ type: 'event', item: { ...bad, idempotency_key: expect.stringMatching(UUID_V7) } })
    expect(e?.errors).toEqual([{ path: '/timestamp', message: expect.stringContaining('ISO 8601') }])
    expect(e?.message).toMatch(/^event "Create Order" not recorded \(rejected\): \/timestamp: /)
    expect(client.stats()).toEqual(expect.objectContaining({ recorded: 2, failed: 1 }))
    expect(await t.log.readStream(key.dataset_id, null, 100)).toHaveLength(2)
  })

  it('counts items enqueued again under their idempotency keys as duplicates among the recorded, and records each once', async () => {
    const key = await t.newKey()
    const errors: OcelogQueueError[] = []
    const client = new OcelogClient({ baseUrl, apiKey: key.key, flushIntervalMs: NO_TIMER, onError: (e) => errors.push(e) })
    const backlog = events(150, 7000).map((e, i) => ({ ...e, idempotency_key: `backlog-${String(i)}` }))
    const objects = [0, 1].map((i) => ({ type: 'order', id: `o${String(7000 + i)}`, properties: { status: 'paid' }, idempotency_key: `object-${String(i)}` }))
    const enqueueBacklog = async () => {
      for (const e of backlog) await client.enqueueEvent(e)
      for (const o of objects) await client.enqueueObject(o)
    }
    await enqueueBacklog()
    await client.flush()
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 152, recorded: 152, duplicates: 0, failed: 0 }))

    // The backlog again, as a sender re-sends it after a crash, then 20 new events: the 152 come back as duplicates.
    await enqueueBacklog()
    const fresh = events(20, 7150).map((e, i) => ({ ...e, idempotency_key: `fresh-${String(i)}` }))
    for (const e of fresh) await client.enqueueEvent(e)
    await client.flush()
    expect(errors).toEqual([])
    expect(client.stats()).toEqual(expect.objectContaining({ enqueued: 324, queued: 0, recorded: 324, duplicates: 152, failed: 0, dropped: 0 }))

    const stored = await t.log.readStream(key.dataset_id, null, 100_000)
    const keys = stored.map((r) => r.idempotency?.key)
    expect(keys).toHaveLength(172)
    expect(new Set(keys)).toEqual(new Set([...backlog, ...objects, ...fresh].map((item) => item.idempotency_key)))
    await client.close()
  })
})

describe('OcelogClient compress against the Ocelog app', () => {
  it('gzips large batches by default, and the Ocelog service records them as sent', async () => {
    const t = await makeTestApp()
    try {
      const key = await t.newKey()
      const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
      const client = new OcelogClient({ baseUrl: url, apiKey: key.key })
      // About 1 KiB of properties each: 100 make a body of about 110 KiB, above the client's gzip threshold of 64 KiB.
      const input = events(100).map((e, i) => ({ ...e, properties: { note: `order ${String(i)} `.repeat(80), unicode: 'Zürich – 東京' } }))
      const result = await client.sendEvents(input)
      expect([result.accepted.length, result.failures.length]).toEqual([100, 0])
      const records = await t.log.readStream(key.dataset_id, null, 1000)
      expect(records.map((r) => (r.type === 'EventRecorded' ? r.data.properties : null))).toEqual(input.map((e) => e.properties))
    } finally {
      await t.close()
    }
  })
})
