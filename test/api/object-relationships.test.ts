/**
 * Ocelog's additive extensions of the object upsert input over HTTP (README § O2O relationships and
 * attribute times): `timestamp`, when the values took effect, and `relationships`, O2O links whose
 * targets are created on first reference. Checked in the answers, in the log's records, and in
 * what the read side shows after projection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { objectIdOf } from '../../src/core/ids.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp()
})
afterAll(async () => t.close())

async function fresh(): Promise<{ key: string; datasetId: string }> {
  const k = await t.newKey()
  return { key: k.key, datasetId: k.dataset_id }
}

function post(key: string, url: string, payload: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  })
}

function get(key: string, url: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } })
}

describe('POST /v1/object/upsert with timestamp and relationships', () => {
  it('records the values at their timestamp (in UTC) and the O2O targets, and the read side shows both', async () => {
    const k = await fresh()
    const res = await post(k.key, '/v1/object/upsert', {
      type: 'order',
      id: 'o1',
      properties: { status: 'open' },
      timestamp: '2024-05-01T12:00:00+02:00',
      relationships: [
        { type: 'customer', id: 'c1', qualifier: 'placed by' },
        { type: 'item', id: 'i1' },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ success: true, object_type: 'order', external_id: 'o1', created: true })

    const [record] = await t.log.readStream(k.datasetId, null, 10)
    expect(record?.type === 'ObjectUpserted' ? [record.version, record.data.time, record.data.relationships] : null).toEqual([
      2,
      '2024-05-01T10:00:00.000Z',
      [
        { type: 'customer', id: 'c1', object_id: objectIdOf(k.datasetId, 'customer', 'c1'), qualifier: 'placed by' },
        { type: 'item', id: 'i1', object_id: objectIdOf(k.datasetId, 'item', 'i1') },
      ],
    ])

    await t.projector.catchUp()
    const order = (await get(k.key, '/v1/process/objects/order/o1')).json()
    expect(order.attribute_history).toEqual([{ time: '2024-05-01T10:00:00.000Z', position: record?.position, attributes: { status: 'open' } }])
    expect(order.relationships).toEqual([
      { object_id: objectIdOf(k.datasetId, 'customer', 'c1'), type: 'customer', id: 'c1', qualifier: 'placed by', time: '2024-05-01T10:00:00.000Z' },
      { object_id: objectIdOf(k.datasetId, 'item', 'i1'), type: 'item', id: 'i1', qualifier: null, time: '2024-05-01T10:00:00.000Z' },
    ])
    expect(order.relationships_truncated).toBe(false)
    // The targets exist from their first reference, and their types with them; each shows the relationship to it.
    const customer = await get(k.key, '/v1/process/objects/customer/c1')
    expect(customer.statusCode).toBe(200)
    expect([customer.json().incoming_relationships, customer.json().incoming_relationships_truncated]).toEqual([
      [{ object_id: objectIdOf(k.datasetId, 'order', 'o1'), type: 'order', id: 'o1', qualifier: 'placed by', time: '2024-05-01T10:00:00.000Z' }],
      false,
    ])
    const types = (await get(k.key, '/v1/process/object-types')).json()
    expect(types.object_types.map((x: { name: string; count: number }) => [x.name, x.count])).toEqual([
      ['customer', 1],
      ['item', 1],
      ['order', 1],
    ])
  })

  it('defaults the time of the values to the time of receipt', async () => {
    const k = await fresh()
    const before = new Date().toISOString()
    await post(k.key, '/v1/object/upsert', { type: 'order', id: 'o1', properties: { status: 'open' } })
    const [record] = await t.log.readStream(k.datasetId, null, 10)
    const data = record?.type === 'ObjectUpserted' ? record.data : null
    expect(data?.time).toBe(data?.received_at)
    expect((data?.time ?? '') >= before).toBe(true)
  })

  it('refuses a bad timestamp and bad relationships with 422 naming the field and the rule', async () => {
    const k = await fresh()
    const cases: [unknown, string, RegExp][] = [
      [{ type: 'order', id: 'o1', timestamp: '2024-05-01 10:00' }, '/timestamp', /ISO 8601 with Z or an offset/],
      [{ type: 'order', id: 'o1', relationships: [{ type: 'item' }] }, '/relationships/0/id', /is required \(object id: 1 to 500 characters\)/],
      [{ type: 'order', id: 'o1', relationships: [{ type: 'item', id: 'i1', role: 'x' }] }, '/relationships/0/role', /unknown field "role"/],
      [{ type: 'order', id: 'o1', relationships: [{ type: 'item', id: 'i1', qualifier: '' }] }, '/relationships/0/qualifier', /qualifier: 1 to 100 characters/],
      [
        { type: 'order', id: 'o1', relationships: Array.from({ length: 101 }, (_, i) => ({ type: 'item', id: `i${String(i)}` })) },
        '/relationships',
        /0 to 100 O2O relationships/,
      ],
      [{ type: 'order', id: 'o1', relationships: [{ type: 'item', id: '\ud800' }] }, '/relationships/0/id', /lone UTF-16 surrogate/],
    ]
    for (const [body, path, message] of cases) {
      const res = await post(k.key, '/v1/object/upsert', body)
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      const error = (res.json().errors as { path: string; message: string }[]).find((e) => e.path === path)
      expect(error?.message, `${path} in ${res.body}`).toMatch(message)
    }
    expect(await t.log.readStream(k.datasetId, null, 10)).toEqual([])
  })

  it('takes relationships in the object batch, a failed item alone, and counts a target upserted later in the request as created', async () => {
    const k = await fresh()
    const res = await post(k.key, '/v1/object/batch', {
      objects: [
        { type: 'order', id: 'o1', relationships: [{ type: 'item', id: 'i1', qualifier: 'contains' }] },
        { type: 'order', id: 'o2', relationships: [{ type: 'item' }] },
        { type: 'item', id: 'i1', properties: { sku: 'A' } },
      ],
    })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect([body.processed, body.failed, body.errors]).toEqual([2, 1, ['Object 1: /relationships/0/id: is required (object id: 1 to 500 characters)']])
    expect(body.objects.map((o: { external_id: string; created: boolean }) => [o.external_id, o.created])).toEqual([
      ['o1', true],
      ['i1', true],
    ])
    const again = (await post(k.key, '/v1/object/batch', { objects: [{ type: 'item', id: 'i1' }] })).json()
    expect(again.objects[0].created).toBe(false)
  })

  it('counts an idempotency key reused with other relationships or another timestamp as a conflict', async () => {
    const k = await fresh()
    const item = { type: 'order', id: 'o1', timestamp: '2024-05-01T10:00:00Z', relationships: [{ type: 'item', id: 'i1' }], idempotency_key: 'u1' }
    expect((await post(k.key, '/v1/object/upsert', item)).statusCode).toBe(200)
    expect((await post(k.key, '/v1/object/upsert', item)).statusCode).toBe(200)
    expect((await post(k.key, '/v1/object/upsert', { ...item, relationships: [{ type: 'item', id: 'i2' }] })).statusCode).toBe(409)
    expect((await post(k.key, '/v1/object/upsert', { ...item, timestamp: '2024-05-01T11:00:00Z' })).statusCode).toBe(409)
    expect(await t.log.readStream(k.datasetId, null, 10)).toHaveLength(1)
  })
})
