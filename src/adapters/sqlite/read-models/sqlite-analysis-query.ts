/**
 * The object-centric analysis reads on the embedded SQLite read models (performance, variants,
 * type relations; definitions in docs/analysis.md), for SqliteReadModelQuery, the way the process
 * map is computed (sqlite-read-model-query.ts): the E2O rows needed are copied, one per (object,
 * event) pair, in per-object (timestamp, log position) order into a numbered TEMP table, and each
 * row finds its object's previous row by number.
 * - Variants and type relations are grouped in the engine (`median()` of SQLite's percentile
 *   extension); JavaScript receives a few rows per variant and (activity, object type).
 * - Performance streams the window's pairs in log position order (one event's rows together) into
 *   PerformanceFold (src/core/analysis-rows.ts), which keeps the activities' durations for the exact
 *   medians, never the events: faster than grouping every measure in SQL.
 */
import type { PerformanceFilter, TimeWindow, TypeRelations, VariantsFilter, VariantsPage } from '../../../ports/read-model-query.js'
import {
  type ActivityTypeRow,
  assembleActivityTypes,
  assemblePerformance,
  type EventInput,
  type EventInputs,
  PerformanceFold,
  pageVariants,
  sortO2o,
  type VariantRow,
} from '../../../core/analysis-rows.js'
import type { O2oTypeRelation, PerformanceActivity } from '../../../schemas/analysis.js'
import type { SqliteDatabase } from '../log/database.js'
import { EVENT_E2O_ROWS, epochMsOf, idTextSql, nameSql, namesById, objectEventsSql, qualifierOf } from './read-models-database.js'

/**
 * The scratch table, in the connection's TEMP schema: one row per (object, event) pair, numbered
 * `i` in per-object order (object row id, timestamp, log position), so that an object's previous
 * event is row `i - 1` with the same `oid`. `eid` is the event's log position, `t` its timestamp
 * and `r` the time its output was ready (`end_timestamp`, else `timestamp`), in epoch ms.
 * Filled and emptied within one synchronous call.
 */
const ANALYSIS_SEQUENCE = `CREATE TEMP TABLE IF NOT EXISTS analysis_sequence (
  i INTEGER PRIMARY KEY, oid INTEGER NOT NULL, ot TEXT NOT NULL, ext TEXT NOT NULL, eid INTEGER NOT NULL, act INTEGER NOT NULL,
  t INTEGER NOT NULL, r INTEGER NOT NULL)`

interface SequenceOptions {
  /** Only rows in the window (`from` ≤ t < `to`); else every row before `to` of the objects with an event in the window. */
  windowRowsOnly: boolean
  types: number
  window: TimeWindow
}

/**
 * SQL that fills the scratch table: the (object, event) pairs of the dataset's objects (of the asked
 * types), one each, from the directly-follows steps by object (objectEventsSql, read-models-database.ts).
 */
function fillSql(o: SequenceOptions): string {
  const conditions = ['o.did = @did']
  if (o.window.to !== undefined) conditions.push('l.time < @to')
  if (o.windowRowsOnly) {
    if (o.window.from !== undefined) conditions.push('l.time >= @from')
  } else if (o.window.from !== undefined || o.window.to !== undefined) {
    // Whole traces (up to `to`) of the objects with an event in the window.
    const inWindow = ['w.did = @did', ...(o.window.from === undefined ? [] : ['w.time >= @from']), ...(o.window.to === undefined ? [] : ['w.time < @to'])]
    conditions.push(`o.rid IN (SELECT wl.rid FROM rm_events w CROSS JOIN rm_event_objects wl ON ${EVENT_E2O_ROWS('wl', 'w')} WHERE ${inWindow.join(' AND ')})`)
  }
  if (o.types > 0) conditions.push('o.type IN (SELECT value FROM json_each(@types))')
  const where = conditions.join(' AND ')
  const columns = 'o.rid AS oid, o.type AS ot, o.external_id AS ext, l.position AS eid, e.event_type_id AS act, l.time AS t, coalesce(e.end_time, l.time) AS r'
  return `INSERT INTO temp.analysis_sequence (oid, ot, ext, eid, act, t, r)
  SELECT ${columns} FROM rm_objects o CROSS JOIN (${objectEventsSql('true')}) l ON l.rid = o.rid CROSS JOIN rm_events e ON e.position = l.position
  WHERE ${where}
  ORDER BY oid, t, eid`
}

