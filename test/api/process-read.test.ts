/**
 * API tier: the read endpoints `/v1/process/*` through `inject` on a real SQLite file, with the real
 * projector and reader. Access (scopes, invalid keys, other datasets, rate limit) on every
 * endpoint, the answers' values on a small dataset with end timestamps, and 422s that name the
 * parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedKey } from '../../src/write/admin.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let full: CreatedKey
let reader: CreatedKey
let writer: CreatedKey
let other: CreatedKey

const UNKNOWN_KEY = 'ocl_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

/** Dataset A. Order o1: Create (10:00–10:10) → Pay (11:00) → Ship (12:00); order o2: Create (10:30) → Ship (13:00), sent out of time order. */
const EVENTS_A = [
  {
    event: 'Ship',
    timestamp: '2024-05-01T13:00:00Z',
    objects: [{ type: 'order', id: 'o2' }],
  },
  {
    event: 'Create',
    timestamp: '2024-05-01T10:00:00Z',
    end_timestamp: '2024-05-01T10:10:00Z',
    properties: { channel: 'web' },
    objects: [
      { type: 'order', id: 'o1', qualifier: 'target', properties: { amount: 120 } },
      { type: 'item', id: 'i1', qualifier: 'part' },
    ],
  },
  { event: 'Pay', timestamp: '2024-05-01T11:00:00Z', objects: [{ type: 'order', id: 'o1' }] },
  {
    event: 'Ship',
    timestamp: '2024-05-01T12:00:00Z',
    objects: [
      { type: 'order', id: 'o1' },
      { type: 'item', id: 'i1' },
    ],
  },
  { event: 'Create', timestamp: '2024-05-01T10:30:00Z', objects: [{ type: 'order', id: 'o2' }] },
]

/** Dataset B: one event of its own. */
const EVENTS_B = [{ event: 'Only In B', timestamp: '2024-06-01T08:00:00Z', objects: [{ type: 'ticket', id: 't1' }] }]

function get(url: string, key: string | null) {
  return t.app.inject({ method: 'GET', url, headers: key === null ? {} : { authorization: `Bearer ${key}` } })
}

async function send(key: string, events: unknown[]): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/event/batch',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ events }),
  })
  expect(res.json().processed).toBe(events.length)
}

/** Every read endpoint, with a path that exists in dataset A. */
const ENDPOINTS = [
  '/v1/process/map',
  '/v1/process/summary',
  '/v1/process/event-types',
  '/v1/process/object-types',
  '/v1/process/objects/order/o1',
  '/v1/process/events',
  '/v1/process/performance',
  '/v1/process/variants?object_type=order',
  '/v1/process/type-relations',
  '/v1/process/compare',
] as const

beforeAll(async () => {
  t = await makeTestApp()
  full = await t.newKey({ name: 'all scopes' })
  reader = await t.newKey({ name: 'reader', scopes: ['process:read'], datasetId: full.dataset_id })
  writer = await t.newKey({ name: 'writer', scopes: ['ingest:write'], datasetId: full.dataset_id })
  other = await t.newKey({ name: 'other dataset' })
  await send(full.key, EVENTS_A)
  await send(other.key, EVENTS_B)
  await t.projector.catchUp()
})
afterAll(async () => t.close())

