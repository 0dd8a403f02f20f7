/**
 * The process map's aggregate rows, as every ReadModelQuery adapter computes them in its engine,
 * and their assembly into the answer's shape (pure). An adapter's query yields a few rows per
 * object type, activity and edge (never one per event); this module only sorts and nests them.
 */
import type { DfAggregate } from './directly-follows.js'
import { type DurationSummary, MEDIAN_RELATIVE_ERROR, summarize } from './duration-stats.js'
import type { AttributeInfo, MapActivity, MapEdge, ObjectTypeMap, Stats, TypeInfo } from '../schemas/process.js'
import { joinKey } from './keys.js'

/**
 * One aggregate row. `kind` says what it holds (durations in whole milliseconds):
 * - `activity` (`k1` = activity): `c1` events, `c2` objects, `c3` (event, object) pairs, `c4`
 *   objects whose first event it is (start), `c5` objects whose last event it is (end);
 * - `edge` (`k1` → `k2`): `c1` objects, `c2` distinct event couples, then the elapsed times'
 *   statistics: `c3` count (the occurrences), `c4` sum, `c5` min, `c6` max, `c7` median;
 * - `waiting` (`k1` → `k2`), `run` (`k1` = activity): statistics in `c3`..`c7` as for `edge`.
 *
 * An object type's `objects` is the sum of its activities' `c4`: every object in the window has
 * exactly one first event.
 */
export interface MapRow {
  kind: 'activity' | 'edge' | 'waiting' | 'run'
  ot: string
  k1: string
  k2: string
  c1: number
  c2: number
  c3: number
  c4: number
  c5: number
  c6: number
  c7: number | null
}

/** Code-unit order: the same on every machine and locale (and in SQLite's BINARY collation). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Milliseconds to seconds, rounded to the millisecond. */
function seconds(ms: number): number {
  return Math.round(ms) / 1000
}

/** Statistics in seconds from the `c3`..`c7` columns of a row (sum exact; mean and median rounded to the ms). */
export function statsOf(row: Pick<MapRow, 'c3' | 'c4' | 'c5' | 'c6' | 'c7'>): Stats {
  const count = Number(row.c3)
  const sum = Number(row.c4)
  return {
    count,
    mean: seconds(sum / count),
    median: seconds(Number(row.c7 ?? 0)),
    min: seconds(Number(row.c5)),
    max: seconds(Number(row.c6)),
    sum: seconds(sum),
  }
}

/**
 * Nests aggregate rows into the answer: one entry per object type with at least one activity,
 * sorted by name; activities, start and end activities by activity; edges by (source, target).
 */
export function assembleProcessMap(rows: readonly MapRow[]): ObjectTypeMap[] {
  const maps = new Map<string, ObjectTypeMap>()
  const activities = new Map<string, MapActivity>()
  const key = (...parts: string[]) => joinKey(...parts)
  const mapOf = (ot: string): ObjectTypeMap => {
    let m = maps.get(ot)
    if (m === undefined) {
      m = { object_type: ot, objects: 0, activities: [], edges: [], start_activities: [], end_activities: [] }
      maps.set(ot, m)
    }
    return m
  }
  const activityOf = (ot: string, activity: string): MapActivity => {
    let a = activities.get(key(ot, activity))
    if (a === undefined) {
      a = { activity, events: 0, objects: 0, total: 0, run_time: null }
      activities.set(key(ot, activity), a)
      mapOf(ot).activities.push(a)
    }
    return a
  }
  const waiting = new Map<string, Stats>()
  const edges: [string, MapEdge][] = []
  for (const r of rows) {
    switch (r.kind) {
      case 'activity': {
        const a = activityOf(r.ot, r.k1)
        a.events = Number(r.c1)
        a.objects = Number(r.c2)
        a.total = Number(r.c3)
        const m = mapOf(r.ot)
        if (Number(r.c4) > 0) m.start_activities.push({ activity: r.k1, objects: Number(r.c4) })
        if (Number(r.c5) > 0) m.end_activities.push({ activity: r.k1, objects: Number(r.c5) })
        m.objects += Number(r.c4)
        break
      }
      case 'run':
        activityOf(r.ot, r.k1).run_time = statsOf(r)
        break
      case 'edge': {
        const elapsed = statsOf(r)
        edges.push([r.ot, { source: r.k1, target: r.k2, total: elapsed.count, objects: Number(r.c1), event_couples: Number(r.c2), elapsed, waiting: null }])
        break
      }
      case 'waiting':
        waiting.set(key(r.ot, r.k1, r.k2), statsOf(r))
        break
    }
  }
  for (const [ot, e] of edges) {
    e.waiting = waiting.get(key(ot, e.source, e.target)) ?? null
    mapOf(ot).edges.push(e)
  }
  const byActivity = (a: { activity: string }, b: { activity: string }) => compareText(a.activity, b.activity)
  const result = [...maps.values()].filter((m) => m.activities.length > 0).sort((a, b) => compareText(a.object_type, b.object_type))
  for (const m of result) {
    m.activities.sort(byActivity)
    m.start_activities.sort(byActivity)
    m.end_activities.sort(byActivity)
    m.edges.sort((a, b) => compareText(a.source, b.source) || compareText(a.target, b.target))
  }
  return result
}

