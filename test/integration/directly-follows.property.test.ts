/**
 * The directly-follows read model gives one process map whatever the order its events arrive in
 * (docs/process-map.md#definitions). A seeded random log (generateDfLog: several object types, 1
 * to 5 objects per event, some `end_timestamp`s, one activity far more frequent than the others so
 * that some edges hold more than EXACT_MAX durations and their medians are sketched) is appended
 * to the real SQLite log in many random orders, in appends of 1 to 20 events with the real Projector catching
 * up after each, so that late events land in later batches and go between stored steps. The
 * all-time map and a window's map must be the same for every order, and equal to the map computed
 * from the definitions (test/helpers/process-map-reference.ts); so must windows open at one end
 * and maps of some object types. Some events link an object twice (two qualifiers). Times are
 * distinct, so that positions, which differ between orders, never break a tie.
 *
 * A second log arrives in phases, each one's events between the earlier phases' (shuffled within
 * the phase): every later phase splits most couples the earlier ones stored, the longest first of
 * all, so that a self-loop edge past EXACT_MAX loses far more than its EXTREMES kept largest and
 * smallest durations. After each phase every count, sum, min and max must be the definitions' of
 * the events arrived so far (docs/process-map.md#medians-of-the-all-time-map).
 *
 * Both relational stores run the suite: SQLite (every order), and PostgreSQL on the run's server
 * (fewer orders: each append there is a round trip to a server), skipped with a printed reason
 * where no server could start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import type { EventLog } from '../../src/ports/event-log.js'
import type { ReadModelQuery } from '../../src/ports/read-model-query.js'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'
import { EXACT_MAX, EXTREMES } from '../../src/core/duration-stats.js'
import { Projector } from '../../src/projector/runner.js'
import type { ObjectTypeMap, Stats } from '../../src/schemas/process.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { dfRecords, expectMapWithin, generateDfLog, type ReferenceEvent, referenceMap, shuffled } from '../helpers/process-map-reference.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { openSqliteFixture } from '../helpers/sqlite.js'

const EVENTS = 300
const iso = (ms: number) => new Date(ms).toISOString()

/** A log and read models on one engine. */
interface DfEngine {
  log: EventLog
  store: ReadModelStore
  query: ReadModelQuery
  close(): Promise<void>
}

/** Appends `events` in runs of 1 to 20 (sizes from `random`), the projector catching up after each run. */
async function appendInRuns(fx: DfEngine, projector: Projector, ds: string, events: readonly ReferenceEvent[], random: () => number): Promise<void> {
  for (let i = 0; i < events.length; ) {
    const run = events.slice(i, i + 1 + Math.floor(random() * 20))
    i += run.length
    await fx.log.append(ds, dfRecords(ds, run), [])
    await projector.catchUp()
  }
}

/**
 * A seeded log dominated by one self-loop (`scan` → `scan` of few objects, far past EXACT_MAX couples):
 * distinct times with gaps of 1 ms to 40 min (heavy-tailed, so the largest elapsed times are few and
 * far apart), 1 or 2 objects per event, 40% with an end time.
 */
function generateLoopLog(seed: number, count: number): ReferenceEvent[] {
  const random = seededRandom(seed)
  const pool = [
    ...Array.from({ length: 3 }, (_, i) => ({ id: `order-${String(i)}`, type: 'order' })),
    ...Array.from({ length: 4 }, (_, i) => ({ id: `item-${String(i)}`, type: 'item' })),
  ]
  const activities = ['scan', 'scan', 'scan', 'scan', 'scan', 'scan', 'scan', 'check', 'pack']
  const events: ReferenceEvent[] = []
  let t = Date.UTC(2025, 5, 1)
  for (let i = 0; i < count; i += 1) {
    t += 1 + Math.floor(random() ** 4 * 2_400_000)
    const first = pool[Math.floor(random() * pool.length)] as { id: string; type: string }
    const second = pool[Math.floor(random() * pool.length)] as { id: string; type: string }
    const objects = random() < 0.3 && second.id !== first.id ? [first, second] : [first]
    const activity = activities[Math.floor(random() * activities.length)] as string
    events.push({ id: `l${String(i)}`, activity, t, order: i, te: random() < 0.4 ? t + Math.floor(random() * 900_000) : null, objects })
  }
  return events
}

