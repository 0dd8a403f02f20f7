/**
 * The SQLite store's write of the directly-follows slice (docs/process-map.md#the-directly-follows-read-model):
 * reads each object's stored steps around the run's new ones, links them by the rules of
 * src/core/directly-follows.ts, and writes the steps, the objects' membership counts and the
 * aggregates, inside the store's one transaction per batch. Names (activities, object types) are
 * stored as integer ids of `rm_df_names`; the rules see them as opaque strings (the ids' text).
 */
import {
  aggregateChanges,
  applyDelta,
  type DfAggregate,
  type DfCounts,
  type DfLinking,
  type DfNeighbours,
  type DfRefill,
  type DfStep,
  edgeRefills,
  type EventStepRow,
  isEmptyAggregate,
  linkByClusters,
  type MembershipChange,
  refillAggregate,
  setKin,
  stepsByObject,
} from '../../../core/directly-follows.js'
import type { DurationStats, StatsEnd } from '../../../core/duration-stats.js'
import type { DirectlyFollowsEvent } from '../../../core/read-model-changes.js'
import type Database from 'better-sqlite3'
import type { SqliteDatabase } from '../log/database.js'
import { type DfObjectMemory, EMPTY_TAIL, linkAfterTails, neighboursFromTail, nextTail, type TraceTail } from '../../../core/df-object-memory.js'
import { MultiRowStatement, type RowSink, type SqlValue } from './multi-row.js'

/** The directly-follows tables (part of the read models' schema, read-models-database.ts). */
export const DF_SCHEMA = `
CREATE TABLE rm_df_names (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE
);
CREATE TABLE rm_df_steps (
  did INTEGER NOT NULL, t INTEGER NOT NULL, pos INTEGER NOT NULL, rid INTEGER NOT NULL,
  ot INTEGER NOT NULL, act INTEGER NOT NULL, run INTEGER, kin INTEGER NOT NULL,
  prev_dt INTEGER, prev_pos INTEGER, prev_act INTEGER, prev_wait INTEGER,
  PRIMARY KEY (did, t, pos, rid)
) WITHOUT ROWID;
CREATE INDEX rm_df_steps_by_object ON rm_df_steps (rid, t, pos, act, run, kin);
CREATE INDEX rm_df_steps_by_edge ON rm_df_steps (did, ot, prev_act, act, t, pos, prev_dt, prev_wait) WHERE prev_act IS NOT NULL;
CREATE TABLE rm_df_memberships (
  rid INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (rid, a, b)
) WITHOUT ROWID;
CREATE TABLE rm_df_aggregates (
  did INTEGER NOT NULL, ot INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL,
  events INTEGER NOT NULL, objects INTEGER NOT NULL, total INTEGER NOT NULL, starts INTEGER NOT NULL, ends INTEGER NOT NULL,
  couples INTEGER NOT NULL, durations TEXT NOT NULL, waiting TEXT NOT NULL,
  PRIMARY KEY (did, ot, a, b)
) WITHOUT ROWID;
`

/** The directly-follows tables, as DF_SCHEMA makes them. */
export const DF_TABLES = ['rm_df_names', 'rm_df_steps', 'rm_df_memberships', 'rm_df_aggregates'] as const

/**
 * The indexes the projector itself reads, sorted; not query indexes: each edge's couples in time
 * order with their elapsed and raw waiting times (`rm_df_steps_by_edge`, to refill an edge's kept
 * smallest or largest durations, writeDirectlyFollows), and each object's steps in order
 * (`rm_df_steps_by_object`).
 */
export const DF_PROJECTOR_INDEXES = ['rm_df_steps_by_edge', 'rm_df_steps_by_object'] as const

/** Empties the directly-follows read model (its rebuild alone). */
export function clearDirectlyFollows(db: SqliteDatabase): void {
  db.exec('DELETE FROM rm_df_steps; DELETE FROM rm_df_memberships; DELETE FROM rm_df_aggregates; DELETE FROM rm_df_names')
}

