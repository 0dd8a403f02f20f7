/**
 * What the ReadModelQuery contract does not reach on PostgreSQL
 * (docs/read-models.md#the-read-models-on-postgresql), on the run's real server
 * (test/helpers/postgres-global-setup.ts), with records appended to the real PostgreSQL log and
 * projected by the real Projector:
 * - performance read in chunks that split events answers as in one chunk;
 * - objects page in byte order on a database whose own collation is not byte order (ICU);
 * - consistentRead sees one snapshot while the projector writes, and other calls meanwhile see the writes.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { postgresPerformance } from '../../src/adapters/postgres/postgres-analysis-query.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { sqlReader } from '../../src/adapters/postgres/postgres-reads.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { Projector } from '../../src/projector/runner.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { eventRecord, freshDatasetId, type ObjectRef } from '../contract/fixtures.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
const BASE = Date.parse('2024-05-01T10:00:00.000Z')
const at = (minutes: number): string => new Date(BASE + minutes * 60_000).toISOString()

/** A log, a store and a query on one database. */
interface Engine {
  url: string
  pool: pg.Pool
  log: PostgresEventLog
  query: PostgresReadModelQuery
  /** Appends `records` (one append each) and catches the read models up. */
  load(dataset: string, records: NewRecord[]): Promise<void>
}

async function engine(url: string): Promise<Engine> {
  const pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  const log = new PostgresEventLog(pool, { pollMs: 50 })
  const store = new PostgresReadModelStore(pool)
  return {
    url,
    pool,
    log,
    query: new PostgresReadModelQuery(pool),
    async load(dataset, records) {
      for (const r of records) await log.append(dataset, [r], [])
      await new Projector(log, store).catchUp()
    },
  }
}

const engines: Engine[] = []

beforeAll(async () => {
  if (admin === null) return
  engines.push(await engine(await freshPostgresDatabase(admin, 'rmq')))
  // ICU's English order ('a' < 'B' < 'b'), not byte order ('B' < 'a' < 'b').
  engines.push(await engine(await freshPostgresDatabase(admin, 'rmq_icu', { with: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'" })))
}, 60_000)

afterAll(async () => {
  for (const e of engines.splice(0)) {
    await e.log.close()
    await e.pool.end()
    if (admin !== null) await dropPostgresDatabase(admin, e.url)
  }
})

const order = (id: string): ObjectRef => ({ type: 'order', id })
const item = (id: string): ObjectRef => ({ type: 'item', id })

describe.skipIf(admin === null)('PostgreSQL ReadModelQuery beyond the contract', () => {
  it('reads performance in chunks of whole events, with the same answer whatever the chunk size', async () => {
    const e = engines[0] as Engine
    const ds = freshDatasetId()
    // Three orders of two items each; events of 1 to 3 objects, two of them at the same time.
    const records: NewRecord[] = []
    for (const [k, o] of ['o1', 'o2', 'o3'].entries()) {
      const items = [item(`${o}-i1`), item(`${o}-i2`)]
      records.push(eventRecord(ds, 'Create', [order(o), ...items], { timestamp: at(k) }))
      records.push(eventRecord(ds, 'Pick', [items[0] as ObjectRef], { timestamp: at(10 + k), endTimestamp: at(12 + k) }))
      records.push(eventRecord(ds, 'Pick', [items[1] as ObjectRef], { timestamp: at(10 + k) }))
      records.push(eventRecord(ds, 'Ship', [order(o), ...items], { timestamp: at(30 + 2 * k) }))
    }
    await e.load(ds, records)
    const sql = sqlReader(() => e.pool)
    const filter = { slowest: 2, from: at(5) }
    const whole = await postgresPerformance(sql, ds, filter)
    expect(whole.map((a) => [a.activity, a.events, a.events_with_predecessors])).toEqual([
      ['Pick', 6, 6],
      ['Ship', 3, 3],
    ])
    const ship = whole.find((a) => a.activity === 'Ship')
    // o_k's Ship at 30 + 2k min waits for its last input, item 1's Pick ended at 12 + k: sojourn 18 + k min.
    expect(ship?.slowest.map((s) => [s.timestamp, s.sojourn])).toEqual([
      [at(34), 20 * 60],
      [at(32), 19 * 60],
    ])
    expect(ship?.slowest.every((s) => s.event_id !== '')).toBe(true)
    for (const chunk of [1, 2, 3, 4, 5]) expect(await postgresPerformance(sql, ds, filter, chunk)).toEqual(whole)
  })

  it('pages objects in byte order on a database whose own collation is not byte order', async () => {
    const e = engines[1] as Engine
    const ds = freshDatasetId()
    await e.load(ds, [eventRecord(ds, 'Create', [order('b'), order('a'), order('B'), item('a')], { timestamp: at(0) })])
    const first = await e.query.objectHistories(ds, { limit: 2 })
    expect(first.objects.map((o) => [o.type, o.id])).toEqual([
      ['item', 'a'],
      ['order', 'B'],
    ])
    expect(first.next).toEqual({ type: 'order', id: 'B' })
    const second = await e.query.objectHistories(ds, { limit: 2, after: { type: 'order', id: 'B' } })
    expect(second.objects.map((o) => [o.type, o.id])).toEqual([
      ['order', 'a'],
      ['order', 'b'],
    ])
    expect(second.next).toBeNull()
    expect((await e.query.objectsWithIds(ds, ['a', 'b', 'B'])).map((o) => `${o.type}/${o.id}`)).toEqual(['item/a', 'order/B', 'order/a', 'order/b'])
  })

  it('answers one snapshot inside consistentRead while the projector writes, and the writes outside it', async () => {
    const e = engines[0] as Engine
    const ds = freshDatasetId()
    await e.load(ds, [eventRecord(ds, 'Create', [order('o1')], { timestamp: at(0) })])
    let started = (): void => {}
    const inside = new Promise<void>((resolve) => {
      started = resolve
    })
    // Outside the consistent read: waits for its first read, then writes and reads through the pool.
    const outside = (async () => {
      await inside
      await e.load(ds, [eventRecord(ds, 'Pay', [order('o1')], { timestamp: at(1) })])
      return [await e.query.summary(ds), await e.query.asOf()] as const
    })()
    const seen = await e.query.consistentRead(async () => {
      const before = [await e.query.summary(ds), await e.query.asOf()] as const
      started()
      const [summary, asOf] = await outside
      expect([summary.events, asOf]).toEqual([2, before[1] + 1])
      // Nested, and after the write: the same snapshot.
      const after = await e.query.consistentRead(async () => [await e.query.summary(ds), await e.query.asOf()] as const)
      return { before, after }
    })
    expect(seen.before[0].events).toBe(1)
    expect(seen.after).toEqual(seen.before)
    expect((await e.query.summary(ds)).events).toBe(2)
  })
})