/** A statistics row's columns over the expression `d`: count, sum, min, max, median. */
const stats = (d: string) => `COUNT(*) AS c3, SUM(${d}) AS c4, MIN(${d}) AS c5, MAX(${d}) AS c6, median(${d}) AS c7`

/**
 * SQL of the (object, event) pairs in the window, each with its object's previous event (`p_eid`, its
 * log position, and `p_r`, its ready time; null when none) found by row number, in log position
 * order, so that one event's rows are consecutive.
 */
function pairsInWindowSql(window: TimeWindow): string {
  const inWindow = [...(window.from === undefined ? [] : ['s.t >= @from']), ...(window.to === undefined ? [] : ['s.t < @to'])]
  return `SELECT s.eid, s.act, s.t, s.ot, s.ext, p.eid AS p_eid, p.r AS p_r
  FROM temp.analysis_sequence s LEFT JOIN temp.analysis_sequence p ON p.i = s.i - 1 AND p.oid = s.oid
  ${inWindow.length === 0 ? '' : `WHERE ${inWindow.join(' AND ')}`}
  ORDER BY s.eid`
}

type PairRow = [eid: number, act: number, t: number, ot: string, ext: string, p_eid: number | null, p_r: number | null]

/**
 * The events of `rows` (consecutive per event), each with its inputs and its type's name (`names`,
 * by id); `event_id` is left empty (filled for the slowest only).
 */
function* eventsOf(rows: Iterable<PairRow>, names: ReadonlyMap<number, string>): Generator<EventInputs> {
  let current: { event_id: string; act: string; t: number; position: number; inputs: EventInput[] } | null = null
  for (const [eid, act, t, ot, ext, p_eid, p_r] of rows) {
    if (current === null || current.position !== eid) {
      if (current !== null) yield current
      current = { event_id: '', act: names.get(act) ?? '', t, position: eid, inputs: [] }
    }
    current.inputs.push({ ot, ext, p_r, p_pos: p_eid })
  }
  if (current !== null) yield current
}

/**
 * SQL of the variant rows over the filled scratch table (window rows of one type): each object's
 * activity sequence and duration (last − first timestamp), grouped by sequence, with the first
 * VARIANT_EXAMPLES object ids of each by code-unit order.
 */
const VARIANTS_SQL = `
WITH tr AS MATERIALIZED (
  SELECT oid, ext, json_group_array(act ORDER BY i) AS seq, MAX(t) - MIN(t) AS d FROM temp.analysis_sequence GROUP BY oid
),
ranked AS (SELECT seq, ext, d, ROW_NUMBER() OVER (PARTITION BY seq ORDER BY ext) AS rn FROM tr)
SELECT seq, json_group_array(ext ORDER BY ext) FILTER (WHERE rn <= 3) AS examples, ${stats('d')} FROM ranked GROUP BY seq`

/** Binds a window's bounds and the dataset's row id. */
function bind(did: number, window: TimeWindow, types: readonly string[] = []): Record<string, string | number> {
  const params: Record<string, string | number> = { did }
  if (window.from !== undefined) params.from = epochMsOf(window.from)
  if (window.to !== undefined) params.to = epochMsOf(window.to)
  if (types.length > 0) params.types = JSON.stringify(types)
  return params
}

/** Fills the scratch table, runs `read` and empties it again, all synchronously (no other call on the connection sees its rows). */
function withSequence<T>(db: SqliteDatabase, options: SequenceOptions, params: Record<string, string | number>, read: () => T): T {
  db.exec(ANALYSIS_SEQUENCE)
  try {
    db.prepare(fillSql(options)).run(params)
    return read()
  } finally {
    db.exec('DELETE FROM temp.analysis_sequence')
  }
}

/**
 * Object-centric performance (ReadModelQuery.performance) of dataset row `did`.
 * @returns activities sorted by name; empty when the window holds no event of the chosen types.
 */
