/**
 * The process map on the embedded SQLite file, from the directly-follows read model
 * (docs/process-map.md#the-directly-follows-read-model; tables in sqlite-df-writes.ts):
 * - all time: the stored aggregates, one row per activity and edge of the asked types, whatever
 *   the number of events (medians as src/core/duration-stats.ts keeps them);
 * - a window: the steps whose event lies in it, read along the steps' key (dataset, time) in
 *   chunks, each with its predecessor, and grouped here in one pass (windowMapRows); exact, medians
 *   as `median()` of SQLite's percentile extension computes them (https://sqlite.org/percentile.html).
 */
import type { Statement } from 'better-sqlite3'
import type { DurationStats } from '../../../core/duration-stats.js'
import type { ProcessMapAnswer, ProcessMapFilter } from '../../../ports/read-model-query.js'
import { assembleProcessMap, fillWindowEnds, type MapRow, type NamedAggregate, rowsOfAggregates } from '../../../core/process-map-rows.js'
import { innerMap } from '../../../core/keys.js'
import type { SqliteDatabase } from '../log/database.js'
import { epochMsOf } from './read-models-database.js'
import { type AggregateRow, NO_ACTIVITY } from './sqlite-df-writes.js'

/** An aggregate row with its key's name ids. */
type AggregateSqlRow = AggregateRow & { ot: number; a: number; b: number }

/** Steps read per statement of a window's map: bounds the text one statement builds (about 35 bytes a step). */
const WINDOW_CHUNK_STEPS = 16_384

type WindowSqlRow = Omit<MapRow, 'ot' | 'k1' | 'k2'> & { ot: number; k1: number; k2: number }

/**
 * The process map of dataset `did` (rm_datasets) for `filter`.
 * @param chunkSteps steps a window's map reads per statement (tests lower it so that chunks split events).
 * @returns the maps by object type (sorted, assembleProcessMap) and their medians' error bound.
 */
export function sqliteProcessMap(db: SqliteDatabase, did: number, filter: ProcessMapFilter, chunkSteps = WINDOW_CHUNK_STEPS): ProcessMapAnswer {
  const names = new Map((db.prepare('SELECT id, name FROM rm_df_names').all() as { id: number; name: string }[]).map((r) => [r.id, r.name]))
  const nameOf = (id: number): string => {
    const name = names.get(id)
    if (name === undefined) throw new Error(`rm_df_names holds no name ${String(id)}`)
    return name
  }
  const params: Record<string, number | string> = { did }
  const conditions = ['did = @did']
  const asked = filter.objectTypes ?? []
  if (asked.length > 0) {
    const ids = [...names].filter(([, name]) => asked.includes(name)).map(([id]) => id)
    if (ids.length === 0) return { object_types: [], median_relative_error: 0 }
    params.types = JSON.stringify(ids)
    conditions.push('ot IN (SELECT value FROM json_each(@types))')
  }
  if (filter.from === undefined && filter.to === undefined) {
    const stored = db.prepare(`SELECT * FROM rm_df_aggregates WHERE ${conditions.join(' AND ')}`).all(params) as AggregateSqlRow[]
    const aggregates = stored.map(
      (r): NamedAggregate => ({
        ...r,
        ot: nameOf(r.ot),
        a: nameOf(r.a),
        b: r.b === NO_ACTIVITY ? null : nameOf(r.b),
        durations: JSON.parse(r.durations) as DurationStats,
        waiting: JSON.parse(r.waiting) as DurationStats,
      }),
    )
    const { rows, medianRelativeError } = rowsOfAggregates(aggregates)
    return { object_types: assembleProcessMap(rows), median_relative_error: medianRelativeError }
  }
  // The window's lower bound is the first chunk's (t, pos, rid) key bound in windowMapRows.
  if (filter.from !== undefined) params.from = epochMsOf(filter.from)
  if (filter.to !== undefined) {
    params.to = epochMsOf(filter.to)
    conditions.push('t < @to')
  }
  // A predecessor is in the window when its time is (it is never after its successor).
  const prevIn = filter.from === undefined ? 'prev_dt IS NOT NULL' : 't - prev_dt >= @from'
  const rows = windowMapRows(
    db,
    conditions.join(' AND '),
    prevIn,
    params,
    filter.from === undefined ? Number.MIN_SAFE_INTEGER : epochMsOf(filter.from),
    chunkSteps,
  ).map((r): MapRow => ({ ...r, ot: nameOf(r.ot), k1: nameOf(r.k1), k2: r.kind === 'edge' || r.kind === 'waiting' ? nameOf(r.k2) : '' }))
  fillWindowEnds(rows)
  return { object_types: assembleProcessMap(rows), median_relative_error: 0 }
}