/** The id `b` of an activity's aggregate and membership rows (no target activity). */
export const NO_ACTIVITY = 0

/**
 * A row of the neighbour read, as an array (better-sqlite3's raw mode: no object a row): `before` 1
 * for the stored step before the asked (t, pos), 0 for those at or after it; then the step's time,
 * position, activity (name id), end time (ms, or null) and `kin`.
 */
type NeighbourRow = [before: number, t: number, pos: number, act: number, te: number | null, kin: number]

/** An `rm_df_aggregates` row's counts and durations (JSON of DurationStats), as the write and the map read them. */
export interface AggregateRow extends DfCounts {
  durations: string
  waiting: string
}

/** The statements of the directly-follows write, prepared once per store. */
export interface DfStatements {
  nameId: Database.Statement<[string], number>
  putName: Database.Statement<[string]>
  neighbours: Database.Statement<[number, number, number, number, number, number], NeighbourRow>
  /** An event's steps, as arrays (raw): object row id, object type, predecessor's position and activity (null: none). */
  eventSteps: Database.Statement<[number, number, number], [rid: number, ot: number, prevPos: number | null, prevAct: number | null]>
  memberships: Database.Statement<[number], [number, number, number]>
  putSteps: MultiRowStatement
  relink: Database.Statement<unknown[]>
  putMemberships: MultiRowStatement
  dropMembership: Database.Statement<[number, number, number]>
  aggregate: Database.Statement<[number, number, number, number], AggregateRow>
  putAggregate: Database.Statement<unknown[]>
  dropAggregate: Database.Statement<[number, number, number, number]>
  /** An edge's (did, ot, a, b) smallest (`lo`) or largest (`hi`) elapsed or waiting times, at most the last parameter of them. */
  edgeValues: Record<DfRefill['stats'], Record<StatsEnd, Database.Statement<[number, number, number, number, number], number>>>
}

/**
 * The statement of an edge's `limit` smallest (ASC) or largest (DESC) elapsed (`prev_dt`) or waiting
 * (max(0, `prev_wait`)) times: one seek of `rm_df_steps_by_edge` and a read of the edge's entries,
 * of which SQLite's sorter keeps `limit` (docs/process-map.md#medians-of-the-all-time-map).
 */
function edgeValuesStatement(
  db: SqliteDatabase,
  stats: DfRefill['stats'],
  order: 'ASC' | 'DESC',
): Database.Statement<[number, number, number, number, number], number> {
  const sql =
    stats === 'durations'
      ? `SELECT prev_dt FROM rm_df_steps INDEXED BY rm_df_steps_by_edge
         WHERE did = ? AND ot = ? AND prev_act = ? AND act = ? ORDER BY prev_dt ${order} LIMIT ?`
      : `SELECT max(0, prev_wait) FROM rm_df_steps INDEXED BY rm_df_steps_by_edge
         WHERE did = ? AND ot = ? AND prev_act = ? AND act = ? AND prev_wait IS NOT NULL ORDER BY prev_wait ${order} LIMIT ?`
  return db.prepare<[number, number, number, number, number], number>(sql).pluck()
}

