/**
 * Bad input that once broke the service (leap seconds, deep nesting, non-finite numbers, years
 * outside 0001–9999, lone surrogates): each answers 422 naming the path, and one bad item never
 * fails its batch.
 */
import { Readable } from 'node:stream'
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

function post(url: string, payload: string | Readable) {
  return t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload })
}

async function recordedEventIds(): Promise<string[]> {
  return (await t.log.readStream(datasetId, null, 100_000)).flatMap((r) => (r.type === 'EventRecorded' ? [r.data.event_id] : []))
}

/** `{"a": [[[…]]]}` as JSON text with `depth` arrays inside properties. */
function deepProperties(depth: number): string {
  return `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`
}

function deepEventText(depth: number, pad = ''): string {
  return `{"event":"deep","objects":[{"type":"t","id":"1"}],"properties":${deepProperties(depth)}${pad === '' ? '' : `,"end_timestamp":"${pad}"`}}`
}

describe('leap seconds', () => {
  it('answers 422 naming /timestamp for a leap second, suggesting …:59.999', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '2016-12-31T23:59:60Z' })))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/timestamp', message: expect.stringMatching(/leap second.*59\.999/) }])
  })

  it('answers 422 naming /end_timestamp for a leap second there', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '2016-12-31T23:00:00Z', end_timestamp: '2016-12-31T23:59:60Z' })))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/end_timestamp', message: expect.stringMatching(/leap second/) }])
  })

  it('fails only the leap-second item of a batch and records the good one', async () => {
    const good = eventBody(1, { event: 'Before Leap' })
    const res = await post('/v1/event/batch', JSON.stringify({ events: [good, eventBody(1, { timestamp: '2016-12-31T23:59:60Z' })] }))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ success: false, processed: 1, failed: 1 })
    expect(body.error_details).toEqual([{ index: 1, path: '/timestamp', message: expect.stringMatching(/leap second/) }])
    expect(await recordedEventIds()).toContain(body.event_ids[0])
  })
})

describe('deeply nested properties', () => {
  it('accepts properties nested 64 levels deep', async () => {
    const res = await post('/v1/event', deepEventText(63))
    expect(res.statusCode).toBe(200)
  })

  it('answers 422 naming the path of the 65th level', async () => {
    const res = await post('/v1/event', deepEventText(64))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: `/properties/a${'/0'.repeat(63)}`, message: expect.stringContaining('64 levels') }])
  })

  it('answers 422, not 503 or 500, for 4,500 levels of nested arrays', async () => {
    const res = await post('/v1/event', deepEventText(4500))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toMatch(/^\/properties\/a(\/0)+$/)
  })

  it('answers 422 for a million levels (a 2 MB body)', async () => {
    const res = await post('/v1/event', deepEventText(1_000_000))
    expect(res.statusCode).toBe(422)
  })

  it('answers 422 for 4,500 levels sent chunked (no Content-Length)', async () => {
    const res = await post('/v1/event', Readable.from([Buffer.from(deepEventText(4500))]))
    expect(res.statusCode).toBe(422)
  })

  it('answers 422 for 4,500 levels in a body over 512 KiB', async () => {
    const text = `{"event":"deep","objects":[{"type":"t","id":"1","properties":{"pad":"${'x'.repeat(600 * 1024)}"}}],"properties":${deepProperties(4500)}}`
    const res = await post('/v1/event', text)
    expect(res.statusCode).toBe(422)
  })

  it('answers 422 for deep properties of an object inside an event', async () => {
    const text = `{"event":"deep","objects":[{"type":"t","id":"1","properties":${deepProperties(4500)}}]}`
    const res = await post('/v1/event', text)
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toMatch(/^\/objects\/0\/properties\/a(\/0)+$/)
  })

  it('answers 422 for deep properties of an upsert', async () => {
    const res = await post('/v1/object/upsert', `{"type":"t","id":"1","properties":${deepProperties(4500)}}`)
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toMatch(/^\/properties\/a(\/0)+$/)
  })

  it('fails only the deep item of a batch and records the good one', async () => {
    const res = await post('/v1/event/batch', `{"events":[${JSON.stringify(eventBody(1))},${deepEventText(4500)}]}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ processed: 1, failed: 1 })
    expect(await recordedEventIds()).toContain(res.json().event_ids[0])
  })
})

describe('values that would come back changed', () => {
  it('answers 422 naming the path of a number too large to be finite (1e309)', async () => {
    const res = await post('/v1/event', `{"event":"e","objects":[{"type":"t","id":"1","properties":{"n":[1,-1e309]}}]}`)
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/objects/0/properties/n/1', message: expect.stringContaining('finite') }])
  })

  it('answers 422 for 1e309 in upsert properties', async () => {
    const res = await post('/v1/object/upsert', '{"type":"t","id":"1","properties":{"big":1e309}}')
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('/properties/big')
  })

  it('answers 422 for a timestamp whose UTC instant is before year 0001', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '0000-01-01T00:00:00+14:00' })))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/timestamp', message: expect.stringContaining('0001–9999') }])
  })

  it('answers 422 for an end_timestamp whose UTC instant is after year 9999', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '9999-12-31T00:00:00Z', end_timestamp: '9999-12-31T23:59:59.999-12:00' })))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/end_timestamp', message: expect.stringContaining('0001–9999') }])
  })

  it('answers 422 for a lone surrogate in an object id, which UTF-8 storage would turn into U+FFFD', async () => {
    const res = await post('/v1/event', '{"event":"e","objects":[{"type":"t","id":"a\\ud800"}]}')
    expect(res.statusCode).toBe(422)
    expect(res.json().errors).toEqual([{ path: '/objects/0/id', message: expect.stringContaining('surrogate') }])
  })

  it('answers 422 for a lone surrogate in a property key', async () => {
    const res = await post('/v1/object/upsert', '{"type":"t","id":"1","properties":{"\\udc00x":1}}')
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('/properties/\udc00x')
  })

  it('stores the first and last four-digit-year instants unchanged', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '0001-01-01T00:00:00Z', end_timestamp: '9999-12-31T23:59:59.999Z' })))
    expect(res.statusCode).toBe(200)
    const record = (await t.log.readStream(datasetId, null, 100_000)).find((r) => r.type === 'EventRecorded' && r.data.event_id === res.json().event_id)
    expect(record?.type === 'EventRecorded' ? [record.data.timestamp, record.data.end_timestamp] : null).toEqual([
      '0001-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ])
  })
})

describe('ISO 8601 forms beyond RFC 3339', () => {
  it.each([
    ['20240501T100000Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00,5Z', '2024-05-01T10:00:00.500Z'],
    ['2024-05-01T12:00:00+0200', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T12:00:00+02', '2024-05-01T10:00:00.000Z'],
    ['2024-04-30T24:00:00Z', '2024-05-01T00:00:00.000Z'],
  ])('accepts %s as %s', async (sent, utc) => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: sent })))
    expect(res.statusCode).toBe(200)
    expect(res.json().timestamp).toBe(utc)
  })

  it('compares end_timestamp in another form as an instant', async () => {
    const res = await post('/v1/event', JSON.stringify(eventBody(1, { timestamp: '20240501T120000+02', end_timestamp: '2024-05-01T09:59:59,999Z' })))
    expect(res.statusCode).toBe(422)
    expect(res.json().errors[0].path).toBe('/end_timestamp')
  })
})