export function sqlitePerformance(db: SqliteDatabase, did: number, filter: PerformanceFilter): PerformanceActivity[] {
  const types = filter.objectTypes ?? []
  const window: TimeWindow = { ...(filter.from === undefined ? {} : { from: filter.from }), ...(filter.to === undefined ? {} : { to: filter.to }) }
  const params = bind(did, window, types)
  const rows = withSequence(db, { windowRowsOnly: false, types: types.length, window }, params, () => {
    const { types: _types, ...bounds } = params
    const fold = new PerformanceFold(filter.slowest)
    const pairs = db.prepare(pairsInWindowSql(window)).raw().iterate(bounds) as IterableIterator<PairRow>
    for (const e of eventsOf(pairs, namesById(db))) fold.add(e)
    return fold.rows()
  })
  // The slowest events' ids, by log position.
  const slow = rows.filter((r) => r.kind === 'slowest')
  if (slow.length > 0) {
    const ids = new Map(
      (
        db
          .prepare(`SELECT position, ${idTextSql('event_id')} AS event_id FROM rm_events WHERE position IN (SELECT value FROM json_each(?))`)
          .all(JSON.stringify(slow.map((r) => r.c3))) as {
          position: number
          event_id: string
        }[]
      ).map((r) => [r.position, r.event_id]),
    )
    for (const r of slow) r.eid = ids.get(r.c3) ?? ''
  }
  return assemblePerformance(rows)
}

/** A page of trace variants (ReadModelQuery.variants) of dataset row `did`. */
export function sqliteVariants(db: SqliteDatabase, did: number, filter: VariantsFilter): VariantsPage {
  const window: TimeWindow = { ...(filter.from === undefined ? {} : { from: filter.from }), ...(filter.to === undefined ? {} : { to: filter.to }) }
  const params = bind(did, window, [filter.objectType])
  return withSequence(db, { windowRowsOnly: true, types: 1, window }, params, () => {
    const names = namesById(db)
    const rows = db.prepare(VARIANTS_SQL).all() as { seq: string; examples: string | null; c3: number; c4: number; c5: number; c6: number; c7: number | null }[]
    const variants: VariantRow[] = rows.map((r) => ({
      ...r,
      seq: (JSON.parse(r.seq) as number[]).map((act) => names.get(act) ?? ''),
      examples: r.examples === null ? [] : (JSON.parse(r.examples) as string[]),
    }))
    return pageVariants(variants, filter.limit, filter.after)
  })
}

/** Type relations (ReadModelQuery.typeRelations) of dataset row `did`. */
export function sqliteTypeRelations(db: SqliteDatabase, did: number, window: TimeWindow): TypeRelations {
  const params = bind(did, window)
  const conditions = ['e.did = @did', ...(window.from === undefined ? [] : ['e.time >= @from']), ...(window.to === undefined ? [] : ['e.time < @to'])]
  const activityTypes = db
    .prepare(
      `SELECT ${nameSql('aid')} AS act, ot, COUNT(*) AS events, SUM(k) AS e2o, MIN(n) AS n_min, SUM(n) AS n_sum, MAX(n) AS n_max
       FROM (SELECT e.event_type_id AS aid, o.type AS ot, COUNT(DISTINCT l.rid) AS n, COUNT(*) AS k
             FROM rm_events e CROSS JOIN rm_event_objects l ON ${EVENT_E2O_ROWS('l', 'e')} CROSS JOIN rm_objects o ON o.rid = l.rid
             WHERE ${conditions.join(' AND ')} GROUP BY e.position, o.type)
       GROUP BY aid, ot`,
    )
    .all(params) as ActivityTypeRow[]
  const o2o = db
    .prepare(
      `SELECT s.type AS source_type, ${nameSql('r.qualifier_id')} AS qualifier, t.type AS target_type, COUNT(*) AS relationships
       FROM rm_objects s CROSS JOIN rm_object_relationships r ON r.rid = s.rid CROSS JOIN rm_objects t ON t.rid = r.target_rid
       WHERE s.did = @did GROUP BY s.type, r.qualifier_id, t.type`,
    )
    .all({ did }) as (Omit<O2oTypeRelation, 'qualifier'> & { qualifier: string })[]
  return {
    activity_object_types: assembleActivityTypes(activityTypes),
    o2o: sortO2o(o2o.map((r) => ({ ...r, qualifier: qualifierOf(r.qualifier) }))),
  }
}