/** Prepares DfStatements on `db`. */
export function prepareDfStatements(db: SqliteDatabase): DfStatements {
  return {
    nameId: db.prepare<[string], number>('SELECT id FROM rm_df_names WHERE name = ?').pluck(),
    putName: db.prepare<[string]>('INSERT OR IGNORE INTO rm_df_names (name) VALUES (?)'),
    // Two seeks of the object's index in one statement: the step before (t, pos), and up to two at or after it.
    // Parameters: (rid, t, pos) twice (positional binding costs less than named).
    neighbours: db
      .prepare<[number, number, number, number, number, number], NeighbourRow>(
        `SELECT * FROM (SELECT 1 AS before, t, pos, act, t + run AS te, kin FROM rm_df_steps WHERE rid = ? AND (t, pos) < (?, ?) ORDER BY t DESC, pos DESC LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT 0, t, pos, act, t + run, kin FROM rm_df_steps WHERE rid = ? AND (t, pos) >= (?, ?) ORDER BY t, pos LIMIT 2)`,
      )
      .raw(),
    eventSteps: db
      .prepare<[number, number, number], [number, number, number | null, number | null]>(
        'SELECT rid, ot, prev_pos, prev_act FROM rm_df_steps WHERE did = ? AND t = ? AND pos = ?',
      )
      .raw(),
    memberships: db.prepare<[number], [number, number, number]>('SELECT a, b, n FROM rm_df_memberships WHERE rid = ?').raw(),
    putSteps: new MultiRowStatement(
      db,
      'INSERT OR IGNORE INTO rm_df_steps (did, t, pos, rid, ot, act, run, kin, prev_dt, prev_pos, prev_act, prev_wait) VALUES',
      STEP_COLUMNS,
    ),
    relink: db.prepare('UPDATE rm_df_steps SET prev_dt = ?, prev_pos = ?, prev_act = ?, prev_wait = ? WHERE did = ? AND t = ? AND pos = ? AND rid = ?'),
    putMemberships: new MultiRowStatement(db, 'INSERT INTO rm_df_memberships (rid, a, b, n) VALUES', 4, 'ON CONFLICT (rid, a, b) DO UPDATE SET n = excluded.n'),
    dropMembership: db.prepare('DELETE FROM rm_df_memberships WHERE rid = ? AND a = ? AND b = ?'),
    aggregate: db.prepare(
      'SELECT events, objects, total, starts, ends, couples, durations, waiting FROM rm_df_aggregates WHERE did = ? AND ot = ? AND a = ? AND b = ?',
    ),
    putAggregate: db.prepare(
      `INSERT INTO rm_df_aggregates (did, ot, a, b, events, objects, total, starts, ends, couples, durations, waiting)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (did, ot, a, b) DO UPDATE SET events = excluded.events, objects = excluded.objects, total = excluded.total,
         starts = excluded.starts, ends = excluded.ends, couples = excluded.couples, durations = excluded.durations, waiting = excluded.waiting`,
    ),
    dropAggregate: db.prepare('DELETE FROM rm_df_aggregates WHERE did = ? AND ot = ? AND a = ? AND b = ?'),
    edgeValues: {
      durations: { lo: edgeValuesStatement(db, 'durations', 'ASC'), hi: edgeValuesStatement(db, 'durations', 'DESC') },
      waiting: { lo: edgeValuesStatement(db, 'waiting', 'ASC'), hi: edgeValuesStatement(db, 'waiting', 'DESC') },
    },
  }
}

/** The id of `name` in `rm_df_names`, made when missing. */
function nameIdOf(st: DfStatements, ids: Map<string, number>, name: string): number {
  let id = ids.get(name)
  if (id === undefined) {
    id = st.nameId.get(name)
    if (id === undefined) {
      st.putName.run(name)
      id = st.nameId.get(name)
    }
    if (id === undefined) throw new Error(`rm_df_names: no id for ${name}`)
    ids.set(name, id)
  }
  return id
}

const num = (idText: string): number => Number(idText)

/**
 * Adds to `out` a step's predecessor columns (`prev_dt`, `prev_pos`, `prev_act`, `prev_wait`): the elapsed time
 * t − t(p) and the raw waiting time t − end(p) (before max(0, …); null without an end) are stored as
 * differences, which take fewer bytes than times (docs/process-map.md#the-directly-follows-read-model).
 */
function addPrevColumns(out: Pick<RowSink, 'add'>, s: DfStep<number>, p: DfStep<number> | null): void {
  out.add(p === null ? null : s.t - p.t)
  out.add(p === null ? null : p.pos)
  out.add(p === null ? null : num(p.act))
  out.add(p === null || p.te === null ? null : s.t - p.te)
}