/** An empty field of a step's text (no run time, no predecessor in the window, or no waiting time): no whole number. */
const NONE = Number.NEGATIVE_INFINITY

/** An activity's group of a window: events, objects, (event, object) pairs, starts and run times (ms). */
interface ActivityGroup {
  events: number
  /** The objects of its steps, repeated (counted by DistinctCounter). */
  objects: number[]
  total: number
  starts: number
  runs: number[]
}

/** An edge's group of a window: objects, event couples, elapsed and waiting times (ms). */
interface EdgeGroup {
  /** The objects of its occurrences, repeated (counted by DistinctCounter). */
  objects: number[]
  couples: number
  elapsed: number[]
  waiting: number[]
}

/**
 * The window's aggregate rows (MapRow with name ids; activities' end counts left 0 for
 * fillWindowEnds), from one ordered scan of its steps. SQLite reads the steps along their key
 * (dataset, time, position, object: no sort) in chunks of `chunkSteps` (windowChunkStatement),
 * each as one text of whole numbers; WindowGroups groups them here, chunk after chunk.
 * A step row costs about 1 µs to materialise in better-sqlite3, its text a fifth of that. Grouping
 * here rather than in SQL avoids SQL's three sorts of the steps and its COUNT(DISTINCT) trees: an
 * event's steps are consecutive in that order, so its distinct types and event couples are
 * counted within it; distinct objects with DistinctCounter; medians as SQLite's `median()` (the
 * mean of the two middle values of an even count), by selection. Memory: each group's objects and
 * durations until the end (bench/HISTORY.md#the-window-map).
 * @param where the steps' conditions (`did`, upper bound, types) with their `params`.
 * @param prevIn true of a step whose predecessor is in the window.
 * @param from the window's lower bound (epoch ms; Number.MIN_SAFE_INTEGER for none).
 * @param chunkSteps steps per statement (a whole number ≥ 1).
 */
function windowMapRows(
  db: SqliteDatabase,
  where: string,
  prevIn: string,
  params: Record<string, number | string>,
  from: number,
  chunkSteps: number,
): WindowSqlRow[] {
  const text = windowChunkStatement(db, where, prevIn)
  const groups = new WindowGroups()
  let after = { after_t: from, after_pos: Number.MIN_SAFE_INTEGER, after_rid: Number.MIN_SAFE_INTEGER }
  for (;;) {
    const chunk = text.get({ ...params, ...after, chunk_steps: chunkSteps })
    const last = groups.addChunk(chunk?.s ?? '')
    if (chunk === undefined || chunk.n < chunkSteps || chunk.t === null) break
    after = { after_t: chunk.t, after_pos: last.pos, after_rid: last.rid }
  }
  return groups.rows()
}

/** One chunk of a window's steps (windowChunkStatement): their text `s` (null: none), their number `n` and their latest time `t` (epoch ms). */
interface WindowChunk {
  s: string | null
  n: number
  t: number | null
}

/**
 * The statement that reads the next chunk of a window's steps (docs/process-map.md#the-directly-follows-read-model):
 * the first `@chunk_steps` steps of `where` after the key (`@after_t`, `@after_pos`, `@after_rid`),
 * as one text of whole numbers, nine a step: `ot,act,pos,rid,run,prev_act,pos − prev_pos,elapsed,waiting`
 * (the last four empty when the predecessor is outside the window, `prevIn` false; run and
 * waiting empty when there is none; times in ms). The chunk's ORDER BY, which its LIMIT keeps, is
 * the primary key's order (the plan has no sort), and `group_concat` concatenates in that order
 * because its own ORDER BY says so (an aggregate's ORDER BY, https://sqlite.org/lang_aggfunc.html;
 * without it the order is arbitrary; it costs about 45 ms over a window of 260,000 steps).
 */
function windowChunkStatement(db: SqliteDatabase, where: string, prevIn: string): Statement<Record<string, number | string>, WindowChunk> {
  // The bound on the key is the chunk's range on the primary key (with `t >= @from` besides it,
  // SQLite would range on t alone and filter the key, reading the window from its start per chunk).
  return db.prepare<Record<string, number | string>, WindowChunk>(
    `SELECT group_concat(s, ',' ORDER BY t, pos, rid) AS s, count(*) AS n, max(t) AS t FROM (
  SELECT t, pos, rid, concat_ws(',', ot, act, pos, rid, coalesce(run, ''),
    iif(${prevIn}, prev_act || ',' || (pos - prev_pos) || ',' || prev_dt || ',' || coalesce(max(0, prev_wait), ''), ',,,')) AS s
  FROM rm_df_steps WHERE ${where} AND (t, pos, rid) > (@after_t, @after_pos, @after_rid) ORDER BY t, pos, rid LIMIT @chunk_steps)`,
  )
}