describe('read endpoints: access', () => {
  it.each(ENDPOINTS)('answers %s to a process:read key with 200 and the key’s dataset', async (url) => {
    const res = await get(url, reader.key)
    expect(res.statusCode).toBe(200)
    expect(res.json().dataset_id).toBe(full.dataset_id)
    expect(res.json().as_of).toBeGreaterThan(0)
  })

  it.each(ENDPOINTS)('answers %s to a key without scopes with 200', async (url) => {
    expect((await get(url, full.key)).statusCode).toBe(200)
  })

  it.each(ENDPOINTS)('answers %s with 403 naming process:read to a key with only ingest:write', async (url) => {
    const res = await get(url, writer.key)
    expect(res.statusCode).toBe(403)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toContain('process:read')
  })

  it.each(ENDPOINTS)('answers %s with 401 to an unknown key and to no key', async (url) => {
    const unknown = await get(url, UNKNOWN_KEY)
    const none = await get(url, null)
    expect([unknown.statusCode, none.statusCode]).toEqual([401, 401])
    expect(unknown.json().type).toBe('urn:ocelog:problem:unauthorized')
  })

  it.each(['/v1/event', '/v1/event/batch', '/v1/object/upsert', '/v1/object/batch'])('answers 403 on %s to a process:read key', async (url) => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${reader.key}`, 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toContain('ingest:write')
  })
})

describe('read endpoints: datasets', () => {
  it('answers the summary of the key’s own dataset only', async () => {
    const a = (await get('/v1/process/summary', reader.key)).json()
    const b = (await get('/v1/process/summary', other.key)).json()
    expect([a.dataset_id, a.events]).toEqual([full.dataset_id, 5])
    expect([b.dataset_id, b.events, b.objects]).toEqual([other.dataset_id, 1, 1])
  })

  it('never shows another dataset’s event types, object types, events or map', async () => {
    const types = (await get('/v1/process/event-types', other.key)).json().event_types.map((e: { name: string }) => e.name)
    const objectTypes = (await get('/v1/process/object-types', other.key)).json().object_types.map((e: { name: string }) => e.name)
    const events = (await get('/v1/process/events', other.key)).json().events.map((e: { event_type: string }) => e.event_type)
    const map = (await get('/v1/process/map', other.key)).json().object_types.map((m: { object_type: string }) => m.object_type)
    expect({ types, objectTypes, events, map }).toEqual({ types: ['Only In B'], objectTypes: ['ticket'], events: ['Only In B'], map: ['ticket'] })
  })

  it('never shows another dataset’s performance, variants or type relations', async () => {
    const performance = (await get('/v1/process/performance', other.key)).json().activities.map((a: { activity: string }) => a.activity)
    const variants = (await get('/v1/process/variants?object_type=order', other.key)).json()
    const tickets = (await get('/v1/process/variants?object_type=ticket', other.key)).json().variants.map((v: { activities: string[] }) => v.activities)
    const relations = (await get('/v1/process/type-relations', other.key)).json().activity_object_types.map((r: { activity: string }) => r.activity)
    expect({ performance, orders: [variants.objects, variants.total, variants.variants], tickets, relations }).toEqual({
      performance: ['Only In B'],
      orders: [0, 0, []],
      tickets: [['Only In B']],
      relations: ['Only In B'],
    })
  })

  it('answers 404 for an object of another dataset', async () => {
    const res = await get('/v1/process/objects/order/o1', other.key)
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  })
})

describe('read endpoints: rate limit', () => {
  let limited: TestApp
  beforeAll(async () => {
    limited = await makeTestApp({ perMinute: 2 })
  })
  afterAll(async () => limited.close())

  it.each(ENDPOINTS)('counts %s against the key’s budget and answers 429 with Retry-After once it is spent', async (url) => {
    const k = await limited.newKey({ scopes: ['process:read'] })
    const call = () => limited.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${k.key}` } })
    const first = await call()
    expect(first.headers['ratelimit-remaining']).toBe('1')
    await call()
    const third = await call()
    expect(third.statusCode).toBe(429)
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(third.json().type).toBe('urn:ocelog:problem:rate-limited')
  })
})