type AttributeType = AttributeInfo['types'][number]

/** An attribute's value type from SQLite's `json_type` / `json_each.type` or MongoDB's `$type`. */
export function attributeTypeOfJsonType(type: string): AttributeType {
  switch (type) {
    case 'true':
    case 'false':
    case 'bool':
      return 'boolean'
    case 'integer':
    case 'real':
    case 'int':
    case 'long':
    case 'double':
    case 'decimal':
      return 'number'
    case 'text':
    case 'string':
      return 'string'
    case 'array':
      return 'array'
    case 'null':
      return 'null'
    default:
      return 'object'
  }
}

const TYPE_ORDER: readonly AttributeType[] = ['string', 'number', 'boolean', 'object', 'array', 'null']

/** Attribute infos sorted by name, each with its value types in a fixed order. */
export function sortAttributes(names: ReadonlyMap<string, ReadonlySet<AttributeType>> | undefined): AttributeInfo[] {
  if (names === undefined) return []
  return [...names.entries()].sort(([a], [b]) => compareText(a, b)).map(([name, kinds]) => ({ name, types: TYPE_ORDER.filter((t) => kinds.has(t)) }))
}

/** One attribute seen on a type: the type's name (`owner`), the attribute's name and its value's engine type name. */
export interface AttributeTypeRow {
  owner: string
  name: string
  type: string
}

/** Type rows (sorted by name) joined with the attributes seen on them, as the read answers list types. */
export function withAttributes(
  types: readonly Pick<TypeInfo, 'name' | 'count' | 'first_seen_at' | 'last_seen_at'>[],
  attributes: readonly AttributeTypeRow[],
): TypeInfo[] {
  const byOwner = new Map<string, Map<string, Set<AttributeType>>>()
  for (const a of attributes) {
    const names = byOwner.get(a.owner) ?? new Map<string, Set<AttributeType>>()
    const kinds = names.get(a.name) ?? new Set<AttributeType>()
    kinds.add(attributeTypeOfJsonType(a.type))
    names.set(a.name, kinds)
    byOwner.set(a.owner, names)
  }
  return types.map((t) => ({
    name: t.name,
    source: 'public_api' as const,
    count: t.count,
    first_seen_at: t.first_seen_at,
    last_seen_at: t.last_seen_at,
    attributes: sortAttributes(byOwner.get(t.name)),
  }))
}

/** One stored directly-follows aggregate with its names: an activity (`b` null) or an edge `a → b` of object type `ot` (src/core/directly-follows.ts). */
export interface NamedAggregate extends DfAggregate {
  ot: string
  a: string
  b: string | null
}

/** MapRow statistics columns of a summary (ms). */
function statsColumns(s: DurationSummary): Pick<MapRow, 'c3' | 'c4' | 'c5' | 'c6' | 'c7'> {
  return { c3: s.count, c4: s.sum, c5: s.min, c6: s.max, c7: s.median }
}

/**
 * The process map's aggregate rows (MapRow) of the directly-follows read model's aggregates, and
 * the bound on their medians' relative error (0 when every median is exact; see
 * src/core/duration-stats.ts). For every adapter.
 */
export function rowsOfAggregates(aggregates: Iterable<NamedAggregate>): { rows: MapRow[]; medianRelativeError: number } {
  const rows: MapRow[] = []
  let exact = true
  const summary = (stats: DfAggregate['durations']): DurationSummary | null => {
    const s = summarize(stats)
    if (s !== null && !s.exactMedian) exact = false
    return s
  }
  for (const g of aggregates) {
    if (g.b === null) {
      rows.push({ kind: 'activity', ot: g.ot, k1: g.a, k2: '', c1: g.events, c2: g.objects, c3: g.total, c4: g.starts, c5: g.ends, c6: 0, c7: null })
      const run = summary(g.durations)
      if (run !== null) rows.push({ kind: 'run', ot: g.ot, k1: g.a, k2: '', c1: 0, c2: 0, ...statsColumns(run) })
      continue
    }
    const elapsed = summary(g.durations)
    if (elapsed === null) continue
    rows.push({ kind: 'edge', ot: g.ot, k1: g.a, k2: g.b, c1: g.objects, c2: g.couples, ...statsColumns(elapsed) })
    const waiting = summary(g.waiting)
    if (waiting !== null) rows.push({ kind: 'waiting', ot: g.ot, k1: g.a, k2: g.b, c1: 0, c2: 0, ...statsColumns(waiting) })
  }
  return { rows, medianRelativeError: exact ? 0 : MEDIAN_RELATIVE_ERROR }
}

/**
 * Fills each activity row's end count (`c5`) of a window's rows: its steps without a successor in
 * the window, which is its (event, object) pairs (`c3`) less the occurrences of its outgoing edges
 * (each step has at most one successor in its object's trace). In place.
 */
export function fillWindowEnds(rows: MapRow[]): void {
  const out = new Map<string, number>()
  for (const r of rows) {
    if (r.kind !== 'edge') continue
    const key = joinKey(r.ot, r.k1)
    out.set(key, (out.get(key) ?? 0) + Number(r.c3))
  }
  for (const r of rows) if (r.kind === 'activity') r.c5 = Number(r.c3) - (out.get(joinKey(r.ot, r.k1)) ?? 0)
}