/** A chunk's text (windowChunkStatement), read one whole number at a time. */
class StepText {
  private at = 0

  constructor(private readonly s: string) {}

  /** Whether every number has been read. */
  get done(): boolean {
    return this.at >= this.s.length
  }

  /** The next whole number of the text, NONE for an empty field. */
  next(): number {
    const s = this.s
    let at = this.at
    let c = s.charCodeAt(at)
    if (c === 44 || at >= s.length) {
      this.at = at + 1
      return NONE
    }
    const negative = c === 45
    if (negative) c = s.charCodeAt(++at)
    let n = 0
    while (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48)
      c = s.charCodeAt(++at)
    }
    this.at = at + 1
    return negative ? -n : n
  }
}

/**
 * The groups of a window's steps (docs/process-map.md#definitions), fed chunk after chunk in key
 * order: activities by (type, activity) and edges by (type, activity, activity), with the event
 * being read (its position, the types and the couples (edge, pos − prev_pos) seen in it), which
 * goes on across a chunk's end; and the range of the steps' objects (rid), for DistinctCounter.
 */
class WindowGroups {
  private readonly activities = new Map<number, Map<number, ActivityGroup>>()
  private readonly edges = new Map<number, Map<number, Map<number, EdgeGroup>>>()
  private eventPos = NONE
  private readonly eventTypes: number[] = []
  private readonly eventEdges: EdgeGroup[] = []
  private readonly eventCouples: number[] = []
  private steps = 0
  private minRid = Number.POSITIVE_INFINITY
  private maxRid = Number.NEGATIVE_INFINITY

  /**
   * Groups the steps of one chunk's text (windowChunkStatement).
   * @returns the position and object (rid) of its last step, where the next chunk starts after (NONE: no step).
   */
  addChunk(s: string): { pos: number; rid: number } {
    const text = new StepText(s)
    let pos = NONE
    let rid = NONE
    while (!text.done) {
      const ot = text.next()
      const act = text.next()
      pos = text.next()
      rid = text.next()
      const run = text.next()
      const prevAct = text.next()
      const couple = text.next()
      const elapsed = text.next()
      const waiting = text.next()
      const a = this.addStep(ot, act, pos, rid, run)
      if (prevAct === NONE) a.starts += 1
      else this.addCouple(ot, prevAct, act, rid, couple, elapsed, waiting)
    }
    return { pos, rid }
  }

  /**
   * Adds a step of object `rid` to its activity's group: one more step and object; one more event,
   * with its run time `run` (ms; NONE: none), the first time the event shows this type.
   * @returns the activity's group.
   */
  private addStep(ot: number, act: number, pos: number, rid: number, run: number): ActivityGroup {
    this.steps += 1
    if (rid < this.minRid) this.minRid = rid
    if (rid > this.maxRid) this.maxRid = rid
    if (pos !== this.eventPos) {
      this.eventPos = pos
      this.eventTypes.length = 0
      this.eventEdges.length = 0
      this.eventCouples.length = 0
    }
    const byAct = innerMap(this.activities, ot)
    let a = byAct.get(act)
    if (a === undefined) {
      a = { events: 0, objects: [], total: 0, starts: 0, runs: [] }
      byAct.set(act, a)
    }
    a.total += 1
    a.objects.push(rid)
    if (!this.eventTypes.includes(ot)) {
      this.eventTypes.push(ot)
      a.events += 1
      if (run !== NONE) a.runs.push(run)
    }
    return a
  }

  /**
   * Adds an occurrence of edge `prevAct → act` of object `rid` to its group: its object, its
   * elapsed and waiting times (ms; waiting NONE: none), and one more event couple the first time
   * the event shows this edge with predecessor `couple` (pos − prev_pos).
   */
  private addCouple(ot: number, prevAct: number, act: number, rid: number, couple: number, elapsed: number, waiting: number): void {
    const byNext = innerMap(innerMap(this.edges, ot), prevAct)
    let e = byNext.get(act)
    if (e === undefined) {
      e = { objects: [], couples: 0, elapsed: [], waiting: [] }
      byNext.set(act, e)
    }
    e.objects.push(rid)
    e.elapsed.push(elapsed)
    if (waiting !== NONE) e.waiting.push(waiting)
    let seen = false
    for (let i = 0; i < this.eventEdges.length && !seen; i += 1) seen = this.eventEdges[i] === e && this.eventCouples[i] === couple
    if (!seen) {
      this.eventEdges.push(e)
      this.eventCouples.push(couple)
      e.couples += 1
    }
  }

