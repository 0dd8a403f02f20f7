/**
 * The process map on the embedded SQLite file, from the directly-follows read model
 * (docs/process-map.md#the-directly-follows-read-model; tables in sqlite-df-writes.ts):
 * - all time: the stored aggregates, one row per activity and edge of the asked types, whatever
 *   the number of events (medians as src/core/duration-stats.ts keeps them);
 * - a window: the steps whose event lies in it, read along the steps' key (dataset, time), each
 *   with its predecessor, grouped in SQL; exact, medians with `median()` of SQLite's percentile
 *   extension (enabled in better-sqlite3's build; https://sqlite.org/percentile.html).
 */
import type { DurationStats } from '../../core/duration-stats.js'
import type { ProcessMapAnswer, ProcessMapFilter } from '../../ports/read-model-query.js'
import { assembleProcessMap, fillWindowEnds, type MapRow, type NamedAggregate, rowsOfAggregates } from '../../read/process-map-rows.js'
import type { SqliteDatabase } from './database.js'
import { epochMsOf } from './read-models-database.js'
import { type AggregateRow, NO_ACTIVITY } from './sqlite-df-writes.js'

/** An aggregate row with its key's name ids. */
type AggregateSqlRow = AggregateRow & { ot: number; a: number; b: number }

type WindowSqlRow = Omit<MapRow, 'ot' | 'k1' | 'k2'> & { ot: number; k1: number; k2: number }

/**
 * The process map of dataset `did` (rm_datasets) for `filter`.
 * @returns the maps by object type (sorted, assembleProcessMap) and their medians' error bound.
 */
export function sqliteProcessMap(db: SqliteDatabase, did: number, filter: ProcessMapFilter): ProcessMapAnswer {
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
  if (filter.from !== undefined) {
    params.from = epochMsOf(filter.from)
    conditions.push('t >= @from')
  }
  if (filter.to !== undefined) {
    params.to = epochMsOf(filter.to)
    conditions.push('t < @to')
  }
  const where = conditions.join(' AND ')
  // A predecessor is in the window when its time is (it is never after its successor).
  const prevIn = filter.from === undefined ? 'prev_t IS NOT NULL' : 'prev_t >= @from'
  const w = 'CASE WHEN prev_te IS NULL THEN NULL ELSE max(0, t - prev_te) END'
  // Elapsed and waiting times of an edge in one pass (aggregates skip the nulls of steps whose predecessor has no end).
  const sql = `
WITH edges AS MATERIALIZED (
  SELECT ot, prev_act AS k1, act AS k2, COUNT(DISTINCT rid) AS objects, COUNT(DISTINCT prev_pos * 4294967296 + pos) AS couples,
    COUNT(*) AS n, SUM(d) AS d_sum, MIN(d) AS d_min, MAX(d) AS d_max, median(d) AS d_median,
    COUNT(w) AS w_n, SUM(w) AS w_sum, MIN(w) AS w_min, MAX(w) AS w_max, median(w) AS w_median
  FROM (SELECT ot, prev_act, act, rid, prev_pos, pos, t - prev_t AS d, ${w} AS w FROM rm_df_steps WHERE ${where} AND ${prevIn})
  GROUP BY ot, prev_act, act
)
SELECT 'activity' AS kind, ot, act AS k1, 0 AS k2, COUNT(DISTINCT pos) AS c1, COUNT(DISTINCT rid) AS c2, COUNT(*) AS c3,
  SUM(NOT coalesce(${prevIn}, 0)) AS c4, 0 AS c5, 0 AS c6, NULL AS c7
FROM rm_df_steps WHERE ${where} GROUP BY ot, act
UNION ALL
SELECT 'edge', ot, k1, k2, objects, couples, n, d_sum, d_min, d_max, d_median FROM edges
UNION ALL
SELECT 'waiting', ot, k1, k2, 0, 0, w_n, w_sum, w_min, w_max, w_median FROM edges WHERE w_n > 0
UNION ALL
SELECT 'run', ot, act, 0, 0, 0, COUNT(*), SUM(d), MIN(d), MAX(d), median(d)
FROM (SELECT DISTINCT ot, act, pos, te - t AS d FROM rm_df_steps WHERE ${where} AND te IS NOT NULL) GROUP BY ot, act`
  const rows = (db.prepare(sql).all(params) as WindowSqlRow[]).map(
    (r): MapRow => ({ ...r, ot: nameOf(r.ot), k1: nameOf(r.k1), k2: r.kind === 'edge' || r.kind === 'waiting' ? nameOf(r.k2) : '' }),
  )
  fillWindowEnds(rows)
  return { object_types: assembleProcessMap(rows), median_relative_error: 0 }
}