/** The values of one `rm_df_steps` row, in DF_SCHEMA's column order. */
const STEP_COLUMNS = 12

/** The order of `rm_df_memberships`' key: (object, a, b). */
function compareMembershipKeys(x: MembershipChange<number>, y: MembershipChange<number>): number {
  return x.object - y.object || num(x.a) - num(y.a) || activityId(x.b) - activityId(y.b)
}

/** The order of `rm_df_steps`' key: (dataset, t, pos, object). */
function compareStepKeys(a: DfStep<number>, b: DfStep<number>): number {
  return (a.dataset === b.dataset ? 0 : num(a.dataset) - num(b.dataset)) || a.t - b.t || a.pos - b.pos || a.object - b.object
}

/** Name ids stay below 2^26, so that a membership's (a, b) is one exact number. */
const NAME_ID_LIMIT = 2 ** 26

/** The id of a membership's or an aggregate's second activity `b` (its name id; '' for none: NO_ACTIVITY). */
function activityId(b: string): number {
  return b === '' ? NO_ACTIVITY : num(b)
}

/** The number key of a membership row's (a, b). */
function membershipKey(a: number, b: number): number {
  if (a >= NAME_ID_LIMIT || b >= NAME_ID_LIMIT) throw new Error(`rm_df_names: id ${String(Math.max(a, b))} is past ${String(NAME_ID_LIMIT)}`)
  return a * NAME_ID_LIMIT + b
}

/**
 * What the write knows of the objects of one run beyond the file (DfObjectMemory): the memory of
 * earlier transactions, and the first row id the current transaction made (an object whose row id
 * is at or past it was named first by this batch: it has no stored step).
 */
export interface DfMemoryContext {
  memory: DfObjectMemory
  firstNewRid: number
}

/**
 * The stored neighbours (DfNeighbours) of each asked candidate step in its object's trace, by object
 * (row id): from the object's remembered tail when it holds them (neighboursFromTail), else one
 * statement, two seeks of the object's index. A read that finds nothing stored at or after the
 * candidate shows the object's last step: its tail, when `tails` has none for it yet.
 */
function readNeighbours(st: DfStatements, asks: readonly DfStep<number>[], tails: Map<number, TraceTail>): Map<number, DfNeighbours<number>> {
  const out = new Map<number, DfNeighbours<number>>()
  for (const c of asks) {
    const tail = tails.get(c.object)
    const remembered = tail === undefined ? undefined : neighboursFromTail(tail, c)
    if (remembered !== undefined) {
      out.set(c.object, remembered)
      continue
    }
    const n: DfNeighbours<number> = { before: null, at: null, next: null }
    for (const [before, t, pos, act, te, kin] of st.neighbours.all(c.object, c.t, c.pos, c.object, c.t, c.pos)) {
      const step: DfStep<number> = { dataset: c.dataset, object: c.object, ot: c.ot, act: String(act), t, pos, te, kin }
      if (before === 1) n.before = step
      else if (n.at === null) n.at = step
      else n.next = step
    }
    if (n.at === null && tail === undefined) tails.set(c.object, n.before === null ? EMPTY_TAIL : { steps: [n.before], whole: false })
    out.set(c.object, n)
  }
  return out
}

/**
 * The end of `object`'s stored trace when the write knows it without a read (DfMemoryContext): an
 * empty trace for an object the batch named first, its remembered tail, or undefined.
 */
function knownTail(memory: DfMemoryContext | undefined, object: number): TraceTail | undefined {
  if (memory === undefined) return undefined
  if (object >= memory.firstNewRid) return EMPTY_TAIL
  return memory.memory.get(object)?.tail
}