/** The elapsed and waiting statistics of every edge of `maps`, by "type source→target kind" (for messages). */
function edgeStats(maps: readonly ObjectTypeMap[]): Map<string, Stats | null> {
  const out = new Map<string, Stats | null>()
  for (const m of maps)
    for (const e of m.edges) {
      out.set(`${m.object_type} ${e.source}→${e.target} elapsed`, e.elapsed)
      out.set(`${m.object_type} ${e.source}→${e.target} waiting`, e.waiting)
    }
  return out
}

/** SQLite files; the log's fsync is skipped: durability is not what this test is about, and 30 orders append 7,000 times. */
async function openSqlite(): Promise<DfEngine> {
  const fx = openSqliteFixture('ocelog-df-property-', { fdatasync: (_fd, callback) => callback(null) })
  return {
    log: fx.log,
    store: fx.store,
    query: new SqliteReadModelQuery(fx.rmDb),
    async close() {
      await fx.log.close()
      fx.close()
    },
  }
}

const admin = postgresAdminUrl()

/** A fresh database on the run's PostgreSQL server, migrated as a process migrates it at start. */
async function openPostgres(): Promise<DfEngine> {
  if (admin === null) throw new Error('no PostgreSQL server')
  const url = await freshPostgresDatabase(admin, 'df_property')
  const pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  const log = new PostgresEventLog(pool, { pollMs: 50 })
  return {
    log,
    store: new PostgresReadModelStore(pool),
    query: new PostgresReadModelQuery(pool),
    async close() {
      await log.close()
      await pool.end()
      await dropPostgresDatabase(admin, url)
    },
  }
}

