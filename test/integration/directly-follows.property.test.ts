/**
 * The directly-follows read model gives one process map whatever the order its events arrive in
 * (docs/process-map.md#definitions). A seeded random log (several object types, 1 to 5 objects
 * per event, some `end_timestamp`s, one activity far more frequent than the others so that some
 * edges hold more than EXACT_MAX durations and their medians are sketched) is appended to the real
 * SQLite log in many random orders, in appends of 1 to 20 events with the real Projector catching
 * up after each, so that late events land in later batches and go between stored steps. The
 * all-time map and a window's map must be the same for every order, and equal to the map computed
 * from the definitions (test/helpers/process-map-reference.ts). Times are distinct, so that
 * positions, which differ between orders, never break a tie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/sqlite-read-model-query.js'
import { EXACT_MAX } from '../../src/core/duration-stats.js'
import { Projector } from '../../src/projector/runner.js'
import type { ObjectTypeMap } from '../../src/schemas/process.js'
import { eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { expectMapWithin, type ReferenceEvent, referenceMap } from '../helpers/process-map-reference.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const ORDERS = 30
const EVENTS = 300
const START = Date.UTC(2025, 2, 1)

const OBJECTS: Record<string, number> = { order: 8, item: 14, package: 5 }
/** `scan` about half the time: its self-loop passes EXACT_MAX occurrences on some types. */
const ACTIVITIES = ['scan', 'scan', 'scan', 'scan', 'create', 'pick', 'pack', 'ship', 'pay']

/** A seeded log: distinct times with gaps of 1 ms to 20 min, 1 to 5 distinct objects per event, 30% with an end time (some before the next event, some after). */
function generateLog(seed: number, count: number): ReferenceEvent[] {
  const random = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T
  const pool = Object.entries(OBJECTS).flatMap(([type, n]) => Array.from({ length: n }, (_, i) => ({ id: `${type}-${String(i)}`, type })))
  const events: ReferenceEvent[] = []
  let t = START
  for (let i = 0; i < count; i += 1) {
    t += 1 + Math.floor(random() ** 3 * 1_200_000)
    const size = 1 + Math.floor(random() * 5)
    const objects = new Map<string, { id: string; type: string }>()
    while (objects.size < size) {
      const o = pick(pool)
      objects.set(o.id, o)
    }
    events.push({
      id: `e${String(i)}`,
      activity: pick(ACTIVITIES),
      t,
      order: i,
      te: random() < 0.3 ? t + Math.floor(random() * 600_000) : null,
      objects: [...objects.values()],
    })
  }
  return events
}

function shuffle<T>(random: () => number, xs: readonly T[]): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j] as T, a[i] as T]
  }
  return a
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Appends `events` in runs of 1 to 20 (sizes from `random`), the projector catching up after each run. */
async function appendInRuns(fx: SqliteFixture, projector: Projector, ds: string, events: readonly ReferenceEvent[], random: () => number): Promise<void> {
  for (let i = 0; i < events.length; ) {
    const run = events.slice(i, i + 1 + Math.floor(random() * 20))
    i += run.length
    const records = run.map((e) =>
      eventRecord(
        ds,
        e.activity,
        e.objects.map((o) => ({ type: o.type, id: o.id })),
        { timestamp: iso(e.t), ...(e.te === null ? {} : { endTimestamp: iso(e.te) }) },
      ),
    )
    await fx.log.append(ds, records, [])
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
    const events = generateLog(26, EVENTS)
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
    let outOfOrderRuns = 0
    for (let k = 0; k < ORDERS; k += 1) {
      const ds = freshDatasetId()
      // Order 0 is time order; the others are random permutations.
      const order = k === 0 ? events : shuffle(random, events)
      outOfOrderRuns += order.filter((e, i) => i > 0 && e.t < (order[i - 1] as ReferenceEvent).t).length
      await appendInRuns(fx, projector, ds, order, random)
      const all = await query.processMap(ds, {})
      const win = await query.processMap(ds, { from: iso(window.from), to: iso(window.to) })
      expect(win.median_relative_error).toBe(0)
      expectMapWithin(win.object_types, expectedWindow, 0)
      expectMapWithin(all.object_types, expectedAll, all.median_relative_error)
      if (first === undefined) first = { all: all.object_types, window: win.object_types, error: all.median_relative_error }
      else expect({ all: all.object_types, window: win.object_types, error: all.median_relative_error }).toEqual(first)
    }
    expect(first?.error).toBe(0.01)
    expect(outOfOrderRuns).toBeGreaterThan(ORDERS * 50)
  }, 300_000)
})
