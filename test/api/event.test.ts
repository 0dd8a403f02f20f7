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

function post(payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/event',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })
}

describe('POST /v1/event', () => {
  it('answers 200 with the single event response, field by field', async () => {
    const res = await post(eventBody(2, { properties: { channel: 'web' } }))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['event_id', 'event_type', 'message', 'objects_count', 'success', 'timestamp'])
    expect(body.success).toBe(true)
    expect(body.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(body.event_type).toBe('Create Order')
    expect(body.timestamp).toBe('2024-05-01T10:00:00.000Z')
    expect(body.objects_count).toBe(2)
    expect(body.message).toContain('Create Order')
  })

  it('appends the event to the dataset stream before answering', async () => {
    const res = await post(eventBody(1, { event: 'Durable Check' }))
    const records = await t.log.readStream(datasetId, null, 10_000)
    const found = records.find((r) => r.type === 'EventRecorded' && r.data.event_id === res.json().event_id)
    expect(found?.stream).toBe(`dataset-${datasetId}`)
    expect(found?.type === 'EventRecorded' ? found.data.event_type : null).toBe('Durable Check')
  })

  it('normalises a timestamp with an offset to UTC', async () => {
    const res = await post(eventBody(1, { timestamp: '2024-05-01T12:30:00.250+02:00' }))
    expect(res.json().timestamp).toBe('2024-05-01T10:30:00.250Z')
  })

  it('defaults the timestamp to the server time when none is sent', async () => {
    const before = Date.now()
    const body = eventBody(1)
    delete body.timestamp
    const res = await post(body)
    const ts = Date.parse(res.json().timestamp)
    expect(ts).toBeGreaterThanOrEqual(before)
    expect(ts).toBeLessThanOrEqual(Date.now())
  })

  it('accepts 50 objects', async () => {
    const res = await post(eventBody(50))
    expect(res.statusCode).toBe(200)
    expect(res.json().objects_count).toBe(50)
  })

  it('rejects 51 objects with 422 problem+json naming /objects', async () => {
    const res = await post(eventBody(51))
    expect(res.statusCode).toBe(422)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    const body = res.json()
    expect(body.status).toBe(422)
    expect(body.type).toBe('urn:ocelog:problem:validation-failed')
    expect(body.errors).toEqual([{ path: '/objects', message: expect.stringContaining('1 to 50') }])
  })

  it('rejects an event with no objects', async () => {
    const res = await post(eventBody(0))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('/objects')
  })

  it.each([
    ['event name of 201 characters', { event: 'e'.repeat(201) }, '/event'],
    ['empty event name', { event: '' }, '/event'],
    ['object type of 101 characters', { objects: [{ type: 't'.repeat(101), id: '1' }] }, '/objects/0/type'],
    ['object id of 501 characters', { objects: [{ type: 't', id: 'i'.repeat(501) }] }, '/objects/0/id'],
    ['qualifier of 101 characters', { objects: [{ type: 't', id: '1', qualifier: 'q'.repeat(101) }] }, '/objects/0/qualifier'],
    ['empty qualifier', { objects: [{ type: 't', id: '1', qualifier: '' }] }, '/objects/0/qualifier'],
    ['timestamp without a zone', { timestamp: '2024-05-01T10:00:00' }, '/timestamp'],
    ['timestamp that is not a date', { timestamp: 'yesterday' }, '/timestamp'],
    ['impossible date', { timestamp: '2023-02-29T10:00:00Z' }, '/timestamp'],
    ['properties that are an array', { properties: [1, 2] }, '/properties'],
    ['object properties that are a string', { objects: [{ type: 't', id: '1', properties: 'x' }] }, '/objects/0/properties'],
    ['an unknown field', { timestmp: '2024-05-01T10:00:00Z' }, '/timestmp'],
    ['end_timestamp before timestamp', { end_timestamp: '2024-05-01T09:59:59Z' }, '/end_timestamp'],
  ])('rejects %s with 422 naming %s', async (_name, patch, path) => {
    const res = await post({ ...eventBody(1), ...patch })
    expect(res.statusCode).toBe(422)
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
  })

  it('accepts 200-character names and 500-character ids', async () => {
    const res = await post({ event: 'e'.repeat(200), objects: [{ type: 't'.repeat(100), id: 'i'.repeat(500), qualifier: 'q'.repeat(100) }] })
    expect(res.statusCode).toBe(200)
  })

  it('counts characters, not bytes, for length limits', async () => {
    const res = await post({ event: 'é'.repeat(200), objects: [{ type: '🚚'.repeat(100), id: '1' }] })
    expect(res.statusCode).toBe(200)
  })

  it('requires an explicit timestamp with end_timestamp', async () => {
    const body = eventBody(1, { end_timestamp: '2024-05-01T11:00:00Z' })
    delete body.timestamp
    const res = await post(body)
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0]).toEqual({ path: '/end_timestamp', message: expect.stringContaining('requires an explicit timestamp') })
  })

  it('records end_timestamp on or after timestamp', async () => {
    const res = await post(eventBody(1, { end_timestamp: '2024-05-01T10:00:00Z' }))
    expect(res.statusCode).toBe(200)
    const records = await t.log.readStream(datasetId, null, 10_000)
    const r = records.find((x) => x.type === 'EventRecorded' && x.data.event_id === res.json().event_id)
    expect(r?.type === 'EventRecorded' ? r.data.end_timestamp : undefined).toBe('2024-05-01T10:00:00.000Z')
  })

  it('answers 400 problem+json for malformed JSON', async () => {
    const res = await post('{"event": ')
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toContain('not valid JSON')
  })

  it('answers 415 for a body that is not JSON', async () => {
    const res = await post('event=x', { 'content-type': 'text/plain' })
    expect(res.statusCode).toBe(415)
    expect(res.json().type).toBe('urn:ocelog:problem:unsupported-media-type')
  })

  it('answers 415 for a body without a Content-Type', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/event', headers: { authorization: `Bearer ${key}` }, payload: JSON.stringify(eventBody(1)) })
    expect(res.statusCode).toBe(415)
  })

  it('answers 400 for an empty JSON body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/event', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('request body is empty; send a JSON object')
  })

  it('accepts application/json with a charset', async () => {
    const res = await post(eventBody(1), { 'content-type': 'application/json; charset=utf-8' })
    expect(res.statusCode).toBe(200)
  })

  it('answers 422 when the body is a JSON array, not an event', async () => {
    const res = await post([eventBody(1)])
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('')
  })

  it('keeps a client request id and stamps it on the record', async () => {
    const res = await post(eventBody(1), { 'x-request-id': 'client-req-42' })
    expect(res.headers['x-request-id']).toBe('client-req-42')
    const records = await t.log.readStream(datasetId, null, 10_000)
    const r = records.find((x) => x.type === 'EventRecorded' && x.data.event_id === res.json().event_id)
    expect(r?.data.request_id).toBe('client-req-42')
  })

  it('records nothing for a rejected event', async () => {
    const before = (await t.log.readStream(datasetId, null, 10_000)).length
    await post(eventBody(51))
    expect((await t.log.readStream(datasetId, null, 10_000)).length).toBe(before)
  })
})

describe('request body limit', () => {
  it('answers 413 problem+json above the limit', async () => {
    const small = await makeTestApp({ bodyLimitBytes: 2048 })
    try {
      const k = await small.newKey()
      const res = await small.app.inject({
        method: 'POST',
        url: '/v1/event',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(eventBody(1, { properties: { blob: 'x'.repeat(4096) } })),
      })
      expect(res.statusCode).toBe(413)
      expect(res.json().detail).toContain('2048 bytes')
    } finally {
      await small.close()
    }
  })

  it('rejects one item larger than 512 KiB as JSON with 422', async () => {
    const res = await post(eventBody(1, { properties: { blob: 'x'.repeat(600 * 1024) } }))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].message).toContain('at most 524288 bytes')
  })
})
