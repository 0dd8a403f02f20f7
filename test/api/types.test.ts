/**
 * POST /v1/types over HTTP (docs/api.md#declared-types): declared event and object types recorded
 * as one `TypesDeclared` record, kept by the `declared_types` read model (a later declaration
 * merges), answered once per idempotency key, refused with problem+json naming the field and rule,
 * and only with the scope `ingest:write`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { LIMITS } from '../../src/core/limits.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp()
})
afterAll(async () => t.close())

function post(key: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/types',
    headers: { 'x-ocelog-api-key': key, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  })
}

const ORDER = {
  event_types: [{ name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] }],
  object_types: [{ name: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] }],
}

describe('POST /v1/types', () => {
  it('records one TypesDeclared record and answers how many types it declared', async () => {
    const k = await t.newKey()
    const res = await post(k.key, ORDER)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true, event_types: 1, object_types: 1, duplicate: false })
    const records = await t.log.readStream(k.dataset_id, null, 10)
    expect(records.map((r) => [r.type, r.version, r.data])).toEqual([
      ['TypesDeclared', 1, { ...ORDER, received_at: expect.any(String), key_id: k.key_id, request_id: expect.any(String) }],
    ])
  })

  it('keeps the declarations in the read model, a later one adding attributes and changing a type', async () => {
    const k = await t.newKey()
    await post(k.key, ORDER)
    await post(k.key, {
      event_types: [
        {
          name: 'pay order',
          attributes: [
            { name: 'amount', type: 'integer' },
            { name: 'method', type: 'string' },
          ],
        },
      ],
    })
    await t.projector.catchUp()
    expect(await new SqliteReadModelQuery(t.rmDb).declaredTypes(k.dataset_id)).toEqual({
      event_types: [
        {
          name: 'pay order',
          attributes: [
            { name: 'amount', type: 'integer' },
            { name: 'method', type: 'string' },
          ],
        },
      ],
      object_types: [{ name: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] }],
    })
  })

  it('answers a repeated Idempotency-Key as first recorded (duplicate), and 409 when it comes back with other content', async () => {
    const k = await t.newKey()
    const first = await post(k.key, ORDER, { 'idempotency-key': 'types-1' })
    const again = await post(k.key, ORDER, { 'idempotency-key': 'types-1' })
    const other = await post(k.key, { object_types: [{ name: 'truck', attributes: [] }] }, { 'idempotency-key': 'types-1' })
    expect([first.statusCode, again.statusCode, other.statusCode]).toEqual([200, 200, 409])
    expect(again.json()).toEqual({ success: true, event_types: 1, object_types: 1, duplicate: true })
    expect(other.json()).toMatchObject({ status: 409, errors: [{ path: '/idempotency_key' }] })
    expect((await t.log.readStream(k.dataset_id, null, 10)).map((r) => r.idempotency?.key)).toEqual(['types-1'])
  })

  it.each([
    [{ event_types: [{ name: 'a', attributes: [{ name: 'x', type: 'date' }] }] }, '/event_types/0/attributes/0/type', "one of OCEL 2.0's"],
    [{ event_types: [{ name: '', attributes: [] }] }, '/event_types/0/name', `event type name: 1 to ${String(LIMITS.eventNameMax)} characters`],
    [{ object_types: [{ name: 'o'.repeat(LIMITS.objectTypeMax + 1), attributes: [] }] }, '/object_types/0/name', 'object type name: 1 to 100 characters'],
    [{ object_types: [{ name: 'o' }] }, '/object_types/0/attributes', 'is required'],
    [{ event_types: [{ name: 'a', attributes: [], colour: 'red' }] }, '/event_types/0/colour', 'unknown field "colour"'],
    [
      {
        event_types: [
          { name: 'a', attributes: [] },
          { name: 'a', attributes: [] },
        ],
      },
      '/event_types/1/name',
      '"a" is declared twice (also /event_types/0)',
    ],
    [
      {
        object_types: [
          {
            name: 'o',
            attributes: [
              { name: 'n', type: 'string' },
              { name: 'n', type: 'integer' },
            ],
          },
        ],
      },
      '/object_types/0/attributes/1/name',
      'declared twice',
    ],
    [{}, '', 'declares no type'],
    [[ORDER], '', 'must be a JSON object'],
  ])('refuses %j with 422 problem+json naming the field and the rule, and records nothing', async (body, path, rule) => {
    const k = await t.newKey()
    const res = await post(k.key, body)
    expect(res.statusCode).toBe(422)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    const problem = res.json() as { errors: { path: string; message: string }[] }
    expect(problem.errors.find((e) => e.path === path)?.message).toContain(rule)
    expect(await t.log.readStream(k.dataset_id, null, 10)).toEqual([])
  })

  it('needs the scope ingest:write', async () => {
    const k = await t.newKey({ scopes: ['process:read'] })
    const res = await post(k.key, ORDER)
    expect(res.statusCode).toBe(403)
    expect(await t.log.readStream(k.dataset_id, null, 10)).toEqual([])
  })
})
