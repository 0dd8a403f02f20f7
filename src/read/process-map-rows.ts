/**
 * The process map's aggregate rows, as every ReadModelQuery adapter computes them in its engine,
 * and their assembly into the answer's shape (pure). An adapter's query yields a few rows per
 * object type, activity and edge (never one per event); this module only sorts and nests them.
 */
import type { AttributeInfo, MapActivity, MapEdge, ObjectTypeMap, Stats, TypeInfo } from '../schemas/process.js'

/**
 * One aggregate row. `kind` says what it holds:
 * - `type`: `n1` = objects of type `ot` with an event in the window;
 * - `activity` (`k1` = activity): `n1` events, `n2` objects, `n3` (event, object) pairs;
 * - `edge` (`k1` → `k2`): `n1` occurrences, `n2` objects, `n3` distinct event couples;
 * - `start` / `end` (`k1` = activity): `n1` objects;
 * - `run` (`k1` = activity), `elapsed` / `waiting` (`k1` → `k2`): statistics of durations in whole
 *   milliseconds: `n1` count, `n2` sum, `n3` min, `n4` max, `med` median.
 */
export interface MapRow {
  kind: 'type' | 'activity' | 'edge' | 'start' | 'end' | 'run' | 'elapsed' | 'waiting'
  ot: string
  k1: string
  k2: string
  n1: number
  n2: number
  n3: number
  n4: number
  med: number | null
}

/** Code-unit order: the same on every machine and locale (and in SQLite's BINARY collation). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Milliseconds to seconds, rounded to the millisecond. */
function seconds(ms: number): number {
  return Math.round(ms) / 1000
}

/** Statistics in seconds from a `run`/`elapsed`/`waiting` row (sums in ms; mean and median rounded to the ms). */
export function statsOf(row: MapRow): Stats {
  return {
    count: row.n1,
    mean: seconds(row.n2 / row.n1),
    median: seconds(row.med ?? 0),
    min: seconds(row.n3),
    max: seconds(row.n4),
    sum: seconds(row.n2),
  }
}

const EMPTY_STATS: Stats = { count: 0, mean: 0, median: 0, min: 0, max: 0, sum: 0 }

/**
 * Nests aggregate rows into the answer: one entry per object type (with a `type` row), sorted by
 * name; activities, start and end activities by activity; edges by (source, target).
 */
export function assembleProcessMap(rows: readonly MapRow[]): ObjectTypeMap[] {
  const maps = new Map<string, ObjectTypeMap>()
  const activities = new Map<string, MapActivity>()
  const edges = new Map<string, MapEdge>()
  const key = (...parts: string[]) => parts.join('\u0000')
  const mapOf = (ot: string): ObjectTypeMap => {
    let m = maps.get(ot)
    if (m === undefined) {
      m = { object_type: ot, objects: 0, activities: [], edges: [], start_activities: [], end_activities: [] }
      maps.set(ot, m)
    }
    return m
  }
  const edgeOf = (r: MapRow): MapEdge => {
    let e = edges.get(key(r.ot, r.k1, r.k2))
    if (e === undefined) {
      e = { source: r.k1, target: r.k2, total: 0, objects: 0, event_couples: 0, elapsed: EMPTY_STATS, waiting: null }
      edges.set(key(r.ot, r.k1, r.k2), e)
      mapOf(r.ot).edges.push(e)
    }
    return e
  }
  const activityOf = (r: MapRow): MapActivity => {
    let a = activities.get(key(r.ot, r.k1))
    if (a === undefined) {
      a = { activity: r.k1, events: 0, objects: 0, total: 0, run_time: null }
      activities.set(key(r.ot, r.k1), a)
      mapOf(r.ot).activities.push(a)
    }
    return a
  }
  for (const r of rows) {
    const n = (v: number) => Number(v)
    switch (r.kind) {
      case 'type':
        mapOf(r.ot).objects = n(r.n1)
        break
      case 'activity': {
        const a = activityOf(r)
        a.events = n(r.n1)
        a.objects = n(r.n2)
        a.total = n(r.n3)
        break
      }
      case 'run':
        activityOf(r).run_time = statsOf(r)
        break
      case 'edge': {
        const e = edgeOf(r)
        e.total = n(r.n1)
        e.objects = n(r.n2)
        e.event_couples = n(r.n3)
        break
      }
      case 'elapsed':
        edgeOf(r).elapsed = statsOf(r)
        break
      case 'waiting':
        edgeOf(r).waiting = statsOf(r)
        break
      case 'start':
        mapOf(r.ot).start_activities.push({ activity: r.k1, objects: n(r.n1) })
        break
      case 'end':
        mapOf(r.ot).end_activities.push({ activity: r.k1, objects: n(r.n1) })
        break
    }
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
