/**
 * Contract of the ReadModelQuery port's analysis reads (performance, variants, typeRelations): the
 * same hand-computed cases for every adapter. Datasets are built the real way: records appended
 * to a real log, then the real Projector applies them to the adapter's read models. Each value
 * below is worked out by hand from the definitions (docs/analysis.md, after OPerA and pm4py).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import type { ReadModelQuery } from '../../src/ports/read-model-query.js'
import type { PerformanceActivity } from '../../src/schemas/analysis.js'
import type { Stats } from '../../src/schemas/process.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { eventRecord, freshDatasetId, type ObjectRef, upsertRecord } from './fixtures.js'
import type { ReadModelQueryHarness } from './read-model-query.contract.js'

const BASE = Date.parse('2024-05-01T10:00:00.000Z')
/** `minutes` (and `seconds`) after 2024-05-01T10:00:00Z, as the read models hold times. */
const at = (minutes: number, seconds = 0): string => new Date(BASE + minutes * 60_000 + seconds * 1000).toISOString()

/** Statistics of durations given in seconds (the median of an even count: the mean of the two middle values). */
function stats(values: number[]): Stats {
  const v = [...values].sort((a, b) => a - b)
  const n = v.length
  const median = ((v[Math.floor((n - 1) / 2)] ?? 0) + (v[Math.ceil((n - 1) / 2)] ?? 0)) / 2
  const sum = v.reduce((a, b) => a + b, 0)
  return { count: n, mean: Math.round((sum / n) * 1000) / 1000, median, min: v[0] ?? 0, max: v[n - 1] ?? 0, sum }
}

const order = (id: string, qualifier?: string): ObjectRef => ({ type: 'order', id, ...(qualifier === undefined ? {} : { qualifier }) })
const item = (id: string, qualifier?: string): ObjectRef => ({ type: 'item', id, ...(qualifier === undefined ? {} : { qualifier }) })

interface Ev {
  name: string
  type: string
  objects: ObjectRef[]
  ts: string
  end?: string
}

/**
 * The shop, sent out of time order (Pay at 10 min before the Picks at 5): order o1: Create
 * Order(0) → Pay(10) → Ship(20); items i1, i2: Create Order(0) → Pick(5) → Ship(20). Create
 * Order ends at 0:30, i1's Pick at 25 min (after Ship); i1 is linked twice to its Pick.
 */
const SHOP: Ev[] = [
  { name: 'create', type: 'Create Order', objects: [order('o1'), item('i1', 'contains'), item('i2')], ts: at(0), end: at(0, 30) },
  { name: 'pay', type: 'Pay', objects: [order('o1')], ts: at(10) },
  { name: 'pick1', type: 'Pick', objects: [item('i1', 'picked'), item('i1', 'checked')], ts: at(5), end: at(25) },
  { name: 'pick2', type: 'Pick', objects: [item('i2')], ts: at(5) },
  { name: 'ship', type: 'Ship', objects: [order('o1'), item('i1'), item('i2')], ts: at(20) },
]

const none = { pooling: null, lagging: null, readying: null, delaying: 0 }