describe('GET /v1/process/map', () => {
  it('answers the order type’s activities with counts and run time', async () => {
    const map = (await get('/v1/process/map?object_type=order', reader.key)).json()
    expect(map.object_types.map((m: { object_type: string }) => m.object_type)).toEqual(['order'])
    const order = map.object_types[0]
    expect(order.objects).toBe(2)
    expect(
      order.activities.map((a: { activity: string; events: number; objects: number; total: number }) => [a.activity, a.events, a.objects, a.total]),
    ).toEqual([
      ['Create', 2, 2, 2],
      ['Pay', 1, 1, 1],
      ['Ship', 2, 2, 2],
    ])
    const create = order.activities[0]
    expect(create.run_time).toEqual({ count: 1, mean: 600, median: 600, min: 600, max: 600, sum: 600 })
    expect(order.activities[1].run_time).toBeNull()
  })

  it('answers edges in time order, not arrival order, with elapsed and waiting time', async () => {
    const order = (await get('/v1/process/map?object_type=order', reader.key)).json().object_types[0]
    const edges = Object.fromEntries(
      order.edges.map((e: { source: string; target: string; total: number; elapsed: { median: number }; waiting: { median: number } | null }) => [
        `${e.source}>${e.target}`,
        [e.total, e.elapsed.median, e.waiting === null ? null : e.waiting.median],
      ]),
    )
    expect(edges).toEqual({ 'Create>Pay': [1, 3600, 3000], 'Pay>Ship': [1, 3600, null], 'Create>Ship': [1, 9000, null] })
    expect(order.start_activities).toEqual([{ activity: 'Create', objects: 2 }])
    expect(order.end_activities).toEqual([{ activity: 'Ship', objects: 2 }])
  })

  it('takes object_type repeated', async () => {
    const map = (await get('/v1/process/map?object_type=item&object_type=order', reader.key)).json()
    expect(map.object_types.map((m: { object_type: string }) => m.object_type)).toEqual(['item', 'order'])
  })

  it('keeps each type’s most frequent edges with max_edges and says how many were left out', async () => {
    const body = (await get('/v1/process/map?max_edges=2', reader.key)).json()
    const order = body.object_types.find((m: { object_type: string }) => m.object_type === 'order')
    const item = body.object_types.find((m: { object_type: string }) => m.object_type === 'item')
    // order's three edges occur once each: ties by (source, target).
    expect(order.edges.map((e: { source: string; target: string }) => `${e.source}→${e.target}`)).toEqual(['Create→Pay', 'Create→Ship'])
    expect([order.edges_left_out, item.edges_left_out]).toEqual([1, 0])
    expect((await get('/v1/process/map', reader.key)).json().object_types[0].edges_left_out).toBeUndefined()
  })

  it('maps only the events in [from, to)', async () => {
    const map = (await get('/v1/process/map?object_type=order&from=2024-05-01T10:30:00Z&to=2024-05-01T13:00:00Z', reader.key)).json()
    const order = map.object_types[0]
    expect(order.activities.map((a: { activity: string; events: number }) => [a.activity, a.events])).toEqual([
      ['Create', 1],
      ['Pay', 1],
      ['Ship', 1],
    ])
  })
})

describe('GET /v1/process/performance, variants, type-relations', () => {
  it('answers the sojourn, flow and synchronization of each activity, with the delaying object of the slowest events', async () => {
    const body = (await get('/v1/process/performance?slowest=1', reader.key)).json()
    expect(body.dataset_id).toBe(full.dataset_id)
    const ship = body.activities.find((a: { activity: string }) => a.activity === 'Ship')
    // Ship 12:00 waits for o1 (Pay 11:00) after i1 (Create, ready 10:10); Ship 13:00 for o2 (Create 10:30).
    expect([ship.events, ship.events_with_predecessors, ship.sojourn.median, ship.flow.max, ship.synchronization.max]).toEqual([2, 2, 6300, 9000, 3000])
    expect(ship.slowest).toEqual([
      { event_id: expect.any(String), timestamp: '2024-05-01T13:00:00.000Z', sojourn: 9000, delaying_object: { type: 'order', id: 'o2' } },
    ])
    const pay = body.activities.find((a: { activity: string }) => a.activity === 'Pay')
    expect(pay.sojourn.sum).toBe(3000)
  })

  it('answers the variants of an object type, most frequent first, paged', async () => {
    const first = (await get('/v1/process/variants?object_type=order&limit=1', reader.key)).json()
    expect([first.objects, first.total, first.truncated, first.variants[0].activities, first.variants[0].examples]).toEqual([
      2,
      2,
      true,
      ['Create', 'Pay', 'Ship'],
      ['o1'],
    ])
    const second = (await get(`/v1/process/variants?object_type=order&limit=1&cursor=${first.next_cursor}`, reader.key)).json()
    expect([second.truncated, second.next_cursor, second.variants[0].activities, second.variants[0].duration.sum]).toEqual([
      false,
      null,
      ['Create', 'Ship'],
      9000,
    ])
  })

  it('answers activity × object type and the O2O relations', async () => {
    const body = (await get('/v1/process/type-relations', reader.key)).json()
    expect(body.activity_object_types.map((r: { activity: string; object_type: string; events: number }) => [r.activity, r.object_type, r.events])).toEqual([
      ['Create', 'item', 1],
      ['Create', 'order', 2],
      ['Pay', 'order', 1],
      ['Ship', 'item', 1],
      ['Ship', 'order', 2],
    ])
    expect(body.o2o).toEqual([])
  })
})

