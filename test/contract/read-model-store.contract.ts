/**
 * Contract of the ReadModelStore port (src/ports/read-model-store.ts; README § Read models):
 * the same cases for every adapter. Records get synthetic positions (fixtures.stored) and are
 * folded with the real projection (projections/registry.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { objectIdOf } from '../../src/core/ids.js'
import { CheckpointConflictError, type ReadModelStore } from '../../src/ports/read-model-store.js'
import { batchOf, changesOf, declarationRecords, eventRecord, freshDatasetId, stored, typesRecord, upsertRecord } from './fixtures.js'
import type { RowReader } from '../helpers/read-model-rows.js'

export interface ReadModelStoreHarness {
  store: ReadModelStore
  /** Every row of a dataset, read from the engine (the writer port has no getters). */
  rows: RowReader
  close(): Promise<void>
}

const T1 = '2024-05-01T10:00:00.000Z'
const T2 = '2024-05-01T11:00:00.000Z'

/** Runs the ReadModelStore contract against the adapter `open` builds (one fresh, empty store per case). */
export function readModelStoreContract(adapter: string, open: () => Promise<ReadModelStoreHarness>): void {
  describe(`ReadModelStore contract: ${adapter}`, () => {
    let h: ReadModelStoreHarness
    let store: ReadModelStore
    let ds: string
    beforeEach(async () => {
      h = await open()
      store = h.store
      ds = freshDatasetId()
    })
    afterEach(async () => {
      await h.close()
    })

    /** Two batches touching orders and items: batch 2 adds one new item and one new order. */
    function batches() {
      const b1 = stored(
        ds,
        [
          eventRecord(
            ds,
            'Create Order',
            [
              { type: 'order', id: 'o1' },
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'item', id: 'i2' },
            ],
            { timestamp: T1, receivedAt: T1 },
          ),
          upsertRecord(ds, 'item', 'i1', { price: 5 }, T1),
        ],
        10,
      )
      const b2 = stored(
        ds,
        [
          eventRecord(
            ds,
            'Add Item',
            [
              { type: 'order', id: 'o1' },
              { type: 'item', id: 'i3' },
            ],
            { timestamp: T2, receivedAt: T2 },
          ),
          upsertRecord(ds, 'order', 'o2', { status: 'open' }, T2),
        ],
        12,
      )
      return { b1, b2 }
    }

    it('has no checkpoint before the first apply, and the applied position after it', async () => {
      const { b1 } = batches()
      const { changes, to } = changesOf(b1)
      expect(await store.checkpoint('p.events')).toBeNull()
      await store.apply(batchOf('p', null, to, changes))
      expect(await store.checkpoint('p.events')).toBe(11)
      expect(await store.checkpoint('other.events')).toBeNull()
    })

    it('refuses an apply whose expected checkpoint is stale (compare-and-set) and applies nothing', async () => {
      const { b1, b2 } = batches()
      const first = changesOf(b1)
      await store.apply(batchOf('p', null, first.to, first.changes))
      const before = await h.rows(ds)
      const second = changesOf(b2)
      const error = await store.apply(batchOf('p', 5, second.to, second.changes)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(CheckpointConflictError)
      expect(error).toMatchObject({ projector: 'p.event_types', expected: 5, actual: 11 })
      await expect(store.apply(batchOf('p', null, second.to, second.changes))).rejects.toBeInstanceOf(CheckpointConflictError)
      expect(await h.rows(ds)).toEqual(before)
      expect(await store.checkpoint('p.events')).toBe(11)
    })

    it('applies the same ChangeSet twice with the same result (idempotent)', async () => {
      const { b1, b2 } = batches()
      const one = changesOf(b1)
      const two = changesOf(b2)
      await store.apply(batchOf('p', null, one.to, one.changes))
      await store.apply(batchOf('p', one.to, two.to, two.changes))
      const once = await h.rows(ds)
      await store.apply(batchOf('p', two.to, two.to, two.changes))
      await store.apply(batchOf('replayer', null, one.to, one.changes))
      await store.apply(batchOf('replayer', one.to, two.to, two.changes))
      expect(await h.rows(ds)).toEqual(once)
    })

    it("applies only the records after a row's position when a replay straddles it (the replay rule), as one apply of them all would", async () => {
      const records = stored(
        ds,
        [
          eventRecord(ds, 'Create Order', [{ type: 'order', id: 'o1', properties: { amount: 12 } }], { timestamp: T1, receivedAt: T1 }),
          eventRecord(ds, 'Pay Order', [{ type: 'order', id: 'o1', properties: { paid: true } }], { timestamp: T1, receivedAt: T1 }),
          upsertRecord(ds, 'order', 'o1', { amount: 13 }, T2),
          eventRecord(
            ds,
            'Pay Order',
            [
              { type: 'order', id: 'o1', properties: { refunded: true } },
              { type: 'customer', id: 'c1' },
            ],
            {
              timestamp: T2,
              receivedAt: T2,
            },
          ),
        ],
        20,
      )
      const first = changesOf(records.slice(0, 2))
      const all = changesOf(records)
      // Checkpoint "a" applied the first two records; checkpoint "b" then replays all four over the same rows.
      await store.apply(batchOf('a', null, first.to, first.changes))
      await store.apply(batchOf('b', null, all.to, all.changes))
      const straddled = await h.rows(ds)
      await store.reset()
      await store.apply(batchOf('once', null, all.to, changesOf(records).changes))
      expect(straddled).toEqual(await h.rows(ds))
      expect(straddled.eventTypes.map((t) => [t.name, t.count])).toEqual([
        ['Create Order', 1],
        ['Pay Order', 2],
      ])
      expect(straddled.objects.find((o) => o.external_id === 'o1')?.properties).toEqual({ amount: 13, paid: true, refunded: true })
      expect(straddled.objectTypes.map((t) => [t.name, t.count])).toEqual([
        ['customer', 1],
        ['order', 1],
      ])
    })

    it('keeps declared types merged in log order: applied twice or replayed over a straddle, as one apply of them all', async () => {
      const records = stored(ds, declarationRecords(ds), 30)
      const first = changesOf(records.slice(0, 2))
      const all = changesOf(records)
      await store.apply(batchOf('a', null, first.to, first.changes))
      await store.apply(batchOf('b', null, all.to, all.changes))
      await store.apply(batchOf('b', all.to, all.to, all.changes))
      const straddled = await h.rows(ds)
      expect([straddled.declaredTypes, straddled.declaredAttributes]).toEqual([
        [
          ['event', 'pay order', 31],
          ['object', 'warehouse', 32],
        ],
        [
          ['event', 'pay order', '$x.y', 'string', 31],
          ['event', 'pay order', 'amount', 'integer', 31],
          ['object', 'warehouse', 'capacity', 'integer', 32],
        ],
      ])
      await store.reset()
      await store.apply(batchOf('once', null, all.to, all.changes))
      expect(await h.rows(ds)).toEqual(straddled)
    })

    it('applies one ChangeSet from two concurrent projectors once (upserts on unique keys)', async () => {
      const { b1 } = batches()
      const { changes, to } = changesOf(b1)
      await Promise.all([store.apply(batchOf('p1', null, to, changes)), store.apply(batchOf('p2', null, to, changes))])
      expect((await h.rows(ds).then((r) => r.eventTypes)).map((t) => [t.name, t.count])).toEqual([['Create Order', 1]])
      expect((await h.rows(ds).then((r) => r.objects)).map((o) => o.external_id)).toEqual(['i1', 'i2', 'o1'])
      expect(await h.rows(ds).then((r) => r.eventObjects)).toHaveLength(3)
    })

    it('counts events per event type and distinct objects per object type', async () => {
      const { b1, b2 } = batches()
      const one = changesOf(b1)
      await store.apply(batchOf('p', null, one.to, one.changes))
      const two = changesOf(b2)
      await store.apply(batchOf('p', one.to, two.to, two.changes))
      expect((await h.rows(ds).then((r) => r.eventTypes)).map((t) => [t.name, t.count, t.first_seen_at, t.last_seen_at])).toEqual([
        ['Add Item', 1, T2, T2],
        ['Create Order', 1, T1, T1],
      ])
      expect((await h.rows(ds).then((r) => r.objectTypes)).map((t) => [t.name, t.count, t.source, t.first_seen_at, t.last_seen_at])).toEqual([
        ['item', 3, 'public_api', T1, T2],
        ['order', 2, 'public_api', T1, T2],
      ])
    })

    it('merges attributes per top-level key: incoming keys replace, missing keys stay, null is stored, nested objects are replaced', async () => {
      const b1 = stored(ds, [upsertRecord(ds, 'order', 'o1', { a: 1, b: { c: 1 }, keep: 'k', n: 5 }, T1)], 1)
      const b2 = stored(ds, [upsertRecord(ds, 'order', 'o1', { b: { d: 2 }, n: null, e: 3 }, T2)], 2)
      await store.apply(batchOf('p', null, 1, changesOf(b1).changes))
      await store.apply(batchOf('p', 1, 2, changesOf(b2).changes))
      expect(await h.rows(ds).then((r) => r.objects)).toEqual([
        {
          dataset_id: ds,
          object_id: objectIdOf(ds, 'order', 'o1'),
          type: 'order',
          external_id: 'o1',
          properties: { a: 1, b: { d: 2 }, keep: 'k', n: null, e: 3 },
          created_at: T1,
          updated_at: T2,
          position: 2,
        },
      ])
    })

    it("keeps an object's attributes and position true from one apply to the next (what a store keeps between its transactions)", async () => {
      const records = [
        upsertRecord(ds, 'order', 'o1', { a: 1, x: 1 }, T1),
        upsertRecord(ds, 'order', 'o1', { a: 2, y: 2 }, T1),
        upsertRecord(ds, 'order', 'o1', { a: 3, z: 3 }, T2),
      ]
      const all = stored(ds, records, 1)
      for (let i = 0; i < all.length; i++) await store.apply(batchOf('p', i === 0 ? null : i, i + 1, changesOf(all.slice(i, i + 1)).changes))
      // A replay of the first two records (another projector's checkpoint) finds the row past them: it changes nothing.
      await store.apply(batchOf('q', null, 2, changesOf(all.slice(0, 2)).changes))
      const objects = (await h.rows(ds)).objects
      expect(objects.map((o) => [o.properties, o.position, o.updated_at])).toEqual([[{ a: 3, x: 1, y: 2, z: 3 }, 3, T2]])
    })

    it("stores attribute keys containing '.' or starting with '$', and '$' values, as sent", async () => {
      const odd = { 'a.b': 1, $x: 2, price: '$price', nested: { 'c.d': { $e: 1 } } }
      await store.apply(batchOf('p', null, 1, changesOf(stored(ds, [upsertRecord(ds, 'order', 'o1', odd, T1)], 1)).changes))
      await store.apply(batchOf('p', 1, 2, changesOf(stored(ds, [upsertRecord(ds, 'order', 'o1', { 'a.b': 3, $y: 4 }, T2)], 2)).changes))
      const [row] = await h.rows(ds).then((r) => r.objects)
      expect(row?.properties).toEqual({ 'a.b': 3, $x: 2, price: '$price', nested: { 'c.d': { $e: 1 } }, $y: 4 })
      expect((await h.rows(ds).then((r) => r.objectChanges)).map((c) => c.attributes)).toEqual([odd, { 'a.b': 3, $y: 4 }])
    })

    it('keeps events, E2O rows and object attribute changes, in their documented order', async () => {
      const { b1, b2 } = batches()
      const one = changesOf(b1)
      await store.apply(batchOf('p', null, one.to, one.changes))
      const two = changesOf(b2)
      await store.apply(batchOf('p', one.to, two.to, two.changes))
      const events = await h.rows(ds).then((r) => r.events)
      expect(events.map((e) => [e.event_type, e.timestamp, e.end_timestamp, e.objects_count, e.position])).toEqual([
        ['Create Order', T1, null, 3, 10],
        ['Add Item', T2, null, 2, 12],
      ])
      const e2o = await h.rows(ds).then((r) => r.eventObjects)
      expect(e2o.map((l) => [l.object_type, l.external_id, l.qualifier, l.event_time, l.position])).toEqual(
        expect.arrayContaining([
          ['order', 'o1', null, T1, 10],
          ['item', 'i1', 'contains', T1, 10],
          ['item', 'i2', null, T1, 10],
          ['order', 'o1', null, T2, 12],
          ['item', 'i3', null, T2, 12],
        ]),
      )
      expect(e2o.map((l) => l.position)).toEqual([10, 10, 10, 12, 12])
      expect((await h.rows(ds).then((r) => r.objectChanges)).map((c) => [c.object_id, c.position, c.time, c.attributes])).toEqual(
        [
          [objectIdOf(ds, 'item', 'i1'), 11, T1, { price: 5 }],
          [objectIdOf(ds, 'order', 'o2'), 13, T2, { status: 'open' }],
        ].sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : 1)),
      )
    })

    it('keeps each O2O relationship once, with the time and position of the first upsert that asserted it, and creates its targets', async () => {
      const records = stored(
        ds,
        [
          upsertRecord(ds, 'order', 'o1', { status: 'open' }, T2, {
            timestamp: T1,
            relationships: [
              { type: 'item', id: 'i1', qualifier: 'contains' },
              { type: 'customer', id: 'c1' },
            ],
          }),
          upsertRecord(ds, 'order', 'o1', {}, T2, { relationships: [{ type: 'item', id: 'i1', qualifier: 'contains' }] }),
        ],
        20,
      )
      const first = changesOf(records.slice(0, 1))
      await store.apply(batchOf('p', null, first.to, first.changes))
      const all = changesOf(records)
      // A second projector replays both records over the same rows: nothing is added twice.
      await store.apply(batchOf('replayer', null, all.to, all.changes))
      const rows = await h.rows(ds)
      const o1 = objectIdOf(ds, 'order', 'o1')
      const o2o = (type: string, id: string, qualifier: string | null) => ({
        dataset_id: ds,
        object_id: o1,
        target_object_id: objectIdOf(ds, type, id),
        qualifier,
        target_type: type,
        target_external_id: id,
        time: T1,
        position: 20,
      })
      expect(rows.objectRelationships).toEqual(
        [o2o('item', 'i1', 'contains'), o2o('customer', 'c1', null)].sort((a, b) => (a.target_object_id < b.target_object_id ? -1 : 1)),
      )
      expect(rows.objects.map((o) => [o.type, o.external_id, o.properties])).toEqual([
        ['customer', 'c1', {}],
        ['item', 'i1', {}],
        ['order', 'o1', { status: 'open' }],
      ])
      expect(rows.objectTypes.map((t) => [t.name, t.count])).toEqual([
        ['customer', 1],
        ['item', 1],
        ['order', 1],
      ])
      // The upsert's values took effect at its timestamp, not when it was received.
      expect(rows.objectChanges.map((c) => [c.object_id, c.time, c.attributes])).toEqual([[o1, T1, { status: 'open' }]])
    })

    it('keeps datasets apart', async () => {
      const other = freshDatasetId()
      const declared = typesRecord(other, { event_types: [{ name: 'e', attributes: [{ name: 'a', type: 'time' }] }] })
      await store.apply(batchOf('p', null, 2, changesOf(stored(other, [upsertRecord(other, 'order', 'x', {}), declared], 1)).changes))
      expect(await h.rows(ds)).toEqual({
        eventTypes: [],
        objectTypes: [],
        objects: [],
        objectChanges: [],
        events: [],
        eventObjects: [],
        objectRelationships: [],
        declaredTypes: [],
        declaredAttributes: [],
      })
      expect(await h.rows(other).then((r) => [r.objects.length, r.declaredAttributes])).toEqual([1, [['event', 'e', 'a', 'time', 2]]])
    })

    it('drops every row and checkpoint on reset', async () => {
      const { b1 } = batches()
      const { changes, to } = changesOf([...b1, ...stored(ds, [typesRecord(ds, { object_types: [{ name: 'o', attributes: [] }] })], 12)])
      await store.apply(batchOf('p', null, to, changes))
      await store.reset()
      expect(await store.checkpoint('p.events')).toBeNull()
      expect(await h.rows(ds)).toEqual({
        eventTypes: [],
        objectTypes: [],
        objects: [],
        objectChanges: [],
        events: [],
        eventObjects: [],
        objectRelationships: [],
        declaredTypes: [],
        declaredAttributes: [],
      })
    })

    it('applies a ChangeSet of thousands of rows per read model completely (bulk writes, unordered)', async () => {
      const n = 2500
      const records = stored(
        ds,
        Array.from({ length: n }, (_, i) =>
          eventRecord(
            ds,
            'Ship',
            [
              { type: 'order', id: `o${String(i)}` },
              { type: 'item', id: `i${String(i)}`, properties: { i } },
            ],
            { timestamp: T1 },
          ),
        ),
        1,
      )
      const { changes, to } = changesOf(records)
      await store.apply(batchOf('p', null, to, changes))
      expect(await h.rows(ds).then((r) => r.events)).toHaveLength(n)
      expect(await h.rows(ds).then((r) => r.eventObjects)).toHaveLength(2 * n)
      expect(await h.rows(ds).then((r) => r.objects)).toHaveLength(2 * n)
      expect(await h.rows(ds).then((r) => r.objectChanges)).toHaveLength(n)
      expect((await h.rows(ds).then((r) => r.objectTypes)).map((t) => [t.name, t.count])).toEqual([
        ['item', n],
        ['order', n],
      ])
      expect(await store.checkpoint('p.events')).toBe(n)
    })

    it('lists each projection with its checkpoint and its stop, and clears a stop', async () => {
      const { b1 } = batches()
      const name = `p-${ds}`
      const stop = { projection: `${name}-stopped`, position: 11, stream: `dataset-${ds}`, cause: 'poisoned', attempts: 5, stopped_at: T2 }
      const { changes, to } = changesOf(b1)
      await store.apply(batchOf(name, null, to, changes))
      await store.recordStop(stop)
      const mine = (await store.projections()).filter((p) => p.projection.startsWith(name))
      expect(mine.map((p) => [p.projection, p.position, p.version, p.stopped])).toEqual([
        [`${name}-stopped`, null, null, stop],
        [`${name}.audit_chain`, to, 1, null],
        [`${name}.declared_types`, to, 1, null],
        [`${name}.directly_follows`, to, 2, null],
        [`${name}.event_types`, to, 1, null],
        [`${name}.events`, to, 1, null],
        [`${name}.object_relationships`, to, 1, null],
        [`${name}.object_types`, to, 1, null],
        [`${name}.objects`, to, 1, null],
      ])
      expect(mine[2]?.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      await store.clearStop(stop.projection)
      expect((await store.projections()).filter((p) => p.projection.startsWith(name)).map((p) => p.projection)).toEqual([
        `${name}.audit_chain`,
        `${name}.declared_types`,
        `${name}.directly_follows`,
        `${name}.event_types`,
        `${name}.events`,
        `${name}.object_relationships`,
        `${name}.object_types`,
        `${name}.objects`,
      ])
    })

    it('clears one projection alone: its rows and the checkpoints named, while the others and the objects identities stay', async () => {
      const { b1, b2 } = batches()
      const one = changesOf(b1)
      await store.apply(batchOf('p', null, one.to, one.changes))
      const before = await h.rows(ds)
      await store.clearProjection('objects', ['p.objects'])
      expect(await store.checkpoint('p.objects')).toBeNull()
      expect(await store.checkpoint('p.events')).toBe(one.to)
      const cleared = await h.rows(ds)
      expect(cleared.objectChanges).toEqual([])
      expect({ ...cleared, objects: [], objectChanges: [] }).toEqual({ ...before, objects: [], objectChanges: [] })
      // Replaying the objects projection alone makes its rows again, equal to what they were.
      const objectsOnly = (expected: number | null, to: number, records: typeof one.changes) => {
        const batch = batchOf('p', expected, to, records)
        return { ...batch, slices: { objects: batch.slices.objects } }
      }
      await store.apply(objectsOnly(null, one.to, one.changes))
      expect(await h.rows(ds)).toEqual(before)
      // And the projections go on together from there.
      const two = changesOf(b2)
      await store.apply(batchOf('p', one.to, two.to, two.changes))
      const counts = await h.rows(ds)
      await store.clearProjection('object_types', ['p.object_types'])
      const types = batchOf('p', null, two.to, [...one.changes, ...two.changes])
      await store.apply({ ...types, slices: { object_types: types.slices.object_types } })
      expect(await h.rows(ds)).toEqual(counts)
    })

    it('drops stops on reset', async () => {
      await store.recordStop({ projection: `p-${ds}`, position: null, stream: null, cause: 'unreadable', attempts: 1, stopped_at: T1 })
      await store.reset()
      expect((await store.projections()).filter((p) => p.projection === `p-${ds}`)).toEqual([])
    })
  })
}
