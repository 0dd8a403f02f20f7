/**
 * The object-centric analysis reads on the PostgreSQL read models (performance, variants, type
 * relations; definitions in docs/analysis.md), for PostgresReadModelQuery. Each (object, event)
 * pair is a step of the directly-follows read model (`rm_df_steps`), which holds the object's
 * previous event in its whole trace, so no statement has to order a trace to find it:
 * - performance: the window's steps of the chosen types with their predecessors' ready time and
 *   log position, read in chunks of whole events along (t, pos) (`rm_df_steps_by_time`, one
 *   event's steps consecutive) and folded into PerformanceFold (src/core/analysis-rows.ts), as on SQLite and MongoDB;
 * - variants: each object's activities in (t, pos) order (`array_agg`), grouped by sequence in SQL;
 * - type relations: per (event, object type) then per (activity, object type) from the E2O rows,
 *   and O2O per (source type, qualifier, target type).
 */
import {
  type ActivityTypeRow,
  assembleActivityTypes,
  assemblePerformance,
  type EventInputs,
  PerformanceFold,
  pageVariants,
  sortO2o,
  type VariantRow,
} from '../../core/analysis-rows.js'
import type { PerformanceFilter, TimeWindow, TypeRelations, VariantsFilter, VariantsPage } from '../../ports/read-model-query.js'
import type { O2oTypeRelation, PerformanceActivity } from '../../schemas/analysis.js'
import { AS_OF_SQL, qualifierOfStored, SqlParams, type SqlReader, statsSql, windowConditions } from './postgres-reads.js'

/** Steps read per statement of the performance read. */
const PERFORMANCE_CHUNK_STEPS = 10_000

/** A step with its object's type and own id and its predecessor's log position and ready time (`end_timestamp`, else `timestamp`; epoch ms), null for a first step. */
interface StepSqlRow {
  pos: number
  act: string
  t: number
  ot: string
  ext: string
  p_pos: number | null
  p_r: number | null
}

/** Conditions over `rm_df_steps s` of a window on event time (epoch ms `t`), binding into `p`. */
function stepWindow(window: TimeWindow, p: SqlParams): string[] {
  return [
    ...(window.from === undefined ? [] : [`s.t >= ${p.add(Date.parse(window.from))}`]),
    ...(window.to === undefined ? [] : [`s.t < ${p.add(Date.parse(window.to))}`]),
  ]
}

/**
 * Object-centric performance (ReadModelQuery.performance) of dataset `datasetId`.
 * @param chunkSteps steps read per statement (a whole number ≥ 1; tests lower it so that chunks split events).
 * @returns activities sorted by name; empty when the window holds no event of the chosen types.
 */
export async function postgresPerformance(
  sql: SqlReader,
  datasetId: string,
  filter: PerformanceFilter,
  chunkSteps = PERFORMANCE_CHUNK_STEPS,
): Promise<PerformanceActivity[]> {
  const fold = new PerformanceFold(filter.slowest)
  let event: EventInputs & { inputs: EventInputs['inputs'][number][] } = { event_id: '', act: '', t: 0, position: -1, inputs: [] }
  /** Adds steps of whole events, in (t, pos) order, to the fold. */
  const add = (rows: readonly StepSqlRow[]): void => {
    for (const r of rows) {
      if (r.pos !== event.position) {
        if (event.inputs.length > 0) fold.add(event)
        event = { event_id: '', act: r.act, t: r.t, position: r.pos, inputs: [] }
      }
      event.inputs.push({ ot: r.ot, ext: r.ext, p_r: r.p_r, p_pos: r.p_pos })
    }
  }
  const types = filter.objectTypes ?? []
  /** The steps of the window's events after event (t, pos) (all: null), at most `limit`, along rm_df_steps_by_time. */
  const read = (after: { t: number; pos: number } | null, only: boolean, limit: number): Promise<StepSqlRow[]> => {
    const p = new SqlParams()
    const conditions = [`s.dataset_id = ${p.add(datasetId)}`, `s.pos <= ${AS_OF_SQL}`, ...stepWindow(filter, p)]
    if (types.length > 0) conditions.push(`s.object_type = ANY(${p.add([...types])}::text[])`)
    if (after !== null) conditions.push(`(s.t, s.pos) ${only ? '=' : '>'} (${p.add(after.t)}, ${p.add(after.pos)})`)
    return sql.rows<StepSqlRow>(
      `SELECT s.pos, s.activity AS act, s.t, s.object_type AS ot, o.external_id AS ext, s.prev_pos AS p_pos, COALESCE(s.prev_te, s.prev_t) AS p_r
       FROM ocelog.rm_df_steps s JOIN ocelog.rm_objects o ON o.dataset_id = s.dataset_id AND o.object_id = s.object_id
       WHERE ${conditions.join(' AND ')} ORDER BY s.t, s.pos LIMIT ${p.add(limit)}`,
      p.values,
    )
  }
  let after: { t: number; pos: number } | null = null
  for (;;) {
    const rows = await read(after, false, chunkSteps)
    const last = rows[rows.length - 1]
    if (rows.length < chunkSteps || last === undefined) {
      add(rows)
      break
    }
    // A full chunk may end inside an event: its whole events now, the last one read again (alone when it fills the chunk).
    const whole = rows.filter((r) => r.pos !== last.pos)
    const end = whole[whole.length - 1]
    if (end === undefined) {
      add(await read(last, true, Number.MAX_SAFE_INTEGER))
      after = last
    } else {
      add(whole)
      after = end
    }
  }
  if (event.inputs.length > 0) fold.add(event)
  const rows = fold.rows()
  // The slowest events' ids, by (timestamp, position) (rm_events_by_time).
  const slow = rows.filter((r) => r.kind === 'slowest')
  if (slow.length > 0) {
    const ids = await sql.rows<{ position: number; event_id: string }>(
      `SELECT e.position, e.event_id FROM ocelog.rm_events e JOIN unnest($2::text[], $3::bigint[]) AS k (timestamp, position)
         ON e.timestamp = k.timestamp AND e.position = k.position
       WHERE e.dataset_id = $1`,
      [datasetId, slow.map((r) => new Date(r.c1).toISOString()), slow.map((r) => r.c3)],
    )
    const byPosition = new Map(ids.map((r) => [r.position, r.event_id]))
    for (const r of slow) r.eid = byPosition.get(r.c3) ?? ''
  }
  return assemblePerformance(rows)
}