describe('GET /v1/process/compare', () => {
  it('puts two windows side by side, null where a figure is absent in one', async () => {
    const body = (await get('/v1/process/compare?a_from=2024-05-01T10:00:00Z&a_to=2024-05-01T11:30:00Z&b_from=2024-05-01T11:30:00Z', reader.key)).json()
    expect([body.a, body.b]).toEqual([
      { from: '2024-05-01T10:00:00.000Z', to: '2024-05-01T11:30:00.000Z' },
      { from: '2024-05-01T11:30:00.000Z', to: null },
    ])
    expect(body.map_activities.map((r: { object_type: string; activity: string; events: unknown }) => [r.object_type, r.activity, r.events])).toEqual([
      ['item', 'Create', { a: 1, b: null, diff: null }],
      ['item', 'Ship', { a: null, b: 1, diff: null }],
      ['order', 'Create', { a: 2, b: null, diff: null }],
      ['order', 'Pay', { a: 1, b: null, diff: null }],
      ['order', 'Ship', { a: null, b: 2, diff: null }],
    ])
    expect(body.map_edges).toEqual([
      {
        object_type: 'order',
        source: 'Create',
        target: 'Pay',
        total: { a: 1, b: null, diff: null },
        elapsed_median: { a: 3600, b: null, diff: null },
        waiting_median: { a: 3000, b: null, diff: null },
      },
    ])
    // Ship's predecessors come from whole traces, before window b.
    expect(body.performance).toEqual([
      { activity: 'Create', sojourn_median: { a: null, b: null, diff: null }, synchronization_median: { a: null, b: null, diff: null } },
      { activity: 'Pay', sojourn_median: { a: 3000, b: null, diff: null }, synchronization_median: { a: 0, b: null, diff: null } },
      { activity: 'Ship', sojourn_median: { a: null, b: 6300, diff: null }, synchronization_median: { a: null, b: 1500, diff: null } },
    ])
    expect(body.highlights).toEqual([])
  })

  it('highlights the largest relative changes of figures present in both windows', async () => {
    const body = (await get('/v1/process/compare?a_to=2024-05-01T12:30:00Z', reader.key)).json()
    // a holds Ship 12:00 (o1, i1) only; b (all time) also Ship 13:00 (o2).
    expect(body.highlights).toEqual([
      { what: 'order: Ship, events', a: 1, b: 2, diff: 1, relative: 1 },
      { what: 'Ship, sojourn_median', a: 3600, b: 6300, diff: 2700, relative: 0.75 },
      { what: 'Ship, synchronization_median', a: 3000, b: 1500, diff: -1500, relative: -0.5 },
    ])
  })

  it('keeps each type’s most frequent edges with max_edges and says how many were left out', async () => {
    const body = (await get('/v1/process/compare?a_to=2024-05-01T12:30:00Z&max_edges=1', reader.key)).json()
    // order: Create→Pay, Pay→Ship and Create→Ship occur once in some window (ties by source, target); item: Create→Ship.
    expect(body.map_edges.map((e: { object_type: string; source: string; target: string }) => `${e.object_type} ${e.source}→${e.target}`)).toEqual([
      'item Create→Ship',
      'order Create→Pay',
    ])
    expect(body.edges_left_out).toBe(2)
    expect((await get('/v1/process/compare', reader.key)).json().edges_left_out).toBeUndefined()
  })
})

describe('GET /v1/process/summary, event-types, object-types', () => {
  it('answers the counts of the dataset', async () => {
    const s = (await get('/v1/process/summary', reader.key)).json()
    expect(s).toMatchObject({
      events: 5,
      objects: 3,
      event_types: 3,
      object_types: 2,
      e2o: 7,
      first_event_time: '2024-05-01T10:00:00.000Z',
      last_event_time: '2024-05-01T13:00:00.000Z',
    })
    // The dataset's five records are the log's first; dataset B's record came after them.
    expect([s.log_position, s.as_of]).toEqual([5, 6])
  })

  it('answers event types with counts and attribute names', async () => {
    const body = (await get('/v1/process/event-types', reader.key)).json()
    expect(body.event_types.map((e: { name: string; count: number }) => [e.name, e.count])).toEqual([
      ['Create', 2],
      ['Pay', 1],
      ['Ship', 2],
    ])
    expect(body.event_types[0].attributes).toEqual([{ name: 'channel', types: ['string'] }])
    // A list answered whole: its total, nothing left out, no next page.
    expect([body.total, body.truncated, body.next_cursor]).toEqual([3, false, null])
  })

  it('answers object types with their count of objects', async () => {
    const body = (await get('/v1/process/object-types', reader.key)).json()
    expect(body.object_types.map((e: { name: string; count: number }) => [e.name, e.count])).toEqual([
      ['item', 1],
      ['order', 2],
    ])
    expect([body.total, body.truncated, body.next_cursor]).toEqual([2, false, null])
  })
})

