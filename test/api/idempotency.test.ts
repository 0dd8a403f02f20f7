/**
 * Exactly-once ingestion over HTTP (README § Exactly once): `idempotency_key` on items, the
 * `Idempotency-Key` header on single-item endpoints, `duplicates` in batch answers, 409 on conflict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventBody, makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let key: string

beforeAll(async () => {
  t = await makeTestApp()
  key = (await t.newKey()).key
})
afterAll(async () => t.close())

function post(url: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'x-ocelog-api-key': key, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  })
}

/** A dataset of its own per test, so that counts of the log are the test's alone. */
async function freshKey(): Promise<{ key: string; datasetId: string }> {
  const k = await t.newKey()
  return { key: k.key, datasetId: k.dataset_id }
}

async function recordedKeys(datasetId: string): Promise<(string | undefined)[]> {
  return (await t.log.readStream(datasetId, null, 1000)).map((r) => r.idempotency?.key)
}

describe('POST /v1/event with idempotency_key', () => {
  it('answers a repeated event with the event_id first recorded and records it once', async () => {
    const k = await freshKey()
    key = k.key
    const body = eventBody(2, { idempotency_key: 'evt-1' })
    const first = await post('/v1/event', body)
    const again = await post('/v1/event', { ...body, objects: [...(body.objects as object[])] })
    expect([first.statusCode, again.statusCode]).toEqual([200, 200])
    expect(again.json().event_id).toBe(first.json().event_id)
    expect(await recordedKeys(k.datasetId)).toEqual(['evt-1'])
  })

  it('answers 409 problem+json naming the key when the key comes back with other content, and records nothing', async () => {
    const k = await freshKey()
    key = k.key
    await post('/v1/event', eventBody(1, { idempotency_key: 'evt-2' }))
    const res = await post('/v1/event', eventBody(1, { idempotency_key: 'evt-2', event: 'Cancel Order' }))
    expect(res.statusCode).toBe(409)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 409, errors: [{ path: '/idempotency_key' }] })
    expect(res.json().detail).toContain('"evt-2" was already recorded in this dataset with other content')
    expect(await recordedKeys(k.datasetId)).toEqual(['evt-2'])
  })

  it('takes the Idempotency-Key header as the key, and refuses a header that differs from the body', async () => {
    const k = await freshKey()
    key = k.key
    const first = await post('/v1/event', eventBody(1), { 'idempotency-key': 'hdr-1' })
    const again = await post('/v1/event', eventBody(1, { idempotency_key: 'hdr-1' }))
    const differs = await post('/v1/event', eventBody(1, { idempotency_key: 'body-1' }), { 'idempotency-key': 'hdr-2' })
    expect([first.statusCode, again.statusCode, differs.statusCode]).toEqual([200, 200, 422])
    expect(again.json().event_id).toBe(first.json().event_id)
    expect(differs.json().errors).toEqual([{ path: '/idempotency_key', message: expect.stringContaining('Idempotency-Key header') }])
    expect(await recordedKeys(k.datasetId)).toEqual(['hdr-1'])
  })

  it('refuses an empty key and one over 255 characters with 422 naming the field and the rule', async () => {
    const res = await Promise.all(['', 'x'.repeat(256)].map((k) => post('/v1/event', eventBody(1, { idempotency_key: k }))))
    expect(res.map((r) => r.statusCode)).toEqual([422, 422])
    for (const r of res) expect(r.json().errors[0]).toMatchObject({ path: '/idempotency_key', message: expect.stringContaining('1 to 255 characters') })
  })

  it('refuses a key holding U+0000 with 422 naming the rule, on a single item and on a batch item alone', async () => {
    const single = await post('/v1/event', eventBody(1, { idempotency_key: 'a\u0000b' }))
    expect(single.statusCode).toBe(422)
    expect(single.json().errors[0]).toMatchObject({ path: '/idempotency_key', message: expect.stringContaining('none of them U+0000') })
    const batch = await post('/v1/event/batch', {
      events: [eventBody(1, { idempotency_key: 'nul\u0000key' }), eventBody(2, { idempotency_key: 'plain-nul-test' })],
    })
    expect(batch.statusCode).toBe(200)
    const body = batch.json()
    expect([body.processed, body.failed]).toEqual([1, 1])
    expect(body.error_details).toEqual([{ index: 0, path: '/idempotency_key', message: expect.stringContaining('none of them U+0000') }])
  })
})

describe('POST /v1/event/batch with idempotency keys', () => {
  it('counts repeated items as duplicates within processed, fails a reused key alone, and records the rest', async () => {
    const k = await freshKey()
    key = k.key
    const first = await post('/v1/event/batch', { events: [eventBody(1, { idempotency_key: 'a' }), eventBody(2, { idempotency_key: 'b' })] })
    const second = await post('/v1/event/batch', {
      events: [eventBody(1, { idempotency_key: 'a' }), eventBody(3, { idempotency_key: 'b' }), eventBody(1, { idempotency_key: 'c' }), eventBody(1)],
    })
    expect(second.statusCode).toBe(200)
    const body = second.json()
    expect(body).toMatchObject({ success: false, processed: 3, failed: 1, duplicates: 1 })
    expect(body.event_ids[0]).toBe(first.json().event_ids[0])
    expect(body.error_details).toEqual([{ index: 1, path: '/idempotency_key', message: expect.stringContaining('"b" was already recorded') }])
    expect(await recordedKeys(k.datasetId)).toEqual(['a', 'b', 'c', undefined])
  })

  it('refuses an Idempotency-Key header on a batch, since each item carries its own key', async () => {
    const res = await post('/v1/event/batch', { events: [eventBody(1)] }, { 'idempotency-key': 'whole-batch' })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0]).toMatchObject({ path: 'Idempotency-Key', message: expect.stringContaining('single-item endpoints') })
  })
})

describe('object upserts with idempotency keys', () => {
  it('answers a repeated upsert as first recorded but not created again, and a reused key with other content with 409', async () => {
    const k = await freshKey()
    key = k.key
    const body = { type: 'order', id: 'o1', properties: { status: 'open' }, idempotency_key: 'up-1' }
    const first = await post('/v1/object/upsert', body)
    const again = await post('/v1/object/upsert', body)
    const conflict = await post('/v1/object/upsert', { ...body, properties: { status: 'paid' } })
    expect([first.statusCode, again.statusCode, conflict.statusCode]).toEqual([200, 200, 409])
    expect([first.json().created, again.json().created, again.json().object_id]).toEqual([true, false, first.json().object_id])
    const batch = await post('/v1/object/batch', { objects: [body, { type: 'order', id: 'o2', idempotency_key: 'up-2' }] })
    expect(batch.json()).toMatchObject({ processed: 2, failed: 0, duplicates: 1 })
    expect(await recordedKeys(k.datasetId)).toEqual(['up-1', 'up-2'])
  })
})