/**
 * Links each object's new steps. An object whose last stored step is known (knownTail) and whose new
 * steps all come after it is linked with no read (linkAppends: most objects of most runs). The others
 * go through linkByClusters (src/core/directly-follows.ts), one read of their stored steps per run
 * of new steps with no stored step between them (a cluster), from the remembered tail when it holds
 * them, else from the file: the stored step before the cluster's first new step and the one or two
 * at or after it (one statement, two index seeks). So a late step costs at most one read, never a
 * read of the object's history between its new steps. The k-th cluster of every object is linked in
 * one call (round k), added to the linking of the objects linked without a read.
 * @param tails filled with each object's tail before the run, where known.
 */
function linkObjects(
  st: DfStatements,
  byObject: ReadonlyMap<number, readonly DfStep<number>[]>,
  tails: Map<number, TraceTail>,
  memory: DfMemoryContext | undefined,
): DfLinking<number> {
  const { appended, rest } = linkAfterTails(byObject, (object) => knownTail(memory, object), tails)
  if (rest.size === 0) return appended
  const walk = linkByClusters(rest, appended)
  let round = walk.next()
  while (round.done !== true) round = walk.next(readNeighbours(st, round.value, tails))
  return round.value
}

/**
 * Puts in `memory` what the run leaves of each object it wrote, unless the object had no stored step
 * before the run: the end of its trace (nextTail, when its tail before the run was known) and its
 * membership counts (when read or remembered, with the run's changes). What is not known is left
 * out, and read from the file next time.
 */
function remember(
  memory: DfObjectMemory,
  linking: DfLinking<number>,
  tails: ReadonlyMap<number, TraceTail>,
  memberships: ReadonlyMap<number, Map<number, number>>,
  changes: readonly MembershipChange<number>[],
): void {
  const inserted = stepsByObject(linking.inserts.map((l) => l.step))
  for (const m of changes) {
    const of = memberships.get(m.object)
    if (of === undefined) continue
    const key = membershipKey(num(m.a), activityId(m.b))
    if (m.after === 0) of.delete(key)
    else of.set(key, m.after)
  }
  for (const [object, steps] of inserted) {
    // An object seen for the first time is not remembered: most objects of a log live for a few
    // events, and remembering each of them only churns the memory (and the garbage collector).
    // One that comes back is remembered from its second run on.
    if (linking.newObjects.has(object)) {
      memory.delete(object)
      continue
    }
    const before = tails.get(object)
    const tail = before === undefined ? undefined : nextTail(before, steps)
    const of = memberships.get(object)
    if (tail === undefined && of === undefined) memory.delete(object)
    else memory.set(object, { tail, memberships: of })
  }
  memory.trim()
}

/**
 * Writes a run's directly-follows slice: steps, relinks and membership counts, then each aggregate
 * the run changes (applyDelta). An edge aggregate whose kept smallest or largest durations the run's
 * removed couples emptied (edgeRefills) is refilled from the edge's couples as just written, along
 * `rm_df_steps_by_edge`: one read of the edge's couples per emptied end, and an end empties at most
 * once per EXTREMES (32) removals of its kept values (a refill puts back EXTREMES of them, or all when
 * fewer remain), so a removed couple that late events chose at random costs amortised about one
 * index entry read per end (docs/process-map.md#medians-of-the-all-time-map).
 * @param events the slice (log order).
 * @param didOf a dataset's row id; `ridOf` an object's (both made by the batch's identity step).
 * @param memory what earlier transactions left of the objects (DfObjectMemory), updated in place
 *   with this run's writes: the caller clears it when the transaction does not commit. Without it,
 *   every object's neighbours and membership counts are read from the file.
 */