describe('GET /v1/process/objects/{type}/{id}', () => {
  it('answers the object’s attributes, its trace in time order with qualifiers, and the objects it shares events with', async () => {
    const body = (await get('/v1/process/objects/order/o1', reader.key)).json()
    expect(body.object).toMatchObject({ type: 'order', id: 'o1', attributes: { amount: 120 } })
    expect(body.trace.map((e: { event_type: string; qualifiers: string[] }) => [e.event_type, e.qualifiers])).toEqual([
      ['Create', ['target']],
      ['Pay', []],
      ['Ship', []],
    ])
    expect(body.related.map((r: { type: string; id: string; shared_events: number }) => [r.type, r.id, r.shared_events])).toEqual([['item', 'i1', 2]])
  })

  it('answers 404 problem+json for an unknown object', async () => {
    const res = await get('/v1/process/objects/order/nope', reader.key)
    expect(res.statusCode).toBe(404)
    expect(res.json().type).toBe('urn:ocelog:problem:not-found')
  })

  it('reads ids with slashes and spaces when they are percent-encoded', async () => {
    await send(full.key, [{ event: 'Create', timestamp: '2024-05-02T10:00:00Z', objects: [{ type: 'order', id: 'A/7 b' }] }])
    await t.projector.catchUp()
    const res = await get(`/v1/process/objects/order/${encodeURIComponent('A/7 b')}`, reader.key)
    expect(res.statusCode).toBe(200)
    expect(res.json().object.id).toBe('A/7 b')
  })
})