/** Runs the analysis contract against the adapter `open` builds (one fresh store per case). */
export function analysisQueryContract(adapter: string, open: () => Promise<ReadModelQueryHarness>): void {
  describe(`ReadModelQuery analysis contract: ${adapter}`, () => {
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

    /** Appends the events (one append each, in order) and catches the read models up. @returns event ids by name. */
    async function load(dataset: string, events: Ev[], more: NewRecord[] = []): Promise<Record<string, string>> {
      const ids: Record<string, string> = {}
      for (const e of events) {
        const r = eventRecord(dataset, e.type, e.objects, { timestamp: e.ts, ...(e.end === undefined ? {} : { endTimestamp: e.end }), receivedAt: at(100) })
        ids[e.name] = 'event_id' in r.data ? r.data.event_id : ''
        await h.log.append(dataset, [r], [])
      }
      for (const r of more) await h.log.append(dataset, [r], [])
      await new Projector(h.log, h.store).catchUp()
      return ids
    }

    const activity = (list: PerformanceActivity[], name: string) => list.find((a) => a.activity === name)

    describe('performance', () => {
      it('gives an event with no predecessor no measures, and lists its object types with none', async () => {
        await load(ds, SHOP)
        expect(activity(await q.performance(ds, { slowest: 5 }), 'Create Order')).toEqual({
          activity: 'Create Order',
          events: 1,
          events_with_predecessors: 0,
          sojourn: null,
          flow: null,
          synchronization: null,
          object_types: [
            { object_type: 'item', ...none },
            { object_type: 'order', ...none },
          ],
          slowest: [],
        })
      })

      it('measures events whose predecessors are all of one type, from the end_timestamp of the predecessor; ties of slowest by later position', async () => {
        const ids = await load(ds, SHOP)
        // Each Pick's one predecessor is Create Order, ready at 0:30 (its end): sojourn = flow = 5 min − 30 s.
        expect(activity(await q.performance(ds, { slowest: 5 }), 'Pick')).toEqual({
          activity: 'Pick',
          events: 2,
          events_with_predecessors: 2,
          sojourn: stats([270, 270]),
          flow: stats([270, 270]),
          synchronization: stats([0, 0]),
          object_types: [{ object_type: 'item', pooling: stats([0, 0]), lagging: stats([0, 0]), readying: stats([0, 0]), delaying: 2 }],
          slowest: [
            { event_id: ids.pick2, timestamp: at(5), sojourn: 270, delaying_object: { type: 'item', id: 'i2' } },
            { event_id: ids.pick1, timestamp: at(5), sojourn: 270, delaying_object: { type: 'item', id: 'i1' } },
          ],
        })
      })

      it('clips a predecessor ready after the event (end_timestamp later than its timestamp) to a sojourn of 0', async () => {
        const ids = await load(ds, SHOP)
        // Ship at 20 min: o1's predecessor Pay ready at 10, i1's Pick at 25 (its end), i2's Pick at 5.
        expect(activity(await q.performance(ds, { slowest: 5 }), 'Ship')).toEqual({
          activity: 'Ship',
          events: 1,
          events_with_predecessors: 1,
          sojourn: stats([0]),
          flow: stats([900]),
          synchronization: stats([1200]),
          object_types: [
            { object_type: 'item', pooling: stats([1200]), lagging: stats([1200]), readying: stats([0]), delaying: 1 },
            { object_type: 'order', pooling: stats([0]), lagging: stats([300]), readying: stats([900]), delaying: 0 },
          ],
          slowest: [{ event_id: ids.ship, timestamp: at(20), sojourn: 0, delaying_object: { type: 'item', id: 'i1' } }],
        })
        // Pay at 10 min after Create Order ready at 0:30.
        expect(activity(await q.performance(ds, { slowest: 0 }), 'Pay')?.sojourn).toEqual(stats([570]))
        expect(activity(await q.performance(ds, { slowest: 0 }), 'Ship')?.slowest).toEqual([])
      })

      it('breaks ties of the delaying object by the later predecessor position, then by object type and id', async () => {
        const ids = await load(ds, [
          { name: 'p1', type: 'Load', objects: [{ type: 'pallet', id: 'x1' }], ts: at(10) },
          { name: 'p2', type: 'Load', objects: [{ type: 'truck', id: 'y1' }], ts: at(10) },
          {
            name: 'e',
            type: 'Depart',
            objects: [
              { type: 'pallet', id: 'x1' },
              { type: 'truck', id: 'y1' },
            ],
            ts: at(20),
          },
          {
            name: 'p3',
            type: 'Wrap',
            objects: [
              { type: 'pallet', id: 'x3' },
              { type: 'pallet', id: 'x2' },
            ],
            ts: at(30),
          },
          {
            name: 'f',
            type: 'Stack',
            objects: [
              { type: 'pallet', id: 'x3' },
              { type: 'pallet', id: 'x2' },
            ],
            ts: at(40),
          },
        ])
        const answer = await q.performance(ds, { slowest: 5 })
        // Both ready at 10 min: y1's predecessor came later in the log.
        expect(activity(answer, 'Depart')?.slowest).toEqual([
          { event_id: ids.e, timestamp: at(20), sojourn: 600, delaying_object: { type: 'truck', id: 'y1' } },
        ])
        expect(activity(answer, 'Depart')?.object_types.map((t) => [t.object_type, t.delaying])).toEqual([
          ['pallet', 0],
          ['truck', 1],
        ])
        // One predecessor for both: the first by (type, id).
        expect(activity(answer, 'Stack')?.slowest).toEqual([
          { event_id: ids.f, timestamp: at(40), sojourn: 600, delaying_object: { type: 'pallet', id: 'x2' } },
        ])
      })

      it('measures only the events in the window, with predecessors from whole traces', async () => {
        const ids = await load(ds, SHOP)
        const answer = await q.performance(ds, { slowest: 5, from: at(15), to: at(30) })
        expect(answer.map((a) => a.activity)).toEqual(['Ship'])
        expect(answer[0]?.sojourn).toEqual(stats([0]))
        expect(answer[0]?.flow).toEqual(stats([900]))
        expect(answer[0]?.slowest[0]?.event_id).toBe(ids.ship)
        expect(await q.performance(ds, { slowest: 5, to: at(0) })).toEqual([])
      })

      it('counts only the objects of the chosen types', async () => {
        await load(ds, SHOP)
        const answer = await q.performance(ds, { slowest: 5, objectTypes: ['order'] })
        expect(answer.map((a) => [a.activity, a.events])).toEqual([
          ['Create Order', 1],
          ['Pay', 1],
          ['Ship', 1],
        ])
        // Ship's only input is now o1, ready at 10 min.
        expect(activity(answer, 'Ship')?.sojourn).toEqual(stats([600]))
        expect(activity(answer, 'Ship')?.synchronization).toEqual(stats([0]))
      })

      it('never answers with another dataset’s events', async () => {
        await load(ds, SHOP)
        const other = freshDatasetId()
        await load(other, [{ name: 'x', type: 'Other', objects: [order('o1')], ts: at(1) }])
        expect((await q.performance(ds, { slowest: 5 })).map((a) => a.activity)).toEqual(['Create Order', 'Pay', 'Pick', 'Ship'])
        expect((await q.performance(other, { slowest: 5 })).map((a) => a.activity)).toEqual(['Other'])
        expect(await q.performance(freshDatasetId(), { slowest: 5 })).toEqual([])
      })
    })

    describe('variants', () => {
      /** Objects with sequences [a,b] ×2, [b] ×2, [a] ×1, [a,b,c] ×1, sent out of time order. */
      const PATHS: Ev[] = [
        { name: '1', type: 'b', objects: [order('A1')], ts: at(2) },
        { name: '2', type: 'a', objects: [order('A1'), order('A2')], ts: at(1) },
        { name: '3', type: 'b', objects: [order('A2')], ts: at(4) },
        { name: '4', type: 'b', objects: [order('D1'), order('D2')], ts: at(5) },
        { name: '5', type: 'a', objects: [order('B1')], ts: at(6) },
        { name: '6', type: 'a', objects: [order('C1')], ts: at(7) },
        { name: '7', type: 'b', objects: [order('C1')], ts: at(8) },
        { name: '8', type: 'c', objects: [order('C1'), item('i1')], ts: at(10) },
      ]

      it('orders variants by objects, then by sequence (a prefix first), with share, duration and examples', async () => {
        await load(ds, PATHS)
        const page = await q.variants(ds, { objectType: 'order', limit: 10 })
        expect(page).toEqual({
          objects: 6,
          total: 4,
          next: null,
          variants: [
            { activities: ['a', 'b'], objects: 2, share: 2 / 6, duration: stats([60, 180]), examples: ['A1', 'A2'] },
            { activities: ['b'], objects: 2, share: 2 / 6, duration: stats([0, 0]), examples: ['D1', 'D2'] },
            { activities: ['a'], objects: 1, share: 1 / 6, duration: stats([0]), examples: ['B1'] },
            { activities: ['a', 'b', 'c'], objects: 1, share: 1 / 6, duration: stats([180]), examples: ['C1'] },
          ],
        })
      })

      it('pages to the end without gap or duplicate', async () => {
        await load(ds, PATHS)
        const first = await q.variants(ds, { objectType: 'order', limit: 3 })
        expect(first.variants.map((v) => v.activities.join())).toEqual(['a,b', 'b', 'a'])
        expect(first.next).toEqual({ objects: 1, activities: ['a'] })
        const second = await q.variants(ds, { objectType: 'order', limit: 3, ...(first.next === null ? {} : { after: first.next }) })
        expect(second.variants.map((v) => v.activities.join())).toEqual(['a,b,c'])
        expect({ total: second.total, next: second.next }).toEqual({ total: 4, next: null })
      })

      it('takes the objects’ events in the window only (a window that cuts traces)', async () => {
        await load(ds, PATHS)
        const page = await q.variants(ds, { objectType: 'order', limit: 10, from: at(2), to: at(8) })
        // A1: [b]; A2: [b]; D1, D2: [b]; B1: [a]; C1: [a].
        expect(page.variants.map((v) => [v.activities.join(), v.objects, v.examples])).toEqual([
          ['b', 4, ['A1', 'A2', 'D1']],
          ['a', 2, ['B1', 'C1']],
        ])
        expect(page.objects).toBe(6)
        expect(await q.variants(ds, { objectType: 'nothing', limit: 10 })).toEqual({ objects: 0, total: 0, variants: [], next: null })
      })
    })

    describe('typeRelations', () => {
      it('counts events, E2O links and objects per event per (activity, object type), and O2O per (source type, qualifier, target type)', async () => {
        await load(ds, SHOP, [
          upsertRecord(ds, 'order', 'o1', {}, at(100), {
            relationships: [
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'item', id: 'i2' },
              { type: 'customer', id: 'c1', qualifier: 'placed by' },
            ],
          }),
          upsertRecord(ds, 'order', 'o2', {}, at(100), { relationships: [{ type: 'item', id: 'i3', qualifier: 'contains' }] }),
        ])
        const one = (min: number, mean: number, max: number) => ({ min, mean, max })
        expect(await q.typeRelations(ds, {})).toEqual({
          activity_object_types: [
            { activity: 'Create Order', object_type: 'item', events: 1, e2o: 2, objects_per_event: one(2, 2, 2) },
            { activity: 'Create Order', object_type: 'order', events: 1, e2o: 1, objects_per_event: one(1, 1, 1) },
            { activity: 'Pay', object_type: 'order', events: 1, e2o: 1, objects_per_event: one(1, 1, 1) },
            { activity: 'Pick', object_type: 'item', events: 2, e2o: 3, objects_per_event: one(1, 1, 1) },
            { activity: 'Ship', object_type: 'item', events: 1, e2o: 2, objects_per_event: one(2, 2, 2) },
            { activity: 'Ship', object_type: 'order', events: 1, e2o: 1, objects_per_event: one(1, 1, 1) },
          ],
          o2o: [
            { source_type: 'order', qualifier: null, target_type: 'item', relationships: 1 },
            { source_type: 'order', qualifier: 'contains', target_type: 'item', relationships: 2 },
            { source_type: 'order', qualifier: 'placed by', target_type: 'customer', relationships: 1 },
          ],
        })
      })

      it('counts the events in the window only, and a mean of objects per event', async () => {
        await load(ds, [
          ...SHOP,
          { name: 'x', type: 'Pick', objects: [item('i5'), item('i6'), item('i7')], ts: at(6) },
          { name: 'y', type: 'Pick', objects: [item('i8'), item('i9')], ts: at(30) },
        ])
        const answer = await q.typeRelations(ds, { from: at(5), to: at(10) })
        expect(answer.activity_object_types).toEqual([
          { activity: 'Pick', object_type: 'item', events: 3, e2o: 6, objects_per_event: { min: 1, mean: 5 / 3, max: 3 } },
        ])
        expect(await q.typeRelations(freshDatasetId(), {})).toEqual({ activity_object_types: [], o2o: [] })
      })
    })
  })
}