  /** The groups' rows (WindowSqlRow): per activity its counts and run times, per edge its counts, elapsed and waiting times. */
  rows(): WindowSqlRow[] {
    // Stamps for objects while they take at most 4 bytes a step (or 4 MB).
    const objects = new DistinctCounter(this.minRid, this.maxRid, Math.max(1 << 20, this.steps))
    const rows: WindowSqlRow[] = []
    for (const [ot, byAct] of this.activities) {
      for (const [act, a] of byAct) {
        rows.push({ kind: 'activity', ot, k1: act, k2: 0, c1: a.events, c2: objects.count(a.objects), c3: a.total, c4: a.starts, c5: 0, c6: 0, c7: null })
        if (a.runs.length > 0) rows.push({ kind: 'run', ot, k1: act, k2: 0, c1: 0, c2: 0, ...statsColumns(a.runs) })
      }
    }
    for (const [ot, byPrev] of this.edges) {
      for (const [prevAct, byAct] of byPrev) {
        for (const [act, e] of byAct) {
          rows.push({ kind: 'edge', ot, k1: prevAct, k2: act, c1: objects.count(e.objects), c2: e.couples, ...statsColumns(e.elapsed) })
          if (e.waiting.length > 0) rows.push({ kind: 'waiting', ot, k1: prevAct, k2: act, c1: 0, c2: 0, ...statsColumns(e.waiting) })
        }
      }
    }
    return rows
  }
}

/** MapRow statistics columns of durations (ms, at least one): count, sum, min, max, median (SQLite `median()`'s). */
export function statsColumns(durations: readonly number[]): Pick<MapRow, 'c3' | 'c4' | 'c5' | 'c6' | 'c7'> {
  const values = Float64Array.from(durations)
  let sum = 0
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  for (const d of values) {
    sum += d
    if (d < min) min = d
    if (d > max) max = d
  }
  // median(): v[⌊m⌋] + (v[⌈m⌉] − v[⌊m⌋]) × (m − ⌊m⌋) of the sorted values v, m = (n − 1) / 2.
  const middle = (values.length - 1) / 2
  const below = Math.floor(middle)
  const low = select(values, below)
  let high = low
  if (middle > below) {
    high = Number.POSITIVE_INFINITY
    for (let i = below + 1; i < values.length; i += 1) high = Math.min(high, values[i] ?? high)
  }
  return { c3: values.length, c4: sum, c5: min, c6: max, c7: low + (high - low) * (middle - below) }
}

/**
 * The `k`-th smallest of `values` (from 0), reordering them so that none before index k is larger
 * and none after it smaller (Hoare's selection, FIND; Communications of the ACM 4(7), 1961).
 */
function select(values: Float64Array, k: number): number {
  let lo = 0
  let hi = values.length - 1
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1] ?? 0
    let i = lo
    let j = hi
    while (i <= j) {
      while ((values[i] ?? pivot) < pivot) i += 1
      while ((values[j] ?? pivot) > pivot) j -= 1
      if (i <= j) {
        const v = values[i] ?? 0
        values[i] = values[j] ?? 0
        values[j] = v
        i += 1
        j -= 1
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else break
  }
  return values[k] ?? 0
}

/**
 * Counts distinct whole numbers of [min, max], list by list: with a stamp per value of the range
 * when it has at most `budget` values (one pass), else by sorting each list.
 */
export class DistinctCounter {
  private readonly min: number
  private readonly stamps: Int32Array | null
  private stamp = 0

  constructor(min: number, max: number, budget: number) {
    this.min = min
    this.stamps = max >= min && max - min < budget ? new Int32Array(max - min + 1) : null
  }

  count(values: readonly number[]): number {
    let count = 0
    if (this.stamps === null) {
      const sorted = Float64Array.from(values).sort()
      for (let i = 0; i < sorted.length; i += 1) if (i === 0 || sorted[i] !== sorted[i - 1]) count += 1
      return count
    }
    this.stamp += 1
    for (const v of values) {
      if (this.stamps[v - this.min] !== this.stamp) {
        this.stamps[v - this.min] = this.stamp
        count += 1
      }
    }
    return count
  }
}