describe('GET /v1/process/events', () => {
  it('pages events in time order with a cursor', async () => {
    const first = (await get('/v1/process/events?object_type=order&object_id=o1&limit=2', reader.key)).json()
    expect(first.events.map((e: { event_type: string }) => e.event_type)).toEqual(['Create', 'Pay'])
    expect(first.next_cursor).not.toBeNull()
    const second = (await get(`/v1/process/events?object_type=order&object_id=o1&limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, reader.key)).json()
    expect(second.events.map((e: { event_type: string }) => e.event_type)).toEqual(['Ship'])
    expect(second.next_cursor).toBeNull()
  })

  it('answers each event with its E2O links and qualifiers', async () => {
    const body = (await get('/v1/process/events?event_type=Create&to=2024-05-01T10:15:00Z', reader.key)).json()
    expect(body.events).toHaveLength(1)
    expect(body.events[0]).toMatchObject({
      event_type: 'Create',
      timestamp: '2024-05-01T10:00:00.000Z',
      end_timestamp: '2024-05-01T10:10:00.000Z',
      properties: { channel: 'web' },
    })
    expect(body.events[0].objects.map((o: { type: string; id: string; qualifier: string | null }) => [o.type, o.id, o.qualifier])).toEqual([
      ['item', 'i1', 'part'],
      ['order', 'o1', 'target'],
    ])
  })
})

describe('read endpoints: bad parameters', () => {
  it.each([
    ['/v1/process/map?from=yesterday', 'from'],
    ['/v1/process/map?from=2024-05-02T00:00:00Z&to=2024-05-01T00:00:00Z', 'to'],
    ['/v1/process/map?object_type=', 'object_type'],
    ['/v1/process/map?form=2024-05-01T00:00:00Z', 'form'],
    ['/v1/process/map?from=2024-05-01T00:00:00Z&from=2024-05-02T00:00:00Z', 'from'],
    ['/v1/process/events?limit=0', 'limit'],
    ['/v1/process/events?limit=1001', 'limit'],
    ['/v1/process/events?limit=ten', 'limit'],
    ['/v1/process/events?cursor=not-a-cursor', 'cursor'],
    ['/v1/process/events?to=2024-13-01T00:00:00Z', 'to'],
    ['/v1/process/summary?verbose=1', 'verbose'],
    ['/v1/process/performance?slowest=101', 'slowest'],
    ['/v1/process/performance?slowest=-1', 'slowest'],
    ['/v1/process/performance?from=soon', 'from'],
    ['/v1/process/variants', 'object_type'],
    ['/v1/process/variants?object_type=order&limit=0', 'limit'],
    ['/v1/process/variants?object_type=order&cursor=bm90IGEgY3Vyc29y', 'cursor'],
    ['/v1/process/variants?object_type=order&object_type=item', 'object_type'],
    ['/v1/process/type-relations?to=never', 'to'],
    ['/v1/process/type-relations?object_type=order', 'object_type'],
    ['/v1/process/compare?a_from=2024-05-02T00:00:00Z&a_to=2024-05-01T00:00:00Z', 'a_to'],
    ['/v1/process/compare?b_from=later', 'b_from'],
    ['/v1/process/compare?from=2024-05-01T00:00:00Z', 'from'],
    ['/v1/process/map?max_edges=0', 'max_edges'],
    ['/v1/process/compare?max_edges=10001', 'max_edges'],
    ['/v1/process/map?max_edges=many', 'max_edges'],
    ['/v1/process/performance?max_edges=3', 'max_edges'],
    ['/v1/process/events?max_bytes=999', 'max_bytes'],
    ['/v1/process/map?max_bytes=1048577', 'max_bytes'],
    ['/v1/process/summary?max_bytes=lots', 'max_bytes'],
  ])('answers %s with 422 naming %s', async (url, parameter) => {
    const res = await get(url, reader.key)
    expect(res.statusCode).toBe(422)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().errors[0].path).toBe(parameter)
    expect(res.json().detail).toContain(parameter)
  })
})

describe('read endpoints: max_bytes', () => {
  it('leaves every answer as it was without max_bytes, and says truncated and approx_tokens with it', async () => {
    for (const path of ENDPOINTS) {
      const plain = (await get(path, reader.key)).json()
      expect(plain, path).not.toHaveProperty('approx_tokens')
      const res = await get(`${path}${path.includes('?') ? '&' : '?'}max_bytes=100000`, reader.key)
      expect(res.statusCode, path).toBe(200)
      const body = res.json()
      expect(body.truncated, path).toBe(false)
      expect(body.approx_tokens, path).toBe(Math.ceil(res.body.length / 4))
      const { approx_tokens: _t, truncated: _u, ...rest } = body
      const { truncated: _v, ...plainRest } = plain
      expect(rest, path).toEqual(plainRest)
    }
  })

  it('cuts a page of events to max_bytes and continues after the last event kept', async () => {
    const res = await get('/v1/process/events?max_bytes=1000', reader.key)
    const body = res.json()
    expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(1000)
    expect(body.events.length).toBeGreaterThanOrEqual(1)
    const all = (await get('/v1/process/events', reader.key)).json()
    expect(body.events.length).toBeLessThan(all.total)
    expect([body.total, body.truncated]).toEqual([all.total, true])
    const rest = (await get(`/v1/process/events?cursor=${encodeURIComponent(body.next_cursor)}`, reader.key)).json()
    expect([...body.events, ...rest.events].map((e: { event_id: string }) => e.event_id)).toEqual(all.events.map((e: { event_id: string }) => e.event_id))
  })
})

describe('/openapi.json', () => {
  it('lists every read endpoint with its 200 schema and its problems', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    for (const path of [
      '/v1/process/map',
      '/v1/process/summary',
      '/v1/process/event-types',
      '/v1/process/object-types',
      '/v1/process/objects/{type}/{id}',
      '/v1/process/events',
      '/v1/process/performance',
      '/v1/process/variants',
      '/v1/process/type-relations',
      '/v1/process/compare',
    ]) {
      const responses = doc.paths[path]?.get?.responses
      expect(Object.keys(responses ?? {}).sort(), path).toEqual(expect.arrayContaining(['200', '401', '403', '422', '429']))
      expect(responses['200'].content['application/json'].schema.properties.as_of, path).toBeDefined()
    }
  })
})
