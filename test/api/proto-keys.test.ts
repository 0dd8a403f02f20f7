/**
 * `__proto__` and `constructor` are ordinary attribute names in JSON (docs/api.md#event-input,
 * `properties`: any JSON-serializable data): accepted as plain data, stored, projected and exported
 * unchanged, and never touching any object's prototype.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportOcel } from '../../src/ocel/export.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { sqliteRows } from '../helpers/read-model-rows.js'

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

/** Written as JSON text: an object literal with `__proto__` would set a prototype, not a key. */
const PROTO_PROPERTIES = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"plain":1}'

function post(url: string, payload: string) {
  return t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload })
}

function ownKeys(value: unknown): string[] {
  return typeof value === 'object' && value !== null ? Object.keys(value).sort() : []
}

describe('properties named __proto__ and constructor', () => {
  it('records both items of a batch in which one carries them', async () => {
    const res = await post(
      '/v1/event/batch',
      `{"events":[{"event":"plain","objects":[{"type":"t","id":"p1"}]},{"event":"proto","objects":[{"type":"t","id":"p2","properties":${PROTO_PROPERTIES}}],"properties":${PROTO_PROPERTIES}}]}`,
    )
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ processed: 2, failed: 0 })
  })

  it('stores them in the log as own keys, unchanged', async () => {
    const res = await post('/v1/object/upsert', `{"type":"t","id":"p3","properties":${PROTO_PROPERTIES}}`)
    expect(res.statusCode).toBe(200)
    const records = await t.log.readStream(datasetId, null, 1000)
    const upsert = records.flatMap((r) => (r.type === 'ObjectUpserted' && r.data.id === 'p3' ? [r] : []))[0]
    expect(JSON.stringify(upsert?.data.properties)).toBe(PROTO_PROPERTIES)
    expect(ownKeys(upsert?.data.properties)).toEqual(['__proto__', 'constructor', 'plain'])
  })

  it('keeps them through the projection into the read models', async () => {
    await t.projector.catchUp()
    const objects = (await sqliteRows(t.rmDb)(datasetId)).objects
    expect(JSON.stringify(objects.find((o) => o.external_id === 'p2')?.properties)).toBe(PROTO_PROPERTIES)
    expect(JSON.stringify(objects.find((o) => o.external_id === 'p3')?.properties)).toBe(PROTO_PROPERTIES)
    const events = (await sqliteRows(t.rmDb)(datasetId)).events
    expect(JSON.stringify(events.find((e) => e.event_type === 'proto')?.properties)).toBe(PROTO_PROPERTIES)
  })

  it('merges a later __proto__ value per key, like any other attribute', async () => {
    await post('/v1/object/upsert', '{"type":"t","id":"p3","properties":{"__proto__":{"polluted":"again"}}}')
    await t.projector.catchUp()
    const o = (await sqliteRows(t.rmDb)(datasetId)).objects.find((x) => x.external_id === 'p3')
    expect(JSON.stringify(o?.properties)).toBe('{"__proto__":{"polluted":"again"},"constructor":{"prototype":{"polluted":"yes"}},"plain":1}')
  })

  it('exports them as OCEL 2.0 attributes named __proto__ and constructor', async () => {
    const doc = await exportOcel(new SqliteReadModelQuery(t.rmDb), datasetId)
    const names = doc.events.find((e) => e.type === 'proto')?.attributes?.map((a) => a.name)
    expect(names).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'plain']))
  })

  it('leaves Object.prototype untouched', () => {
    expect(Object.prototype).not.toHaveProperty('polluted')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
