import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { batchOf } from '../contract/fixtures.js'
import { datasetHash, Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { ensureQueryIndexes, openReadModelsDatabase, PROJECTOR_INDEXES, readModelIndexes } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { Ingest } from '../../src/write/ingest.js'
import { UnreadableRecordError } from '../../src/core/record-decoder.js'
import type { RecordContext } from '../../src/core/records.js'
import { CheckpointConflictError } from '../../src/ports/read-model-store.js'
import type { TailOptions } from '../../src/ports/event-log.js'
import { overriding } from '../helpers/override.js'
import { sqliteRows } from '../helpers/read-model-rows.js'

let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
let log: SqliteEventLog
let store: SqliteReadModelStore
let ingest: Ingest

const ctx = (datasetId: string): RecordContext => ({ datasetId, keyId: 'k', requestId: 'r', receivedAt: new Date().toISOString() })

async function seed(datasetId = 'ds1'): Promise<void> {
  await ingest.upsertObjects([{ type: 'customer', id: 'c1', properties: { tier: 'silver', city: 'Oslo' } }], ctx(datasetId))
  await ingest.recordEvents(
    [
      {
        event: 'Create Order',
        timestamp: '2024-01-01T10:00:00Z',
        objects: [
          { type: 'order', id: 'o1', qualifier: 'target', properties: { amount: 10 } },
          { type: 'customer', id: 'c1', qualifier: 'payer' },
        ],
      },
      {
        event: 'Pay Order',
        timestamp: '2024-01-02T10:00:00Z',
        end_timestamp: '2024-01-02T10:05:00Z',
        objects: [
          { type: 'order', id: 'o1', properties: { amount: 12, paid: true } },
          { type: 'customer', id: 'c1' },
        ],
      },
    ],
    ctx(datasetId),
  )
  await ingest.upsertObjects([{ type: 'customer', id: 'c1', properties: { tier: 'gold' } }], ctx(datasetId))
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-projector-'))
  db = openDatabase(dir)
  rmDb = openReadModelsDatabase(dir).db
  log = new SqliteEventLog(db)
  store = new SqliteReadModelStore(rmDb)
  ingest = new Ingest(log)
})
afterEach(() => {
  db.close()
  rmDb.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('Projector on SQLite', () => {
  it('keeps the read models of README § Read models', async () => {
    await seed()
    expect(await new Projector(log, store).catchUp()).toBe(4)
    const s = await sqliteRows(rmDb)('ds1')
    expect(s.eventTypes.map((t) => [t.name, t.count, t.source])).toEqual([
      ['Create Order', 1, 'public_api'],
      ['Pay Order', 1, 'public_api'],
    ])
    expect(s.objectTypes.map((t) => [t.name, t.count, t.source])).toEqual([
      ['customer', 1, 'public_api'],
      ['order', 1, 'public_api'],
    ])
    expect(s.objects.map((o) => [o.type, o.external_id, o.properties])).toEqual([
      ['customer', 'c1', { tier: 'gold', city: 'Oslo' }],
      ['order', 'o1', { amount: 12, paid: true }],
    ])
    expect(s.events.map((e) => [e.event_type, e.timestamp, e.end_timestamp, e.objects_count])).toEqual([
      ['Create Order', '2024-01-01T10:00:00.000Z', null, 2],
      ['Pay Order', '2024-01-02T10:00:00.000Z', '2024-01-02T10:05:00.000Z', 2],
    ])
    expect(s.eventObjects).toHaveLength(4)
    expect(
      s.eventObjects
        .filter((l) => l.qualifier !== null)
        .map((l) => [l.external_id, l.qualifier])
        .sort(),
    ).toEqual([
      ['c1', 'payer'],
      ['o1', 'target'],
    ])
    expect(s.objectChanges.map((c) => c.attributes)).toEqual(expect.arrayContaining([{ tier: 'gold' }, { amount: 12, paid: true }]))
  })

  it('changes nothing when the same records are applied twice', async () => {
    await seed()
    const records = await log.readAll(null, 100)
    const last = records[records.length - 1]?.position ?? 0
    await store.apply(batchOf('p', null, last, records))
    const once = await sqliteRows(rmDb)('ds1')
    await store.apply(batchOf('p', last, last, records))
    expect(await sqliteRows(rmDb)('ds1')).toEqual(once)
  })

  it('resumes from its checkpoint after a restart', async () => {
    await seed()
    await new Projector(log, store).catchUp()
    await ingest.recordEvents([{ event: 'Ship Order', timestamp: '2024-01-03T10:00:00Z', objects: [{ type: 'order', id: 'o1' }] }], ctx('ds1'))
    const restarted = new Projector(log, store)
    expect(await restarted.catchUp()).toBe(1)
    expect((await sqliteRows(rmDb)('ds1')).eventTypes.map((t) => t.name)).toEqual(['Create Order', 'Pay Order', 'Ship Order'])
  })

  it('rebuilds from the log to the same read models', async () => {
    await seed()
    await seed('ds2')
    const p = new Projector(log, store, { maxBatch: 2 })
    await p.catchUp()
    const before = [await sqliteRows(rmDb)('ds1'), await sqliteRows(rmDb)('ds2')]
    expect(await new Projector(log, store).rebuild()).toBe(8)
    expect([await sqliteRows(rmDb)('ds1'), await sqliteRows(rmDb)('ds2')]).toEqual(before)
  })

  it('replays a rebuild without the query indexes and makes them at the head of the log, by catchUp and by run', async () => {
    const queryIndexes = () => readModelIndexes(rmDb).filter((n) => !PROJECTOR_INDEXES.includes(n))
    const all = ['rm_events_by_time', 'rm_events_by_type', 'rm_object_relationships_by_target']
    expect(queryIndexes()).toEqual([]) // a new file
    await seed()
    const seen: string[][] = []
    const watching = overriding(store, 'apply', async (...args) => {
      seen.push(queryIndexes())
      return store.apply(...args)
    })
    await new Projector(log, watching, { maxBatch: 1 }).catchUp()
    expect(seen).toEqual([[], [], [], []]) // no index while replaying
    expect(queryIndexes()).toEqual(all)
    expect(ensureQueryIndexes(rmDb)).toEqual([]) // nothing left to make
    const before = await sqliteRows(rmDb)('ds1')
    await store.reset()
    expect(queryIndexes()).toEqual([])
    const abort = new AbortController()
    const p = new Projector(log, store)
    const running = p.run(abort.signal)
    const deadline = Date.now() + 5000
    while (queryIndexes().length < all.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    abort.abort()
    await running
    expect(queryIndexes()).toEqual(all)
    expect(await sqliteRows(rmDb)('ds1')).toEqual(before)
  })

  it('asks the log for fewer records when they are wide, by catchUp and by run', async () => {
    const wide = (n: number) => ({
      event: 'Pick',
      timestamp: `2024-01-01T10:00:${String(n).padStart(2, '0')}Z`,
      objects: Array.from({ length: 50 }, (_, i) => ({ type: 'item', id: `i${String(i)}` })),
    })
    const narrow = (n: number) => ({
      event: 'Pay',
      timestamp: `2024-01-02T10:00:${String(n).padStart(2, '0')}Z`,
      objects: [{ type: 'order', id: `o${String(n)}` }],
    })
    await ingest.recordEvents(
      Array.from({ length: 20 }, (_, n) => wide(n)),
      ctx('ds1'),
    )
    await ingest.recordEvents(
      Array.from({ length: 40 }, (_, n) => narrow(n)),
      ctx('ds1'),
    )
    const asked: number[] = []
    const counting = overriding(log, 'readAll', (after: number | null, maxCount: number) => {
      asked.push(maxCount)
      return log.readAll(after, maxCount)
    })
    // 204 units a read: 12 records first (16 units each assumed), then 4 while the last read was of
    // events of 51 units (so the first narrow read too), then up to 30 of 2 units; an empty read ends it.
    expect(await new Projector(counting, store, { maxBatch: 30, maxBatchCost: 204 }).catchUp()).toBe(60)
    expect(asked).toEqual([12, 4, 4, 4, 30, 30, 30])
    await store.reset()
    asked.length = 0
    const sizes: number[] = []
    const tailing = overriding(log, 'tail', (after: number | null, options: TailOptions) => {
      const reads = log.tail(after, options)[Symbol.asyncIterator]()
      return {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            asked.push(options.maxBatch)
            const step = await reads.next()
            if (step.done !== true) sizes.push(step.value.length)
            return step
          },
          return: async () => (await reads.return?.()) ?? { done: true as const, value: undefined },
        }),
      }
    })
    const abort = new AbortController()
    const p = new Projector(tailing, store, { maxBatch: 30, maxBatchCost: 204, settleMs: 0 })
    const running = p.run(abort.signal)
    const deadline = Date.now() + 5000
    while (p.position !== 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    abort.abort()
    await running
    expect(p.position).toBe(60)
    expect(sizes).toEqual([12, 4, 4, 4, 30, 6])
    expect(asked.slice(0, 6)).toEqual([12, 4, 4, 4, 30, 30])
  })

  it('leaves the query indexes to a later call when another connection holds the write lock', async () => {
    await store.reset()
    const other = new Database(join(dir, 'read-models.db'))
    other.prepare('BEGIN IMMEDIATE').run()
    rmDb.pragma('busy_timeout = 0')
    await store.atHead()
    other.prepare('COMMIT').run()
    other.close()
    expect(readModelIndexes(rmDb)).toEqual(PROJECTOR_INDEXES)
    await store.atHead()
    expect(readModelIndexes(rmDb)).toEqual([
      'rm_df_steps_by_edge',
      'rm_df_steps_by_object',
      'rm_events_by_time',
      'rm_events_by_type',
      'rm_object_relationships_by_target',
      'rm_objects_by_type_id',
    ])
  })

  it('refuses to move a checkpoint another projector moved first', async () => {
    await seed()
    const records = await log.readAll(null, 100)
    await store.apply(batchOf('p', null, 2, records.slice(0, 2)))
    await expect(store.apply(batchOf('p', null, 4, records))).rejects.toBeInstanceOf(CheckpointConflictError)
  })

  it('lets two projectors on one file share a checkpoint without double counting', async () => {
    await seed()
    const a = new Projector(log, store)
    const b = new Projector(log, store)
    await a.catchUp()
    await ingest.recordEvents([{ event: 'Create Order', objects: [{ type: 'order', id: 'o2' }] }], ctx('ds1'))
    await b.catchUp()
    await a.catchUp()
    expect((await sqliteRows(rmDb)('ds1').then((r) => r.eventTypes)).find((t) => t.name === 'Create Order')?.count).toBe(2)
  })

  it('splits datasets between shards', async () => {
    await seed('ds1')
    await seed('ds2')
    await seed('ds3')
    const shards = [0, 1].map((index) => new Projector(log, store, { shard: { index, count: 2 } }))
    for (const s of shards) await s.catchUp()
    const expected = [0, 1].map((i) => ['ds1', 'ds2', 'ds3'].filter((d) => datasetHash(d) % 2 === i).length * 4)
    expect(shards.map((s) => s.recordsApplied)).toEqual(expected)
    expect(shards.map((s) => s.name)).toEqual(['read-models-0-of-2', 'read-models-1-of-2'])
    for (const d of ['ds1', 'ds2', 'ds3']) expect((await sqliteRows(rmDb)(d).then((r) => r.events)).length).toBe(2)
  })

  it('follows appends while running and stops when aborted', async () => {
    const p = new Projector(log, store)
    const abort = new AbortController()
    const running = p.run(abort.signal)
    await seed()
    const deadline = Date.now() + 5000
    const head = (await log.readAll(null, 100)).length
    while (p.position !== head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    abort.abort()
    await running
    expect((await sqliteRows(rmDb)('ds1').then((r) => r.events)).length).toBe(2)
    expect(p.position).toBe(4)
  })
})

describe('SQLite log', () => {
  it('refuses to update or delete a record', async () => {
    await seed()
    expect(() => db.prepare("UPDATE records SET data = '{}' WHERE position = 1").run()).toThrow(/records are immutable/)
    expect(() => db.prepare('DELETE FROM records WHERE position = 1').run()).toThrow(/records are immutable/)
  })

  it('fails loudly on a record of a type it cannot read, by name and position, and the projector stops at it', async () => {
    await seed()
    const position = Number(
      db.prepare("INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-ds1', 'ds1', 'OrderShipped', 1, '{}', '')").run()
        .lastInsertRowid,
    )
    await expect(log.readStream('ds1', null, 100)).rejects.toThrow(new RegExp(`record OrderShipped v1 at position ${String(position)} in dataset-ds1`))
    const p = new Projector(log, store, { maxBatch: 4 })
    await expect(p.catchUp()).rejects.toBeInstanceOf(UnreadableRecordError)
    expect(p.position).toBe(4)
    expect(await store.checkpoint('events')).toBe(4)
  })

  it('group-commits concurrent appends and keeps each caller’s order', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ingest.recordEvents(
          [
            { event: `E${String(i)}`, objects: [{ type: 't', id: String(i) }] },
            { event: `F${String(i)}`, objects: [{ type: 't', id: String(i) }] },
          ],
          ctx('ds1'),
        ),
      ),
    )
    const records = await log.readStream('ds1', null, 1000)
    expect(records).toHaveLength(40)
    for (const r of results) {
      const [e, f] = r.accepted
      const pe = records.find((x) => x.type === 'EventRecorded' && x.data.event_id === e?.event_id)?.position ?? 0
      const pf = records.find((x) => x.type === 'EventRecorded' && x.data.event_id === f?.event_id)?.position ?? 0
      expect(pf).toBe(pe + 1)
    }
  })
})
