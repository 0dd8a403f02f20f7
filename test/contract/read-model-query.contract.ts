/**
 * Contract of the ReadModelQuery port (src/ports/read-model-query.ts): the same cases for every
 * adapter. Datasets are built the real way: records appended to a real log, then the real
 * Projector applies them to the adapter's read models; the answers are asserted exactly,
 * including every edge case the process map's definitions decide.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { canonicalRecord, chainStep, GENESIS_HASH } from '../../src/core/audit-chain.js'
import { objectIdOf } from '../../src/core/ids.js'
import type { EventLog } from '../../src/ports/event-log.js'
import type { EventsAfter, ObjectKey, ReadModelQuery } from '../../src/ports/read-model-query.js'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'
import type { EventView, ObjectTypeMap, Stats } from '../../src/schemas/process.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { batchOf, eventRecord, freshDatasetId, type ObjectRef, typesRecord, upsertRecord } from './fixtures.js'

export interface ReadModelQueryHarness {
  log: EventLog
  store: ReadModelStore
  query: ReadModelQuery
  close(): Promise<void>
}

const BASE = Date.parse('2024-05-01T10:00:00.000Z')
/** `minutes` (and `seconds`) after 2024-05-01T10:00:00Z, as the read models hold times. */
function at(minutes: number, seconds = 0): string {
  return new Date(BASE + minutes * 60_000 + seconds * 1000).toISOString()
}

/** Statistics of durations given in seconds, as the port answers them. */
function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const mid = (n - 1) / 2
  const median = ((sorted[Math.floor(mid)] ?? 0) + (sorted[Math.ceil(mid)] ?? 0)) / 2
  const sum = sorted.reduce((a, b) => a + b, 0)
  return { count: n, mean: Math.round((sum / n) * 1000) / 1000, median, min: sorted[0] ?? 0, max: sorted[n - 1] ?? 0, sum }
}

interface Ev {
  type: string
  objects: ObjectRef[]
  ts: string
  end?: string
  properties?: Record<string, unknown>
}

