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
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/sqlite-read-model-query.js'
import { EXACT_MAX } from '../../src/core/duration-stats.js'
import { Projector } from '../../src/projector/runner.js'
import type { ObjectTypeMap } from '../../src/schemas/process.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { dfRecords, expectMapWithin, generateDfLog, type ReferenceEvent, referenceMap, shuffled } from '../helpers/process-map-reference.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const ORDERS = 30
const EVENTS = 300
const iso = (ms: number) => new Date(ms).toISOString()

/** Appends `events` in runs of 1 to 20 (sizes from `random`), the projector catching up after each run. */
async function appendInRuns(fx: SqliteFixture, projector: Projector, ds: string, events: readonly ReferenceEvent[], random: () => number): Promise<void> {
  for (let i = 0; i < events.length; ) {
    const run = events.slice(i, i + 1 + Math.floor(random() * 20))
    i += run.length
    await fx.log.append(ds, dfRecords(ds, run), [])
    await projector.catchUp()
  }
}

describe('directly-follows read model: one map whatever the arrival order', () => {
  let fx: SqliteFixture
  let query: SqliteReadModelQuery
  let projector: Projector
  beforeAll(() => {
    // The log's fsync is skipped: durability is not what this test is about, and 30 orders append 7,000 times.
    fx = openSqliteFixture('ocelog-df-property-', { fdatasync: (_fd, callback) => callback(null) })
    query = new SqliteReadModelQuery(fx.rmDb)
    projector = new Projector(fx.log, fx.store)
  })
  afterAll(async () => {
    await fx.log.close()
    fx.close()
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
          const open = await query.processMap(ds, { ...(w.from === undefined ? {} : { from: iso(w.from) }), ...(w.to === undefined ? {} : { to: iso(w.to) }) })
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
})
