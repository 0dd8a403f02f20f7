/**
 * The process map on PostgreSQL, from the directly-follows read model
 * (docs/read-models.md#the-read-models-on-postgresql; definitions: docs/process-map.md):
 * - all time: the stored aggregates (`rm_df_aggregates`, by its key), one row per activity and
 *   edge of the asked types, whatever the number of events (medians as src/core/duration-stats.ts
 *   keeps them);
 * - a window: the steps whose event lies in it (`rm_df_steps`, index `rm_df_steps_by_time`), each
 *   with its predecessor, grouped in SQL into the MapRow kinds (src/core/process-map-rows.ts) by
 *   three statements; medians exact: `percentile_cont(0.5)`, the mean of the two middle values of
 *   an even count, as SQLite's `median()`.
 */
import { assembleProcessMap, fillWindowEnds, type MapRow, type NamedAggregate, rowsOfAggregates } from '../../core/process-map-rows.js'
import type { ProcessMapAnswer, ProcessMapFilter } from '../../ports/read-model-query.js'
import { AS_OF_SQL, SqlParams, type SqlReader, statsSql } from './postgres-reads.js'

/** A stored aggregate row: its key's names (`b` '' for an activity) and DfAggregate's fields. */
type AggregateSqlRow = Omit<NamedAggregate, 'b'> & { b: string }

type Stats = Pick<MapRow, 'c3' | 'c4' | 'c5' | 'c6' | 'c7'>

/**
 * The process map of dataset `datasetId` for `filter` (ProcessMapFilter: window on event time,
 * object types).
 * @returns the maps by object type (sorted, assembleProcessMap) and the bound on their medians'
 *   relative error (0 in a window, whose medians are exact).
 */
export async function postgresProcessMap(sql: SqlReader, datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer> {
  const p = new SqlParams()
  const conditions = [`dataset_id = ${p.add(datasetId)}`]
  const asked = filter.objectTypes ?? []
  if (asked.length > 0) conditions.push(`object_type = ANY(${p.add([...asked])}::text[])`)
  if (filter.from === undefined && filter.to === undefined) {
    const stored = await sql.rows<AggregateSqlRow>(
      `SELECT object_type AS ot, a, b, events, objects, total, starts, ends, couples, durations, waiting
       FROM ocelog.rm_df_aggregates WHERE ${conditions.join(' AND ')}`,
      p.values,
    )
    const { rows, medianRelativeError } = rowsOfAggregates(stored.map((r): NamedAggregate => ({ ...r, b: r.b === '' ? null : r.b })))
    return { object_types: assembleProcessMap(rows), median_relative_error: medianRelativeError }
  }
  const from = filter.from === undefined ? null : p.add(Date.parse(filter.from))
  conditions.push(`pos <= ${AS_OF_SQL}`)
  if (from !== null) conditions.push(`t >= ${from}`)
  if (filter.to !== undefined) conditions.push(`t < ${p.add(Date.parse(filter.to))}`)
  const where = conditions.join(' AND ')
  // A predecessor is in the window when its time is (it is never after its successor).
  const prevIn = from === null ? 'prev_t IS NOT NULL' : `prev_t >= ${from}`
  const [activities, runs, edges] = await Promise.all([
    sql.rows<{ ot: string; k1: string; c1: number; c2: number; c3: number; c4: number }>(
      `SELECT object_type AS ot, activity AS k1, COUNT(DISTINCT pos) AS c1, COUNT(DISTINCT object_id) AS c2, COUNT(*) AS c3,
         COUNT(*) FILTER (WHERE (${prevIn}) IS NOT TRUE) AS c4
       FROM ocelog.rm_df_steps WHERE ${where} GROUP BY object_type, activity`,
      p.values,
    ),
    // An event's run time once per object type, whatever its number of objects of that type.
    sql.rows<{ ot: string; k1: string } & Stats>(
      `SELECT ot, k1, ${statsSql('d', 'c')}
       FROM (SELECT DISTINCT object_type AS ot, activity AS k1, pos, te - t AS d FROM ocelog.rm_df_steps WHERE ${where} AND te IS NOT NULL) r
       GROUP BY ot, k1`,
      p.values,
    ),
    sql.rows<{ ot: string; k1: string; k2: string; c1: number; c2: number; w3: number; w4: number; w5: number; w6: number; w7: number | null } & Stats>(
      `SELECT object_type AS ot, prev_act AS k1, activity AS k2, COUNT(DISTINCT object_id) AS c1, COUNT(DISTINCT (prev_pos, pos)) AS c2,
         ${statsSql('t - prev_t', 'c')}, ${statsSql('GREATEST(0, t - prev_te)', 'w', 'prev_te IS NOT NULL')}
       FROM ocelog.rm_df_steps WHERE ${where} AND ${prevIn} GROUP BY object_type, prev_act, activity`,
      p.values,
    ),
  ])
  const rows: MapRow[] = []
  for (const a of activities) rows.push({ kind: 'activity', ...a, k2: '', c5: 0, c6: 0, c7: null })
  for (const r of runs) rows.push({ kind: 'run', ...r, k2: '', c1: 0, c2: 0 })
  for (const { w3, w4, w5, w6, w7, ...e } of edges) {
    rows.push({ kind: 'edge', ...e })
    if (w3 > 0) rows.push({ kind: 'waiting', ot: e.ot, k1: e.k1, k2: e.k2, c1: 0, c2: 0, c3: w3, c4: w4, c5: w5, c6: w6, c7: w7 })
  }
  fillWindowEnds(rows)
  return { object_types: assembleProcessMap(rows), median_relative_error: 0 }
}