/** Runs the ReadModelQuery contract against the adapter `open` builds (one fresh store per case). */
export function readModelQueryContract(adapter: string, open: () => Promise<ReadModelQueryHarness>): void {
  describe(`ReadModelQuery contract: ${adapter}`, () => {
    let h: ReadModelQueryHarness
    let q: ReadModelQuery
    let ds: string
    beforeEach(async () => {
      h = await open()
      q = h.query
      ds = freshDatasetId()
    })
    afterEach(async () => {
      await h.close()
    })

    /** Appends records to `dataset`'s stream (one append each, in order) and catches the read models up. */
    async function load(dataset: string, records: NewRecord[]): Promise<number[]> {
      const positions: number[] = []
      for (const r of records) positions.push(...(await h.log.append(dataset, [r], [])).positions)
      await new Projector(h.log, h.store).catchUp()
      return positions
    }

    function ev(dataset: string, e: Ev): NewRecord {
      return eventRecord(dataset, e.type, e.objects, {
        timestamp: e.ts,
        ...(e.end === undefined ? {} : { endTimestamp: e.end }),
        ...(e.properties === undefined ? {} : { properties: e.properties }),
        receivedAt: at(100),
      })
    }

    async function loadEvents(dataset: string, events: Ev[]): Promise<number[]> {
      return load(
        dataset,
        events.map((e) => ev(dataset, e)),
      )
    }

    const order = (id: string, qualifier?: string): ObjectRef => ({ type: 'order', id, ...(qualifier === undefined ? {} : { qualifier }) })
    const item = (id: string, qualifier?: string): ObjectRef => ({ type: 'item', id, ...(qualifier === undefined ? {} : { qualifier }) })

    /**
     * The shop: sent out of time order (Pay at 10 min before Pick at 5), item i1 linked twice to
     * one Pick (two qualifiers), two Picks at the same time, end_timestamps on some events.
     * order o1: Create Order(0) → Pay(10) → Ship(20); item i1: Create Order(0) → Pick(5) → Ship(20);
     * item i2: Create Order(0) → Pick(5) → Ship(20).
     */
    const SHOP: Ev[] = [
      { type: 'Create Order', objects: [order('o1'), item('i1', 'contains'), item('i2')], ts: at(0), end: at(0, 30), properties: { total: 12.5 } },
      { type: 'Pay', objects: [order('o1')], ts: at(10), properties: { method: 'card' } },
      { type: 'Pick', objects: [item('i1', 'picked'), item('i1', 'checked')], ts: at(5), end: at(25) },
      { type: 'Pick', objects: [item('i2')], ts: at(5) },
      { type: 'Ship', objects: [order('o1'), item('i1'), item('i2')], ts: at(20) },
    ]

    const SHOP_ITEM_MAP: ObjectTypeMap = {
      object_type: 'item',
      objects: 2,
      activities: [
        { activity: 'Create Order', events: 1, objects: 2, total: 2, run_time: stats([30]) },
        { activity: 'Pick', events: 2, objects: 2, total: 2, run_time: stats([1200]) },
        { activity: 'Ship', events: 1, objects: 2, total: 2, run_time: null },
      ],
      edges: [
        { source: 'Create Order', target: 'Pick', total: 2, objects: 2, event_couples: 2, elapsed: stats([300, 300]), waiting: stats([270, 270]) },
        // i1's Pick ends at 25 min, after Ship at 20: clipped to 0. i2's Pick has no end: elapsed only.
        { source: 'Pick', target: 'Ship', total: 2, objects: 2, event_couples: 2, elapsed: stats([900, 900]), waiting: stats([0]) },
      ],
      start_activities: [{ activity: 'Create Order', objects: 2 }],
      end_activities: [{ activity: 'Ship', objects: 2 }],
    }

    const SHOP_ORDER_MAP: ObjectTypeMap = {
      object_type: 'order',
      objects: 1,
      activities: [
        { activity: 'Create Order', events: 1, objects: 1, total: 1, run_time: stats([30]) },
        { activity: 'Pay', events: 1, objects: 1, total: 1, run_time: null },
        { activity: 'Ship', events: 1, objects: 1, total: 1, run_time: null },
      ],
      edges: [
        { source: 'Create Order', target: 'Pay', total: 1, objects: 1, event_couples: 1, elapsed: stats([600]), waiting: stats([570]) },
        { source: 'Pay', target: 'Ship', total: 1, objects: 1, event_couples: 1, elapsed: stats([600]), waiting: null },
      ],
      start_activities: [{ activity: 'Create Order', objects: 1 }],
      end_activities: [{ activity: 'Ship', objects: 1 }],
    }

    describe('asOf', () => {
      it('is 0 before the projector has applied anything', async () => {
        expect(await q.asOf()).toBe(0)
      })

      it('is the position the projector has reached', async () => {
        const positions = await loadEvents(ds, SHOP)
        expect(await q.asOf()).toBe(positions[positions.length - 1])
      })
    })

    describe('summary', () => {
      it('counts events, objects, types and E2O links, with the first and last event time', async () => {
        await loadEvents(ds, SHOP)
        expect(await q.summary(ds)).toEqual({
          events: 5,
          objects: 3,
          event_types: 4,
          object_types: 2,
          e2o: 10,
          first_event_time: at(0),
          last_event_time: at(20),
        })
      })

      it('gives zeros and null times for a dataset without records', async () => {
        expect(await q.summary(ds)).toEqual({
          events: 0,
          objects: 0,
          event_types: 0,
          object_types: 0,
          e2o: 0,
          first_event_time: null,
          last_event_time: null,
        })
      })
    })

    describe('eventTypes and objectTypes', () => {
      it('lists event types by name with counts and the JSON types of their attributes', async () => {
        await load(ds, [
          ev(ds, { type: 'B', objects: [order('o1')], ts: at(0), properties: { n: 1, s: 'x' } }),
          ev(ds, { type: 'B', objects: [order('o1')], ts: at(1), properties: { n: 'one', f: false, o: { a: 1 }, l: [1], z: null } }),
          ev(ds, { type: 'A', objects: [order('o1')], ts: at(2) }),
        ])
        const types = await q.eventTypes(ds)
        expect(types.map((t) => [t.name, t.source, t.count, t.first_seen_at, t.last_seen_at])).toEqual([
          ['A', 'public_api', 1, at(100), at(100)],
          ['B', 'public_api', 2, at(100), at(100)],
        ])
        expect(types[0]?.attributes).toEqual([])
        expect(types[1]?.attributes).toEqual([
          { name: 'f', types: ['boolean'] },
          { name: 'l', types: ['array'] },
          { name: 'n', types: ['string', 'number'] },
          { name: 'o', types: ['object'] },
          { name: 's', types: ['string'] },
          { name: 'z', types: ['null'] },
        ])
      })

      it('lists object types by name with distinct objects and attributes from the attribute history', async () => {
        await load(ds, [
          ev(ds, { type: 'A', objects: [order('o1'), order('o2'), item('i1')], ts: at(0) }),
          upsertRecord(ds, 'order', 'o1', { status: 'open' }, at(101)),
          upsertRecord(ds, 'order', 'o1', { status: 3, paid: true }, at(102)),
        ])
        expect(await q.objectTypes(ds)).toEqual([
          { name: 'item', source: 'public_api', count: 1, first_seen_at: at(100), last_seen_at: at(100), attributes: [] },
          {
            name: 'order',
            source: 'public_api',
            count: 2,
            first_seen_at: at(100),
            last_seen_at: at(102),
            attributes: [
              { name: 'paid', types: ['boolean'] },
              { name: 'status', types: ['string', 'number'] },
            ],
          },
        ])
      })
    })

    describe('declaredTypes', () => {
      it('gives the declared types, used or not, each list by name with its attributes by name (latest type), and none of another dataset', async () => {
        const other = freshDatasetId()
        await load(ds, [
          typesRecord(ds, {
            event_types: [{ name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] }],
            object_types: [{ name: 'Z', attributes: [] }],
          }),
          ev(ds, { type: 'A', objects: [order('o1')], ts: at(0) }),
          typesRecord(ds, {
            event_types: [
              { name: 'A', attributes: [] },
              {
                name: 'pay order',
                attributes: [
                  { name: 'method', type: 'string' },
                  { name: 'amount', type: 'integer' },
                ],
              },
            ],
          }),
        ])
        await load(other, [typesRecord(other, { object_types: [{ name: 'elsewhere', attributes: [] }] })])
        expect(await q.declaredTypes(ds)).toEqual({
          event_types: [
            { name: 'A', attributes: [] },
            {
              name: 'pay order',
              attributes: [
                { name: 'amount', type: 'integer' },
                { name: 'method', type: 'string' },
              ],
            },
          ],
          object_types: [{ name: 'Z', attributes: [] }],
        })
        expect(await q.declaredTypes(freshDatasetId())).toEqual({ event_types: [], object_types: [] })
      })
    })

    describe('object', () => {
      it('gives null for an object the dataset does not have', async () => {
        await loadEvents(ds, SHOP)
        expect(await q.object(ds, 'order', 'nope', 1000)).toBeNull()
        expect(await q.object(ds, 'item', 'o1', 1000)).toBeNull()
      })

      it('gives the attributes, their history, the trace in (timestamp, position) order with qualifiers, and the related objects', async () => {
        const positions = await load(ds, [
          ...SHOP.map((e) => ev(ds, e)),
          upsertRecord(ds, 'item', 'i1', { color: 'red' }, at(101)),
          upsertRecord(ds, 'item', 'i1', { weight: 2 }, at(102)),
        ])
        const detail = await q.object(ds, 'item', 'i1', 1000)
        const i1 = objectIdOf(ds, 'item', 'i1')
        expect(detail?.object).toEqual({
          object_id: i1,
          type: 'item',
          id: 'i1',
          attributes: { color: 'red', weight: 2 },
          created_at: at(100),
          updated_at: at(102),
        })
        expect(detail?.attribute_history).toEqual([
          { time: at(101), position: positions[5], attributes: { color: 'red' } },
          { time: at(102), position: positions[6], attributes: { weight: 2 } },
        ])
        expect(detail?.attribute_history_truncated).toBe(false)
        expect(detail?.trace.map((t) => [t.event_type, t.timestamp, t.end_timestamp, t.qualifiers, t.position])).toEqual([
          ['Create Order', at(0), at(0, 30), ['contains'], positions[0]],
          ['Pick', at(5), at(25), ['checked', 'picked'], positions[2]],
          ['Ship', at(20), null, [], positions[4]],
        ])
        expect(detail?.trace_truncated).toBe(false)
        expect(detail?.related).toEqual([
          { object_id: objectIdOf(ds, 'item', 'i2'), type: 'item', id: 'i2', shared_events: 2 },
          { object_id: objectIdOf(ds, 'order', 'o1'), type: 'order', id: 'o1', shared_events: 2 },
        ])
        expect(detail?.related_truncated).toBe(false)
      })

      it('gives its O2O relationships by (type, id, qualifier), each with the time of the first upsert that asserted it', async () => {
        await load(ds, [
          upsertRecord(ds, 'order', 'o1', {}, at(101), {
            timestamp: at(3),
            relationships: [
              { type: 'item', id: 'i2', qualifier: 'contains' },
              { type: 'customer', id: 'c1', qualifier: 'placed by' },
            ],
          }),
          upsertRecord(ds, 'order', 'o1', {}, at(102), {
            relationships: [
              { type: 'item', id: 'i2', qualifier: 'contains' },
              { type: 'item', id: 'i1' },
            ],
          }),
        ])
        const detail = await q.object(ds, 'order', 'o1', 2)
        expect(detail?.relationships).toEqual([
          { object_id: objectIdOf(ds, 'customer', 'c1'), type: 'customer', id: 'c1', qualifier: 'placed by', time: at(3) },
          { object_id: objectIdOf(ds, 'item', 'i1'), type: 'item', id: 'i1', qualifier: null, time: at(102) },
        ])
        expect(detail?.relationships_truncated).toBe(true)
        expect((await q.object(ds, 'order', 'o1', 10))?.relationships.map((r) => [r.id, r.qualifier])).toEqual([
          ['c1', 'placed by'],
          ['i1', null],
          ['i2', 'contains'],
        ])
        expect(await q.object(ds, 'item', 'i1', 10)).toMatchObject({ object: { type: 'item', id: 'i1', attributes: {} }, relationships: [] })
      })

      it('gives the O2O relationships of other objects to it, by the source’s (type, id, qualifier), capped at the limit', async () => {
        await load(ds, [
          upsertRecord(ds, 'order', 'o2', {}, at(101), { timestamp: at(3), relationships: [{ type: 'item', id: 'i1', qualifier: 'contains' }] }),
          upsertRecord(ds, 'order', 'o1', {}, at(102), {
            relationships: [
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'item', id: 'i1' },
              { type: 'item', id: 'i2', qualifier: 'contains' },
            ],
          }),
          upsertRecord(ds, 'box', 'b1', {}, at(103), { relationships: [{ type: 'item', id: 'i1', qualifier: 'holds' }] }),
        ])
        const o1 = objectIdOf(ds, 'order', 'o1')
        const detail = await q.object(ds, 'item', 'i1', 10)
        expect(detail?.incoming_relationships).toEqual([
          { object_id: objectIdOf(ds, 'box', 'b1'), type: 'box', id: 'b1', qualifier: 'holds', time: at(103) },
          { object_id: o1, type: 'order', id: 'o1', qualifier: null, time: at(102) },
          { object_id: o1, type: 'order', id: 'o1', qualifier: 'contains', time: at(102) },
          { object_id: objectIdOf(ds, 'order', 'o2'), type: 'order', id: 'o2', qualifier: 'contains', time: at(3) },
        ])
        expect(detail?.incoming_relationships_truncated).toBe(false)
        expect(detail?.relationships).toEqual([])
        const cut = await q.object(ds, 'item', 'i1', 2)
        expect([cut?.incoming_relationships.map((r) => [r.id, r.qualifier]), cut?.incoming_relationships_truncated]).toEqual([
          [
            ['b1', 'holds'],
            ['o1', null],
          ],
          true,
        ])
        expect((await q.object(ds, 'order', 'o1', 10))?.incoming_relationships).toEqual([])
      })

      it('keeps the latest changes of the attribute history at the limit, in log order, and says older ones were left out', async () => {
        const positions = await load(
          ds,
          [1, 2, 3].map((n) => upsertRecord(ds, 'item', 'i1', { n }, at(100 + n))),
        )
        const detail = await q.object(ds, 'item', 'i1', 2)
        expect(detail?.attribute_history).toEqual([
          { time: at(102), position: positions[1], attributes: { n: 2 } },
          { time: at(103), position: positions[2], attributes: { n: 3 } },
        ])
        expect(detail?.attribute_history_truncated).toBe(true)
        expect(detail?.object.attributes).toEqual({ n: 3 })
        expect((await q.object(ds, 'item', 'i1', 3))?.attribute_history_truncated).toBe(false)
      })

      it('cuts the trace and the related objects at the limit and says so', async () => {
        await loadEvents(ds, SHOP)
        const detail = await q.object(ds, 'item', 'i1', 2)
        expect(detail?.trace.map((t) => t.event_type)).toEqual(['Create Order', 'Pick'])
        expect(detail?.trace_truncated).toBe(true)
        expect(detail?.related).toHaveLength(2)
        expect(detail?.related_truncated).toBe(false)
        const one = await q.object(ds, 'item', 'i1', 1)
        expect(one?.related.map((r) => r.id)).toEqual(['i2'])
        expect(one?.related_truncated).toBe(true)
      })
    })

    describe('events', () => {
      /** Every page of a query, following `next` (at most 100 pages). */
      async function allPages(dataset: string, filter: Omit<Parameters<ReadModelQuery['events']>[1], 'after'>): Promise<EventView[][]> {
        const pages: EventView[][] = []
        let after: EventsAfter | undefined
        for (let i = 0; i < 100; i++) {
          const page = await q.events(dataset, { ...filter, ...(after === undefined ? {} : { after }) })
          pages.push(page.events)
          if (page.next === null) break
          after = page.next
        }
        return pages
      }

      it('gives events with their E2O links in (timestamp, position) order', async () => {
        const positions = await loadEvents(ds, SHOP)
        const page = await q.events(ds, { limit: 100 })
        expect(page.next).toBeNull()
        expect(page.events.map((e) => [e.event_type, e.timestamp, e.position])).toEqual([
          ['Create Order', at(0), positions[0]],
          ['Pick', at(5), positions[2]],
          ['Pick', at(5), positions[3]],
          ['Pay', at(10), positions[1]],
          ['Ship', at(20), positions[4]],
        ])
        const first = page.events[0]
        expect(first?.properties).toEqual({ total: 12.5 })
        expect(first?.end_timestamp).toBe(at(0, 30))
        expect(first?.objects).toEqual([
          { object_id: objectIdOf(ds, 'item', 'i1'), type: 'item', id: 'i1', qualifier: 'contains' },
          { object_id: objectIdOf(ds, 'item', 'i2'), type: 'item', id: 'i2', qualifier: null },
          { object_id: objectIdOf(ds, 'order', 'o1'), type: 'order', id: 'o1', qualifier: null },
        ])
        expect(page.events[1]?.objects.map((o) => o.qualifier)).toEqual(['checked', 'picked'])
      })

      it('keeps one E2O link per (object, qualifier) of an event that names an object twice with one qualifier', async () => {
        await loadEvents(ds, [
          { type: 'Pick', objects: [item('i1', 'picked'), item('i2'), item('i1', 'picked'), item('i1', 'checked'), item('i2')], ts: at(0) },
          { type: 'Pack', objects: [item('i1', 'packed'), item('i1', 'packed')], ts: at(1) },
        ])
        const page = await q.events(ds, { limit: 100 })
        expect(page.events.map((e) => [e.event_type, e.objects.map((o) => [o.id, o.qualifier])])).toEqual([
          [
            'Pick',
            [
              ['i1', 'checked'],
              ['i1', 'picked'],
              ['i2', null],
            ],
          ],
          ['Pack', [['i1', 'packed']]],
        ])
        const i1 = await q.object(ds, 'item', 'i1', 1000)
        expect(i1?.trace.map((t) => [t.event_type, t.qualifiers])).toEqual([
          ['Pick', ['checked', 'picked']],
          ['Pack', ['packed']],
        ])
      })

      it('pages with no gap and no duplicate, ties on timestamp broken by position', async () => {
        // 7 events, several at the same timestamp, sent out of time order.
        const times = [3, 1, 1, 2, 1, 3, 0]
        const positions = await loadEvents(
          ds,
          times.map((m, i) => ({ type: `E${String(i)}`, objects: [order('o1')], ts: at(m) })),
        )
        const expected = times
          .map((m, i) => ({ ts: at(m), position: positions[i] ?? -1 }))
          .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.position - b.position))
          .map((e) => e.position)
        for (const limit of [1, 2, 3, 7, 8]) {
          const pages = await allPages(ds, { limit })
          expect(pages.flat().map((e) => e.position)).toEqual(expected)
          expect(pages.every((p) => p.length <= limit)).toBe(true)
          expect(pages.length).toBe(Math.max(1, Math.ceil(7 / limit)))
        }
      })

      it('filters by event type, object type, object id and time window (from inclusive, to exclusive)', async () => {
        await loadEvents(ds, SHOP)
        const types = async (filter: Omit<Parameters<ReadModelQuery['events']>[1], 'limit'>) =>
          (await q.events(ds, { limit: 100, ...filter })).events.map((e) => `${e.event_type}@${e.timestamp.slice(14, 16)}`)
        expect(await types({ eventType: 'Pick' })).toEqual(['Pick@05', 'Pick@05'])
        expect(await types({ objectType: 'order' })).toEqual(['Create Order@00', 'Pay@10', 'Ship@20'])
        expect(await types({ objectId: 'i2' })).toEqual(['Create Order@00', 'Pick@05', 'Ship@20'])
        expect(await types({ objectId: 'i2', objectType: 'order' })).toEqual([])
        expect(await types({ objectId: 'o1', objectType: 'order', eventType: 'Pay' })).toEqual(['Pay@10'])
        expect(await types({ from: at(5), to: at(20) })).toEqual(['Pick@05', 'Pick@05', 'Pay@10'])
        expect(await types({ from: at(5, 1) })).toEqual(['Pay@10', 'Ship@20'])
      })

      it('counts every page’s events in total, whatever the page and the cursor', async () => {
        await loadEvents(ds, SHOP)
        const first = await q.events(ds, { limit: 1, objectType: 'order' })
        expect(first.events).toHaveLength(1)
        expect(first.total).toBe(3)
        if (first.next === null) throw new Error('a next page was expected')
        expect((await q.events(ds, { limit: 1, objectType: 'order', after: first.next })).total).toBe(3)
        expect((await q.events(ds, { limit: 100, objectId: 'i2' })).total).toBe(3)
        expect((await q.events(ds, { limit: 100, eventType: 'Pick', from: at(5), to: at(20) })).total).toBe(2)
        expect((await q.events(ds, { limit: 100, eventType: 'Nothing' })).total).toBe(0)
      })

      it('gives the same pages without their count when asked for none (`count: false`)', async () => {
        await loadEvents(ds, SHOP)
        const counted = await q.events(ds, { limit: 1, objectType: 'order' })
        const uncounted = await q.events(ds, { limit: 1, objectType: 'order', count: false })
        expect(uncounted).toEqual({ ...counted, total: null })
        if (uncounted.next === null) throw new Error('a next page was expected')
        const second = await q.events(ds, { limit: 1, objectType: 'order', after: uncounted.next, count: false })
        expect(second.total).toBeNull()
        expect(second.events.map((e) => e.event_type)).toEqual(
          (await q.events(ds, { limit: 1, objectType: 'order', after: uncounted.next })).events.map((e) => e.event_type),
        )
      })

      it('pages a filtered query across ties', async () => {
        await loadEvents(ds, SHOP)
        const pages = await allPages(ds, { limit: 1, objectType: 'item' })
        expect(pages.map((p) => p.map((e) => e.event_type))).toEqual([['Create Order'], ['Pick'], ['Pick'], ['Ship']])
      })
    })

    describe('objectHistories', () => {
      it('pages every object by (type, id) with its attribute history in log order', async () => {
        const positions = await load(ds, [
          ev(ds, { type: 'A', objects: [order('o1'), order('o2'), item('i1')], ts: at(0) }),
          upsertRecord(ds, 'order', 'o1', { status: 'open' }, at(101)),
          upsertRecord(ds, 'order', 'o1', { status: 'paid' }, at(102)),
          upsertRecord(ds, 'item', 'i1', { n: 1 }, at(103)),
        ])
        const pages = []
        let after: ObjectKey | undefined
        for (let i = 0; i < 10; i++) {
          const page = await q.objectHistories(ds, { limit: 2, ...(after === undefined ? {} : { after }) })
          pages.push(page.objects)
          if (page.next === null) break
          after = page.next
        }
        expect(pages.map((p) => p.length)).toEqual([2, 1])
        const all = pages.flat()
        expect(all.map((o) => [o.type, o.id, o.object_id])).toEqual([
          ['item', 'i1', objectIdOf(ds, 'item', 'i1')],
          ['order', 'o1', objectIdOf(ds, 'order', 'o1')],
          ['order', 'o2', objectIdOf(ds, 'order', 'o2')],
        ])
        expect(all.find((o) => o.id === 'o1')?.changes).toEqual([
          { position: positions[1], time: at(101), attributes: { status: 'open' } },
          { position: positions[2], time: at(102), attributes: { status: 'paid' } },
        ])
        expect(all.find((o) => o.id === 'o2')).toEqual({ object_id: objectIdOf(ds, 'order', 'o2'), type: 'order', id: 'o2', changes: [], relationships: [] })
        expect(await q.objectHistories(freshDatasetId(), { limit: 10 })).toEqual({ objects: [], next: null })
      })

      it('gives each object its O2O relationships once, and values with the time they took effect', async () => {
        const positions = await load(ds, [
          upsertRecord(ds, 'order', 'o1', { status: 'open' }, at(101), {
            timestamp: '2024-05-01T12:00:00+02:00',
            relationships: [
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'customer', id: 'c1' },
            ],
          }),
          upsertRecord(ds, 'order', 'o1', {}, at(102), {
            relationships: [
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'item', id: 'i1' },
            ],
          }),
        ])
        const { objects } = await q.objectHistories(ds, { limit: 10 })
        const o1 = objects.find((o) => o.id === 'o1')
        expect(o1?.changes).toEqual([{ position: positions[0], time: at(0), attributes: { status: 'open' } }])
        const rel = (type: string, id: string, qualifier: string | null) => ({ object_id: objectIdOf(ds, type, id), type, id, qualifier })
        expect(o1?.relationships).toEqual(
          [rel('item', 'i1', 'contains'), rel('customer', 'c1', null), rel('item', 'i1', null)].sort(
            (a, b) => (a.object_id < b.object_id ? -1 : a.object_id > b.object_id ? 1 : 0) || (a.qualifier === null ? -1 : 1),
          ),
        )
        // The targets exist from their first reference, without attributes.
        expect(objects.map((o) => [o.type, o.id, o.changes.length]).sort()).toEqual([
          ['customer', 'c1', 0],
          ['item', 'i1', 0],
          ['order', 'o1', 1],
        ])
      })
    })

    describe('auditChain and auditChainAt', () => {
      it('hold one entry per record of the dataset, chained from the genesis hash over each record’s canonical form, apart from other datasets', async () => {
        const other = freshDatasetId()
        await loadEvents(other, SHOP.slice(0, 2))
        const positions = await loadEvents(ds, SHOP)
        const records = await h.log.readStream(ds, null, 100)
        let hash = GENESIS_HASH
        const expected = records.map((r, i) => {
          hash = chainStep(hash, canonicalRecord(r))
          return { position: r.position, seq: i + 1, hash }
        })
        expect(expected.map((e) => e.position)).toEqual(positions)
        expect(await q.auditChain(ds, null, 100)).toEqual(expected)
        expect(await q.auditChain(ds, positions[1] ?? 0, 2)).toEqual(expected.slice(2, 4))
        expect(await q.auditChainAt(ds, null)).toEqual(expected[4])
        expect(await q.auditChainAt(ds, (positions[2] ?? 0) + 0.5)).toEqual(expected[2])
        expect(await q.auditChainAt(ds, (positions[0] ?? 0) - 1)).toBeNull()
        expect((await q.auditChain(other, null, 100)).map((e) => e.seq)).toEqual([1, 2])
      })

      it('are unchanged when the records are applied again (a replay over rows it holds)', async () => {
        await loadEvents(ds, SHOP)
        const before = await q.auditChain(ds, null, 100)
        const records = await h.log.readStream(ds, null, 100)
        const name = 'audit-replay'
        await h.store.apply(batchOf(name, null, records[records.length - 1]?.position ?? 0, records))
        expect(await q.auditChain(ds, null, 100)).toEqual(before)
      })
    })

    describe('objects an export writes as type/id', () => {
      it('names the ids that several object types use, and finds the objects of given ids', async () => {
        await loadEvents(ds, [
          { type: 'A', objects: [order('1'), item('1'), item('2'), { type: 'customer', id: 'order/1' }], ts: at(0) },
          { type: 'B', objects: [order('3'), { type: 'customer', id: '3' }, { type: 'customer', id: 'c9' }], ts: at(1) },
        ])
        expect(await q.sharedObjectIds(ds)).toEqual(['1', '3'])
        const found = await q.objectsWithIds(ds, ['1', 'order/1', 'nope'])
        expect(found).toEqual([
          { object_id: objectIdOf(ds, 'customer', 'order/1'), type: 'customer', id: 'order/1' },
          { object_id: objectIdOf(ds, 'item', '1'), type: 'item', id: '1' },
          { object_id: objectIdOf(ds, 'order', '1'), type: 'order', id: '1' },
        ])
        expect(await q.objectsWithIds(ds, [])).toEqual([])
        expect(await q.sharedObjectIds(freshDatasetId())).toEqual([])
      })

      it('pages only the objects asked for, in (type, id) order', async () => {
        await loadEvents(ds, [{ type: 'A', objects: [order('o1'), order('o2'), item('i1'), item('i2')], ts: at(0) }])
        const only = [objectIdOf(ds, 'order', 'o2'), objectIdOf(ds, 'item', 'i1')]
        const first = await q.objectHistories(ds, { limit: 1, objectIds: only })
        expect(first.objects.map((o) => o.id)).toEqual(['i1'])
        expect(first.next).toEqual({ type: 'item', id: 'i1' })
        const second = await q.objectHistories(ds, { limit: 1, objectIds: only, after: { type: 'item', id: 'i1' } })
        expect([second.objects.map((o) => o.id), second.next]).toEqual([['o2'], null])
      })
    })

    describe('isolation', () => {
      it('never answers with another dataset’s events, objects or map', async () => {
        const other = freshDatasetId()
        await loadEvents(other, SHOP)
        expect(await q.summary(ds)).toMatchObject({ events: 0, objects: 0, e2o: 0 })
        expect(await q.eventTypes(ds)).toEqual([])
        expect(await q.objectTypes(ds)).toEqual([])
        expect(await q.object(ds, 'order', 'o1', 1000)).toBeNull()
        expect(await q.events(ds, { limit: 100 })).toEqual({ events: [], next: null, total: 0 })
        expect(await q.events(ds, { limit: 100, count: false })).toEqual({ events: [], next: null, total: null })
        expect((await q.processMap(ds, {})).object_types).toEqual([])
      })

      it('keeps two datasets with the same object ids apart', async () => {
        const other = freshDatasetId()
        await loadEvents(other, [{ type: 'Other', objects: [item('i1'), order('o1')], ts: at(1) }])
        await loadEvents(ds, SHOP)
        expect((await q.processMap(ds, {})).object_types).toEqual([SHOP_ITEM_MAP, SHOP_ORDER_MAP])
        const detail = await q.object(ds, 'item', 'i1', 1000)
        expect(detail?.trace.map((t) => t.event_type)).toEqual(['Create Order', 'Pick', 'Ship'])
        expect(detail?.related.map((r) => r.id)).toEqual(['i2', 'o1'])
      })
    })

    describe('processMap', () => {
      it('gives every object type’s directly-follows graph, sorted, with run, elapsed and waiting times', async () => {
        await loadEvents(ds, SHOP)
        expect((await q.processMap(ds, {})).object_types).toEqual([SHOP_ITEM_MAP, SHOP_ORDER_MAP])
      })

      it('maps only the object types asked for', async () => {
        await loadEvents(ds, SHOP)
        expect((await q.processMap(ds, { objectTypes: ['item'] })).object_types).toEqual([SHOP_ITEM_MAP])
        expect((await q.processMap(ds, { objectTypes: ['order', 'nope'] })).object_types).toEqual([SHOP_ORDER_MAP])
      })

      it('counts an object linked twice to one event (two qualifiers) as one pair, without a self-loop', async () => {
        await loadEvents(ds, [
          { type: 'A', objects: [item('x', 'q1'), item('x', 'q2')], ts: at(0) },
          { type: 'B', objects: [item('x')], ts: at(1) },
        ])
        expect((await q.processMap(ds, {})).object_types).toEqual([
          {
            object_type: 'item',
            objects: 1,
            activities: [
              { activity: 'A', events: 1, objects: 1, total: 1, run_time: null },
              { activity: 'B', events: 1, objects: 1, total: 1, run_time: null },
            ],
            edges: [{ source: 'A', target: 'B', total: 1, objects: 1, event_couples: 1, elapsed: stats([60]), waiting: null }],
            start_activities: [{ activity: 'A', objects: 1 }],
            end_activities: [{ activity: 'B', objects: 1 }],
          },
        ])
      })

      it('breaks ties on timestamp by log position', async () => {
        await loadEvents(ds, [
          { type: 'Second', objects: [item('x')], ts: at(0) },
          { type: 'First', objects: [item('y')], ts: at(0) },
          { type: 'Third', objects: [item('x'), item('y')], ts: at(0) },
        ])
        const [map] = (await q.processMap(ds, {})).object_types
        expect(map?.edges.map((e) => [e.source, e.target, e.total])).toEqual([
          ['First', 'Third', 1],
          ['Second', 'Third', 1],
        ])
        expect(map?.edges[0]?.elapsed).toEqual(stats([0]))
      })

      it('counts a couple shared by several objects once in event_couples', async () => {
        await loadEvents(ds, [
          { type: 'A', objects: [order('o1'), order('o2')], ts: at(0) },
          { type: 'B', objects: [order('o1'), order('o2')], ts: at(1) },
          { type: 'A', objects: [order('o3')], ts: at(2) },
          { type: 'B', objects: [order('o3')], ts: at(5) },
        ])
        const [map] = (await q.processMap(ds, {})).object_types
        expect(map?.edges).toEqual([{ source: 'A', target: 'B', total: 3, objects: 3, event_couples: 2, elapsed: stats([60, 60, 180]), waiting: null }])
        expect(map?.activities).toEqual([
          { activity: 'A', events: 2, objects: 3, total: 3, run_time: null },
          { activity: 'B', events: 2, objects: 3, total: 3, run_time: null },
        ])
      })

      it('takes the median of an even count as the mean of the two middle values', async () => {
        const elapsed = [1, 2, 3, 10]
        await loadEvents(
          ds,
          elapsed.flatMap((s, i) => [
            { type: 'A', objects: [item(`x${String(i)}`)], ts: at(0), end: at(0, s / 2) },
            { type: 'B', objects: [item(`x${String(i)}`)], ts: at(0, s), end: at(0, s + 1 + i) },
          ]),
        )
        const [map] = (await q.processMap(ds, {})).object_types
        expect(map?.edges[0]?.elapsed).toEqual({ count: 4, mean: 4, median: 2.5, min: 1, max: 10, sum: 16 })
        expect(map?.edges[0]?.waiting).toEqual({ count: 4, mean: 2, median: 1.25, min: 0.5, max: 5, sum: 8 })
        expect(map?.activities.map((a) => a.run_time)).toEqual([
          { count: 4, mean: 2, median: 1.25, min: 0.5, max: 5, sum: 8 },
          { count: 4, mean: 2.5, median: 2.5, min: 1, max: 4, sum: 10 },
        ])
      })

      it('keeps millisecond precision', async () => {
        await loadEvents(ds, [
          { type: 'A', objects: [item('x')], ts: '2024-05-01T10:00:00.001Z', end: '2024-05-01T10:00:00.124Z' },
          { type: 'B', objects: [item('x')], ts: '2024-05-01T10:00:01.000Z' },
        ])
        const [map] = (await q.processMap(ds, {})).object_types
        expect(map?.activities[0]?.run_time).toEqual(stats([0.123]))
        expect(map?.edges[0]?.elapsed).toEqual(stats([0.999]))
        expect(map?.edges[0]?.waiting).toEqual(stats([0.876]))
      })

      it('filters events by the window first: edges across its boundary disappear, start and end activities are inside it', async () => {
        await loadEvents(ds, SHOP)
        expect((await q.processMap(ds, { from: at(5), to: at(20) })).object_types).toEqual([
          {
            object_type: 'item',
            objects: 2,
            activities: [{ activity: 'Pick', events: 2, objects: 2, total: 2, run_time: stats([1200]) }],
            edges: [],
            start_activities: [{ activity: 'Pick', objects: 2 }],
            end_activities: [{ activity: 'Pick', objects: 2 }],
          },
          {
            object_type: 'order',
            objects: 1,
            activities: [{ activity: 'Pay', events: 1, objects: 1, total: 1, run_time: null }],
            edges: [],
            start_activities: [{ activity: 'Pay', objects: 1 }],
            end_activities: [{ activity: 'Pay', objects: 1 }],
          },
        ])
      })

      it('leaves out object types without an event in the window', async () => {
        await loadEvents(ds, SHOP)
        expect((await q.processMap(ds, { from: at(10), to: at(11) })).object_types.map((m) => m.object_type)).toEqual(['order'])
        expect((await q.processMap(ds, { from: at(11), to: at(19) })).object_types).toEqual([])
        expect((await q.processMap(ds, { to: at(0) })).object_types).toEqual([])
      })
    })
  })
}
