import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventBody, makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let key: string
let datasetId: string

beforeAll(async () => {
  t = await makeTestApp()
  const k = await t.newKey()
  key = k.key
  datasetId = k.dataset_id
})
afterAll(async () => t.close())

function post(url: string, payload: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'x-ocelog-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  })
}

async function recordedEventIds(): Promise<string[]> {
  return (await t.log.readStream(datasetId, null, 100_000)).flatMap((r) => (r.type === 'EventRecorded' ? [r.data.event_id] : []))
}

describe('POST /v1/event/batch', () => {
  it('records every valid item and answers the batch response field by field', async () => {
    const res = await post('/v1/event/batch', { events: [eventBody(1), eventBody(3)] })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['duplicates', 'error_details', 'errors', 'event_ids', 'failed', 'processed', 'success'])
    expect(body).toMatchObject({ success: true, processed: 2, failed: 0, duplicates: 0, errors: [], error_details: [] })
    expect(body.event_ids).toHaveLength(2)
    const recorded = await recordedEventIds()
    for (const id of body.event_ids) expect(recorded).toContain(id)
  })

  it('records valid items even when others fail, and names failures by 0-based index', async () => {
    const res = await post('/v1/event/batch', {
      events: [eventBody(1), { ...eventBody(1), timestamp: 'not-a-time' }, eventBody(2), { ...eventBody(1), objects: [{ type: 'x'.repeat(101), id: '1' }] }],
    })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.success).toBe(false)
    expect(body.processed).toBe(2)
    expect(body.failed).toBe(2)
    expect(body.event_ids).toHaveLength(2)
    expect(body.errors).toHaveLength(2)
    expect(body.errors[0]).toMatch(/^Event 1: \/timestamp: /)
    expect(body.errors[1]).toMatch(/^Event 3: \/objects\/0\/type: .*1 to 100 characters/)
    expect(body.error_details).toEqual([
      { index: 1, path: '/timestamp', message: expect.any(String) },
      { index: 3, path: '/objects/0/type', message: expect.any(String) },
    ])
    const recorded = await recordedEventIds()
    for (const id of body.event_ids) expect(recorded).toContain(id)
  })

  it('fails an item with 51 objects alone', async () => {
    const res = await post('/v1/event/batch', { events: [eventBody(51), eventBody(50)] })
    const body = res.json()
    expect(body).toMatchObject({ processed: 1, failed: 1 })
    expect(body.errors[0]).toMatch(/^Event 0: \/objects: /)
  })

  it('fails an item that is not an object', async () => {
    const res = await post('/v1/event/batch', { events: [42, eventBody(1)] })
    expect(res.json().errors[0]).toBe('Event 0: must be a JSON object (an event)')
  })

  it('accepts 100 events', async () => {
    const res = await post('/v1/event/batch', { events: Array.from({ length: 100 }, () => eventBody(1)) })
    expect(res.json()).toMatchObject({ success: true, processed: 100, failed: 0 })
  })

  it('rejects 101 events with 422 and records none', async () => {
    const before = (await recordedEventIds()).length
    const res = await post('/v1/event/batch', { events: Array.from({ length: 101 }, () => eventBody(1)) })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/events', message: 'has 101 items; a batch holds at most 100' }])
    expect((await recordedEventIds()).length).toBe(before)
  })

  it('rejects a body without events with 422', async () => {
    const res = await post('/v1/event/batch', { event: [] })
    expect(res.statusCode).toBe(422)
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/event', '/events'])
  })

  it('answers an empty batch with processed 0', async () => {
    const res = await post('/v1/event/batch', { events: [] })
    expect(res.json()).toMatchObject({ success: true, processed: 0, failed: 0, event_ids: [] })
  })

  it('keeps event ids in request order and time-ordered', async () => {
    const res = await post('/v1/event/batch', { events: [eventBody(1, { event: 'A' }), eventBody(1, { event: 'B' })] })
    const ids: string[] = res.json().event_ids
    const records = await t.log.readStream(datasetId, null, 100_000)
    const types = ids.map((id) => {
      const r = records.find((x) => x.type === 'EventRecorded' && x.data.event_id === id)
      return r?.type === 'EventRecorded' ? r.data.event_type : null
    })
    expect(types).toEqual(['A', 'B'])
    expect([...ids].sort()).toEqual(ids)
  })
})

describe('POST /v1/object/upsert', () => {
  it('answers created true for a new object, then false, with a stable object_id', async () => {
    const first = await post('/v1/object/upsert', { type: 'customer', id: 'c-upsert', properties: { tier: 'gold' } })
    const second = await post('/v1/object/upsert', { type: 'customer', id: 'c-upsert', properties: { city: 'Oslo' } })
    expect(first.statusCode).toBe(200)
    expect(first.json()).toEqual({ success: true, object_id: expect.any(String), object_type: 'customer', external_id: 'c-upsert', created: true })
    expect(second.json()).toMatchObject({ created: false, object_id: first.json().object_id })
  })

  it('answers created false for an object first seen inside an event', async () => {
    await post('/v1/event', { event: 'Register', objects: [{ type: 'customer', id: 'c-from-event' }] })
    const res = await post('/v1/object/upsert', { type: 'customer', id: 'c-from-event' })
    expect(res.json().created).toBe(false)
  })

  it('treats the same id under two types as two objects', async () => {
    const a = await post('/v1/object/upsert', { type: 'order', id: 'same-id' })
    const b = await post('/v1/object/upsert', { type: 'invoice', id: 'same-id' })
    expect(a.json().created).toBe(true)
    expect(b.json().created).toBe(true)
    expect(a.json().object_id).not.toBe(b.json().object_id)
  })

  it('answers created true to exactly one of many concurrent upserts of a new object', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => post('/v1/object/upsert', { type: 'customer', id: 'c-race' })))
    expect(answers.map((r) => r.json().created).filter(Boolean)).toEqual([true])
  })

  it('rejects a missing id with 422 naming /id', async () => {
    const res = await post('/v1/object/upsert', { type: 'customer' })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/id', message: expect.stringContaining('is required') }])
  })
})

describe('POST /v1/object/batch', () => {
  it('answers the object batch response with one result per accepted object', async () => {
    const res = await post('/v1/object/batch', {
      objects: [
        { type: 'item', id: 'i1', properties: { a: 1 } },
        { type: 'item', id: 'i1', properties: { b: 2 } },
        { type: 'item', id: '' },
        { type: 'item', id: 'i2' },
      ],
    })
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['duplicates', 'error_details', 'errors', 'failed', 'objects', 'processed', 'success'])
    expect(body).toMatchObject({ success: false, processed: 3, failed: 1 })
    expect(body.objects.map((o: { external_id: string; created: boolean }) => [o.external_id, o.created])).toEqual([
      ['i1', true],
      ['i1', false],
      ['i2', true],
    ])
    expect(body.errors).toEqual([expect.stringMatching(/^Object 2: \/id: /)])
  })

  it('is idempotent: the same batch again creates nothing', async () => {
    const batch = {
      objects: [
        { type: 'item', id: 'idem-1' },
        { type: 'item', id: 'idem-2' },
      ],
    }
    await post('/v1/object/batch', batch)
    const again = await post('/v1/object/batch', batch)
    expect(again.json().objects.map((o: { created: boolean }) => o.created)).toEqual([false, false])
  })

  it('rejects 101 objects with 422', async () => {
    const res = await post('/v1/object/batch', { objects: Array.from({ length: 101 }, (_, i) => ({ type: 't', id: String(i) })) })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('/objects')
  })
})