for (const { engine, open, orders, skip } of [
  { engine: 'SQLite', open: openSqlite, orders: 30, skip: false },
  { engine: 'PostgreSQL', open: openPostgres, orders: 4, skip: admin === null },
]) {
  describe.skipIf(skip)(`directly-follows read model on ${engine}: one map whatever the arrival order`, () => {
    const ORDERS = orders
    let fx: DfEngine
    let query: ReadModelQuery
    let projector: Projector
    beforeAll(async () => {
      fx = await open()
      query = fx.query
      projector = new Projector(fx.log, fx.store)
    })
    afterAll(async () => {
      await fx?.close()
    })

    it(`gives the same all-time and window maps for ${String(ORDERS)} random orders, equal to the definitions`, async () => {
      const events = generateDfLog(26, EVENTS)
      const span = { from: (events[0] as ReferenceEvent).t, to: (events[events.length - 1] as ReferenceEvent).t }
      const third = Math.floor((span.to - span.from) / 3)
      const window = { from: span.from + third, to: span.from + 2 * third }
      const expectedAll = referenceMap(events)
      const expectedWindow = referenceMap(events, window)
      // The log exercises what it should: sketched medians, waiting times, and a window with edges.
      const counts = expectedAll.flatMap((m) => m.edges.map((e) => e.total))
      expect(Math.max(...counts)).toBeGreaterThan(EXACT_MAX)
      expect(expectedAll.some((m) => m.edges.some((e) => e.waiting !== null))).toBe(true)
      expect(expectedWindow.flatMap((m) => m.edges).length).toBeGreaterThan(10)

      const random = seededRandom(2026)
      let first: { all: ObjectTypeMap[]; window: ObjectTypeMap[]; error: number } | undefined
      let arrivedLate = 0
      for (let k = 0; k < ORDERS; k += 1) {
        const ds = freshDatasetId()
        // Order 0 is time order; the others are random permutations.
        const order = k === 0 ? events : shuffled(random, events)
        arrivedLate += order.filter((e, i) => i > 0 && e.t < (order[i - 1] as ReferenceEvent).t).length
        await appendInRuns(fx, projector, ds, order, random)
        const all = await query.processMap(ds, {})
        const win = await query.processMap(ds, { from: iso(window.from), to: iso(window.to) })
        expect(win.median_relative_error).toBe(0)
        expectMapWithin(win.object_types, expectedWindow, 0)
        expectMapWithin(all.object_types, expectedAll, all.median_relative_error)
        if (k % 10 === 0) {
          // Windows open at one end, and object types asked for.
          for (const w of [{ from: window.from }, { to: window.to }]) {
            const open = await query.processMap(ds, {
              ...(w.from === undefined ? {} : { from: iso(w.from) }),
              ...(w.to === undefined ? {} : { to: iso(w.to) }),
            })
            expectMapWithin(open.object_types, referenceMap(events, w), 0)
          }
          const asked = ['item', 'package']
          const some = await query.processMap(ds, { objectTypes: asked })
          expectMapWithin(
            some.object_types,
            expectedAll.filter((m) => asked.includes(m.object_type)),
            some.median_relative_error,
          )
          const someWindow = await query.processMap(ds, { objectTypes: asked, from: iso(window.from), to: iso(window.to) })
          expectMapWithin(
            someWindow.object_types,
            expectedWindow.filter((m) => asked.includes(m.object_type)),
            0,
          )
        }
        if (first === undefined) first = { all: all.object_types, window: win.object_types, error: all.median_relative_error }
        else expect({ all: all.object_types, window: win.object_types, error: all.median_relative_error }).toEqual(first)
      }
      expect(first?.error).toBe(0.01)
      expect(arrivedLate).toBeGreaterThan(ORDERS * 50)
    }, 300_000)

    it('keeps every count, sum, min and max exact when later phases split most stored couples of a sketched self-loop', async () => {
      const events = generateLoopLog(7, 2000)
      // Phase 1: every 8th event; phase 2: those 4 after them; phase 3: the even rest; phase 4: the odd ones.
      const phases = [(i: number) => i % 8 === 0, (i: number) => i % 8 === 4, (i: number) => i % 2 === 0 && i % 4 === 2, (i: number) => i % 2 === 1]
      const loop = (maps: readonly ObjectTypeMap[]) =>
        maps.find((m) => m.object_type === 'order')?.edges.find((e) => e.source === 'scan' && e.target === 'scan')
      const random = seededRandom(5)
      for (let k = 0; k < 3; k += 1) {
        const ds = freshDatasetId()
        const arrived: ReferenceEvent[] = []
        let loopBefore: number | undefined
        for (const [phase, inPhase] of phases.entries()) {
          const now = events.filter((_, i) => inPhase(i))
          await appendInRuns(fx, projector, ds, shuffled(random, now), random)
          arrived.push(...now)
          arrived.sort((a, b) => a.t - b.t)
          const expected = referenceMap(arrived)
          const actual = await query.processMap(ds, {})
          // Min and max of every edge, named, before the whole map.
          const want = edgeStats(expected)
          for (const [where, stats] of edgeStats(actual.object_types)) {
            expect({ where, phase, min: stats?.min, max: stats?.max }).toEqual({ where, phase, min: want.get(where)?.min, max: want.get(where)?.max })
          }
          expectMapWithin(actual.object_types, expected, actual.median_relative_error)
          const edge = loop(expected)
          if (phase === 0) {
            // The first phase alone sketches the self-loop.
            expect(edge?.total).toBeGreaterThan(EXACT_MAX)
            loopBefore = edge?.total
          }
        }
        // Later phases split far more than EXTREMES of the first phase's couples of the self-loop (each split removes one).
        const edge = loop(referenceMap(events))
        expect(edge?.total).toBeGreaterThan((loopBefore ?? 0) + 4 * EXTREMES)
      }
    }, 300_000)
  })
}
