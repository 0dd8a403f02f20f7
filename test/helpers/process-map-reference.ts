/**
 * The process map computed from its definitions (docs/process-map.md#definitions) in plain
 * TypeScript, independent of the read models: each object's events sorted by (time, order), the
 * activities, edges, start and end activities and their statistics over every (event, object)
 * pair, medians exact. And the comparison of a map with it, with the sketched medians' bound.
 */
import { expect } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import type { MapActivity, MapEdge, ObjectTypeMap, Stats } from '../../src/schemas/process.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { eventRecord } from '../contract/fixtures.js'
import { statsOfDurations } from './duration-stats-reference.js'

/** One event as the reference reads it: times in ms since the epoch; `order` breaks ties of `t` (a log position, a file index). */
export interface ReferenceEvent {
  id: string
  activity: string
  t: number
  order: number
  /** `end_timestamp` in ms, or null. */
  te: number | null
  /** Its distinct objects. */
  objects: readonly { id: string; type: string }[]
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The map of every object type with an event in the window, sorted as the answer is.
 * @param window `from` (inclusive) and `to` (exclusive) in ms; the window filters events first.
 */
export function referenceMap(events: readonly ReferenceEvent[], window: { from?: number; to?: number } = {}): ObjectTypeMap[] {
  const inWindow = events.filter((e) => (window.from === undefined || e.t >= window.from) && (window.to === undefined || e.t < window.to))
  const traces = new Map<string, { type: string; events: ReferenceEvent[] }>()
  for (const e of inWindow)
    for (const o of e.objects) {
      const key = `${o.type}\u0000${o.id}`
      const trace = traces.get(key) ?? { type: o.type, events: [] }
      trace.events.push(e)
      traces.set(key, trace)
    }
  interface Acc {
    objects: number
    activities: Map<string, { events: Map<string, ReferenceEvent>; objects: Set<string>; total: number }>
    edges: Map<string, { source: string; target: string; objects: Set<string>; couples: Set<string>; elapsed: number[]; waiting: number[] }>
    start: Map<string, number>
    end: Map<string, number>
  }
  const maps = new Map<string, Acc>()
  for (const [object, { type, events: trace }] of traces) {
    let m = maps.get(type)
    if (m === undefined) {
      m = { objects: 0, activities: new Map(), edges: new Map(), start: new Map(), end: new Map() }
      maps.set(type, m)
    }
    trace.sort((a, b) => a.t - b.t || a.order - b.order)
    m.objects += 1
    trace.forEach((e, i) => {
      const a = m.activities.get(e.activity) ?? { events: new Map(), objects: new Set(), total: 0 }
      a.events.set(e.id, e)
      a.objects.add(object)
      a.total += 1
      m.activities.set(e.activity, a)
      const n = trace[i + 1]
      if (n === undefined) return
      const key = `${e.activity}\u0000${n.activity}`
      const edge = m.edges.get(key) ?? { source: e.activity, target: n.activity, objects: new Set(), couples: new Set(), elapsed: [], waiting: [] }
      edge.objects.add(object)
      edge.couples.add(`${e.id}\u0000${n.id}`)
      edge.elapsed.push(n.t - e.t)
      if (e.te !== null) edge.waiting.push(Math.max(0, n.t - e.te))
      m.edges.set(key, edge)
    })
    const first = trace[0]
    const last = trace[trace.length - 1]
    if (first !== undefined) m.start.set(first.activity, (m.start.get(first.activity) ?? 0) + 1)
    if (last !== undefined) m.end.set(last.activity, (m.end.get(last.activity) ?? 0) + 1)
  }
  const byActivity = (a: { activity: string }, b: { activity: string }) => compareText(a.activity, b.activity)
  return [...maps]
    .sort(([a], [b]) => compareText(a, b))
    .map(([type, m]) => ({
      object_type: type,
      objects: m.objects,
      activities: [...m.activities]
        .map(
          ([activity, a]): MapActivity => ({
            activity,
            events: a.events.size,
            objects: a.objects.size,
            total: a.total,
            run_time: statsOfDurations([...a.events.values()].flatMap((e) => (e.te === null ? [] : [e.te - e.t]))),
          }),
        )
        .sort(byActivity),
      edges: [...m.edges.values()]
        .map(
          (e): MapEdge => ({
            source: e.source,
            target: e.target,
            total: e.elapsed.length,
            objects: e.objects.size,
            event_couples: e.couples.size,
            elapsed: statsOfDurations(e.elapsed) as Stats,
            waiting: statsOfDurations(e.waiting),
          }),
        )
        .sort((a, b) => compareText(a.source, b.source) || compareText(a.target, b.target)),
      start_activities: [...m.start].map(([activity, objects]) => ({ activity, objects })).sort(byActivity),
      end_activities: [...m.end].map(([activity, objects]) => ({ activity, objects })).sort(byActivity),
    }))
}

/** Every Stats of a map, with where it is (for messages), in answer order. */
function statsIn(maps: readonly ObjectTypeMap[]): { where: string; stats: Stats }[] {
  const out: { where: string; stats: Stats }[] = []
  for (const m of maps) {
    for (const a of m.activities) if (a.run_time !== null) out.push({ where: `${m.object_type} ${a.activity} run_time`, stats: a.run_time })
    for (const e of m.edges) {
      out.push({ where: `${m.object_type} ${e.source}→${e.target} elapsed`, stats: e.elapsed })
      if (e.waiting !== null) out.push({ where: `${m.object_type} ${e.source}→${e.target} waiting`, stats: e.waiting })
    }
  }
  return out
}

/**
 * Asserts the map `actual` equals `expected` (referenceMap): every count, sum, min, max and mean
 * exactly; each median exactly when `medianRelativeError` is 0, else within it relative to the
 * exact median plus 0.001 s (the answer's rounding to the ms). `median_relative_error` must be 0
 * when every median compared is exact.
 * @returns how many medians differed from the exact ones, and the largest relative difference.
 */
export function expectMapWithin(
  actual: readonly ObjectTypeMap[],
  expected: readonly ObjectTypeMap[],
  medianRelativeError: number,
): { inexact: number; worst: number } {
  const copy = structuredClone(actual) as ObjectTypeMap[]
  const mine = statsIn(copy)
  const theirs = statsIn(expected)
  let inexact = 0
  let worst = 0
  if (mine.length === theirs.length) {
    mine.forEach(({ where, stats }, i) => {
      const want = theirs[i]
      if (want === undefined || want.where !== where) return
      if (stats.median !== want.stats.median) {
        inexact += 1
        const relative = Math.abs(stats.median - want.stats.median) / want.stats.median
        worst = Math.max(worst, relative)
        expect(Math.abs(stats.median - want.stats.median), `${where} median ${String(stats.median)} against ${String(want.stats.median)}`).toBeLessThanOrEqual(
          medianRelativeError * want.stats.median + 0.001,
        )
        stats.median = want.stats.median
      }
    })
  }
  expect(copy).toEqual(expected)
  if (medianRelativeError === 0) expect(inexact).toBe(0)
  return { inexact, worst }
}

const START = Date.UTC(2025, 2, 1)

const OBJECTS: Record<string, number> = { order: 8, item: 14, package: 5 }
/** `scan` about half the time: its self-loop passes EXACT_MAX occurrences on some types. */
const ACTIVITIES = ['scan', 'scan', 'scan', 'scan', 'create', 'pick', 'pack', 'ship', 'pay']

/**
 * A seeded log for the directly-follows tests: distinct times with gaps of 1 ms to 20 min, 1 to 5
 * distinct objects per event, 30% with an end time (some before the next event, some after).
 */
export function generateDfLog(seed: number, count: number): ReferenceEvent[] {
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

/** `xs` in an order drawn from `random` (Fisher–Yates). */
export function shuffled<T>(random: () => number, xs: readonly T[]): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j] as T, a[i] as T]
  }
  return a
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The EventRecorded records of `events` for dataset `ds`, in the order given. Every fifth event
 * (by `order`) links its first object twice, the second time with a qualifier: one (event, object)
 * pair all the same.
 */
export function dfRecords(ds: string, events: readonly ReferenceEvent[]): NewRecord[] {
  return events.map((e) => {
    const objects = e.objects.map((o) => ({ type: o.type, id: o.id }))
    const again = e.order % 5 === 0 && objects[0] !== undefined ? [{ ...objects[0], qualifier: 'again' }] : []
    return eventRecord(ds, e.activity, [...objects, ...again], { timestamp: iso(e.t), ...(e.te === null ? {} : { endTimestamp: iso(e.te) }) })
  })
}