/** A page of trace variants (ReadModelQuery.variants) of dataset `datasetId`: grouped in SQL, sorted and paged by pageVariants. */
export async function postgresVariants(sql: SqlReader, datasetId: string, filter: VariantsFilter): Promise<VariantsPage> {
  const p = new SqlParams()
  const d = p.add(datasetId)
  const conditions = [`s.dataset_id = ${d}`, `s.object_type = ${p.add(filter.objectType)}`, `s.pos <= ${AS_OF_SQL}`, ...stepWindow(filter, p)]
  const rows = await sql.rows<VariantRow & { examples: string[] | null }>(
    `WITH tr AS (
       SELECT s.object_id, array_agg(s.activity ORDER BY s.t, s.pos) AS seq, MAX(s.t) - MIN(s.t) AS d
       FROM ocelog.rm_df_steps s WHERE ${conditions.join(' AND ')} GROUP BY s.object_id
     ),
     ranked AS (
       SELECT tr.seq, o.external_id AS ext, tr.d, ROW_NUMBER() OVER (PARTITION BY tr.seq ORDER BY o.external_id COLLATE "C") AS rn
       FROM tr JOIN ocelog.rm_objects o ON o.dataset_id = ${d} AND o.object_id = tr.object_id
     )
     SELECT seq, array_agg(ext) FILTER (WHERE rn <= 3) AS examples, ${statsSql('d', 'c')} FROM ranked GROUP BY seq`,
    p.values,
  )
  return pageVariants(
    rows.map((r) => ({ ...r, examples: r.examples ?? [] })),
    filter.limit,
    filter.after,
  )
}

/** Type relations (ReadModelQuery.typeRelations) of dataset `datasetId`. */
export async function postgresTypeRelations(sql: SqlReader, datasetId: string, window: TimeWindow): Promise<TypeRelations> {
  const p = new SqlParams()
  const conditions = [`e.dataset_id = ${p.add(datasetId)}`, `e.position <= ${AS_OF_SQL}`, ...windowConditions('e.timestamp', window, p)]
  const [activityTypes, o2o] = await Promise.all([
    sql.rows<ActivityTypeRow>(
      `SELECT act, ot, COUNT(*) AS events, SUM(k) AS e2o, MIN(n) AS n_min, SUM(n) AS n_sum, MAX(n) AS n_max
       FROM (SELECT e.event_type AS act, l.object_type AS ot, COUNT(DISTINCT l.object_id) AS n, COUNT(*) AS k
             FROM ocelog.rm_events e JOIN ocelog.rm_event_objects l ON l.position = e.position
             WHERE ${conditions.join(' AND ')} GROUP BY e.event_id, e.event_type, l.object_type) x
       GROUP BY act, ot`,
      p.values,
    ),
    sql.rows<Omit<O2oTypeRelation, 'qualifier'> & { qualifier: string }>(
      `SELECT s.type AS source_type, r.qualifier, r.target_type, COUNT(*) AS relationships
       FROM ocelog.rm_object_relationships r JOIN ocelog.rm_objects s ON s.dataset_id = r.dataset_id AND s.object_id = r.object_id
       WHERE r.dataset_id = $1 AND r.position <= ${AS_OF_SQL} GROUP BY s.type, r.qualifier, r.target_type`,
      [datasetId],
    ),
  ])
  return {
    activity_object_types: assembleActivityTypes(activityTypes),
    o2o: sortO2o(o2o.map((r) => ({ ...r, qualifier: qualifierOfStored(r.qualifier) }))),
  }
}