export function writeDirectlyFollows(
  st: DfStatements,
  events: readonly DirectlyFollowsEvent[],
  didOf: (datasetId: string) => number,
  ridOf: (objectId: string) => number,
  memory?: DfMemoryContext,
): void {
  if (events.length === 0) return
  const ids = new Map<string, number>()
  const steps: DfStep<number>[] = []
  for (const e of events) {
    const dataset = String(didOf(e.datasetId))
    const act = String(nameIdOf(st, ids, e.activity))
    const first = steps.length
    for (const o of e.objects) {
      steps.push({ dataset, object: ridOf(o.objectId), ot: String(nameIdOf(st, ids, o.type)), act, t: e.time, pos: e.position, te: e.endTime, kin: 1 })
    }
    setKin(steps, first)
  }
  // Objects, steps and memberships in key order: reads and writes then walk each B-tree's pages in order.
  const tails = new Map<number, TraceTail>()
  const linking = linkObjects(st, new Map([...stepsByObject(steps)].sort((x, y) => x[0] - y[0])), tails, memory)
  // An object's membership counts, remembered or read once per run (one range of its key), keyed by a * 2^26 + b.
  const memberships = new Map<number, Map<number, number>>()
  const membershipOf = (rid: number, a: string, b: string): number => {
    let counts = memberships.get(rid)
    if (counts === undefined) {
      counts = memory?.memory.get(rid)?.memberships
      if (counts === undefined) {
        counts = new Map()
        for (const [ra, rb, n] of st.memberships.all(rid)) counts.set(membershipKey(ra, rb), n)
      }
      memberships.set(rid, counts)
    }
    return counts.get(membershipKey(num(a), activityId(b))) ?? 0
  }
  const changes = aggregateChanges(linking, membershipOf, (n): EventStepRow<number>[] =>
    st.eventSteps.all(num(n.dataset), n.t, n.pos).map(([object, ot, prevPos, prevAct]) => ({
      object,
      ot: String(ot),
      prevPos,
      prevAct: prevAct === null ? null : String(prevAct),
    })),
  )
  const stepRows = st.putSteps.rows()
  for (const { step: s, prev: p } of [...linking.inserts].sort((x, y) => compareStepKeys(x.step, y.step))) {
    stepRows.add(num(s.dataset))
    stepRows.add(s.t)
    stepRows.add(s.pos)
    stepRows.add(s.object)
    stepRows.add(num(s.ot))
    stepRows.add(num(s.act))
    stepRows.add(s.te === null ? null : s.te - s.t)
    stepRows.add(s.kin)
    addPrevColumns(stepRows, s, p)
  }
  stepRows.end()
  for (const { step: s, prev: p } of [...linking.relinks].sort((x, y) => compareStepKeys(x.step, y.step))) {
    const values: SqlValue[] = []
    addPrevColumns({ add: (v) => values.push(v) }, s, p)
    st.relink.run(...values, num(s.dataset), s.t, s.pos, s.object)
  }
  const kept = st.putMemberships.rows()
  for (const c of [...changes.memberships].sort(compareMembershipKeys)) {
    const b = activityId(c.b)
    if (c.after === 0) st.dropMembership.run(c.object, num(c.a), b)
    else {
      kept.add(c.object)
      kept.add(num(c.a))
      kept.add(b)
      kept.add(c.after)
    }
  }
  kept.end()
  if (memory !== undefined) remember(memory.memory, linking, tails, memberships, changes.memberships)
  for (const d of changes.deltas) {
    const key = [num(d.key.dataset), num(d.key.ot), num(d.key.a), activityId(d.key.b)] as const
    const row = st.aggregate.get(...key)
    const stored: DfAggregate | undefined =
      row === undefined ? undefined : { ...row, durations: JSON.parse(row.durations) as DurationStats, waiting: JSON.parse(row.waiting) as DurationStats }
    const agg = applyDelta(stored, d)
    // The steps are written above: an emptied kept end is read back from the edge's couples as they now are.
    for (const r of edgeRefills(d.key, agg)) refillAggregate(agg, r, st.edgeValues[r.stats][r.end].all(...key, r.count))
    if (isEmptyAggregate(agg)) st.dropAggregate.run(...key)
    else
      st.putAggregate.run(
        ...key,
        agg.events,
        agg.objects,
        agg.total,
        agg.starts,
        agg.ends,
        agg.couples,
        JSON.stringify(agg.durations),
        JSON.stringify(agg.waiting),
      )
  }
}
