/**
 * ReadModelQuery adapter on the embedded SQLite file: reads the `rm_*` tables that the projector
 * writes (sqlite-read-model-store.ts). Every method filters, sorts, pages and aggregates in SQL;
 * JavaScript only shapes the few rows an answer holds (a page of events, one object, the process
 * map's per-activity and per-edge rows), so memory does not grow with the number of events.
 *
 * The process map (object-centric directly-follows graph, after pm4py's OC-DFG) is computed in the
 * engine in two statements: the E2O rows in the window are copied, in per-object order (timestamp,
 * log position), into a numbered TEMP table of narrow rows; activities, edges, start and end
 * activities and the statistics of run, elapsed and waiting times are grouped from it, each row
 * joined to its object's next row by number, the medians with `ROW_NUMBER`/`COUNT` windows.
 * Durations are whole milliseconds (`unixepoch(…, 'subsec')`).
 */
import type {
  DatasetCounts,
  EventFilter,
  EventPage,
  ObjectDetail,
  ObjectHistory,
  ObjectHistoryPage,
  ProcessMapFilter,
  ReadModelQuery,
  TimeWindow,
} from '../../ports/read-model-query.js'
import type { Properties } from '../../schemas/api.js'
import type { EventObjectLink, EventView, ObjectTypeMap, TypeInfo } from '../../schemas/process.js'
import { type AttributeTypeRow, assembleProcessMap, type MapRow, withAttributes } from '../../read/process-map-rows.js'
import type { SqliteDatabase } from './database.js'

/** E2O rows without a qualifier hold '' (see sqlite-read-model-store.ts). */
const NO_QUALIFIER = ''

/** Milliseconds since the epoch of a UTC ISO 8601 column, exact for millisecond timestamps. */
const ms = (column: string) => `CAST(round(unixepoch(${column}, 'subsec') * 1000) AS INTEGER)`

/**
 * The exact median of `d` per (ot, k1, k2), as an extra column of the rows of `source`: `med_part`
 * is `d` on the one or two middle rows of each group (ordered by `d`) and null elsewhere, so that
 * `AVG(med_part)` per group is the median (of an even count: the mean of the two middle values).
 */
function withMedianPart(source: string, columns: string): string {
  return `SELECT ${columns}, CASE WHEN rn IN ((n + 1) / 2, (n + 2) / 2) THEN d END AS med_part
    FROM (SELECT ${columns}, ROW_NUMBER() OVER w AS rn, COUNT(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
          FROM ${source} WINDOW w AS (PARTITION BY ot, k1, k2 ORDER BY d))`
}

/** Statistics columns (count, sum, min, max, median) of `d` over rows made by withMedianPart. */
const STATS = 'COUNT(*), SUM(d), MIN(d), MAX(d), AVG(med_part)'

/**
 * The process map's scratch table, in the connection's TEMP schema (never in the file): one row per
 * E2O row in the window, numbered `i` in per-object order (object, timestamp, log position, event),
 * so that an object's next E2O row is `i + 1` with the same object: a rowid lookup instead of a
 * window function over wide rows. Times are whole milliseconds since the epoch; `eid` is the
 * event's rowid. Filled and emptied within one synchronous call, so callers never see its rows.
 */
const SEQUENCE_TABLE = `CREATE TEMP TABLE IF NOT EXISTS process_map_sequence (
  i INTEGER PRIMARY KEY, ot TEXT NOT NULL, oid TEXT NOT NULL, eid INTEGER NOT NULL, act TEXT NOT NULL, t INTEGER NOT NULL, te INTEGER)`

/**
 * SQL that fills the scratch table from the read models: each object's E2O rows in the window, in
 * (timestamp, position, event) order, read straight from the index rm_event_objects_by_object.
 */
function sequenceSql(window: TimeWindow, typeCount: number): string {
  const conditions = ['eo.dataset_id = @dataset']
  if (window.from !== undefined) conditions.push('eo.event_time >= @from')
  if (window.to !== undefined) conditions.push('eo.event_time < @to')
  if (typeCount > 0) conditions.push(`eo.object_type IN (SELECT value FROM json_each(@types))`)
  return `INSERT INTO temp.process_map_sequence (ot, oid, eid, act, t, te)
  SELECT eo.object_type, eo.object_id, e.rowid, e.event_type, ${ms('eo.event_time')},
    CASE WHEN e.end_timestamp IS NULL THEN NULL ELSE ${ms('e.end_timestamp')} END
  FROM rm_event_objects eo INDEXED BY rm_event_objects_by_object
    CROSS JOIN rm_events e ON e.dataset_id = eo.dataset_id AND e.event_id = eo.event_id
  WHERE ${conditions.join(' AND ')}
  ORDER BY eo.object_id, eo.event_time, eo.position, eo.event_id`
}

/**
 * SQL of the process map over the filled scratch table: one row per kind and key (see MapRow).
 * A second qualifier of one (event, object) pair gives a row whose next row is the same event;
 * that row is no edge and counts once among the pairs.
 */
const PROCESS_MAP_SQL = `
WITH seq AS (
  SELECT s.ot, s.oid, s.eid, s.act, s.t, s.te, p.i IS NULL AS first, n.i IS NULL AS last,
    n.eid AS n_eid, n.act AS n_act, n.t AS n_t, n.eid IS s.eid AS dup
  FROM temp.process_map_sequence s
    LEFT JOIN temp.process_map_sequence p ON p.i = s.i - 1 AND p.oid = s.oid
    LEFT JOIN temp.process_map_sequence n ON n.i = s.i + 1 AND n.oid = s.oid
),
occ AS MATERIALIZED (
  SELECT ot, act AS k1, n_act AS k2, oid, eid, n_eid, n_t - t AS d, CASE WHEN te IS NULL THEN NULL ELSE max(0, n_t - te) END AS w
  FROM seq WHERE n_eid IS NOT NULL AND NOT dup
),
waits AS (SELECT ot, k1, k2, w AS d FROM occ WHERE w IS NOT NULL),
run AS (SELECT DISTINCT ot, act AS k1, '' AS k2, eid, te - t AS d FROM temp.process_map_sequence WHERE te IS NOT NULL)
SELECT 'activity' AS kind, ot, act AS k1, '' AS k2, COUNT(DISTINCT eid) AS c1, COUNT(DISTINCT oid) AS c2, SUM(NOT dup) AS c3,
  SUM(first) AS c4, SUM(last) AS c5, 0 AS c6, NULL AS c7
FROM seq GROUP BY ot, act
UNION ALL
SELECT 'edge', ot, k1, k2, COUNT(DISTINCT oid), COUNT(DISTINCT eid * 4294967296 + n_eid), ${STATS}
FROM (${withMedianPart('occ', 'ot, k1, k2, oid, eid, n_eid, d')}) GROUP BY ot, k1, k2
UNION ALL
SELECT 'waiting', ot, k1, k2, 0, 0, ${STATS} FROM (${withMedianPart('waits', 'ot, k1, k2, d')}) GROUP BY ot, k1, k2
UNION ALL
SELECT 'run', ot, k1, k2, 0, 0, ${STATS} FROM (${withMedianPart('run', 'ot, k1, k2, d')}) GROUP BY ot, k1, k2`

/** Conditions and parameters of an events query (filters and the page's start). */
function eventConditions(datasetId: string, filter: EventFilter): { where: string; params: Record<string, string | number> } {
  const params: Record<string, string | number> = { dataset: datasetId }
  /** `condition` when `value` is given, binding it as `@name`. */
  const when = (name: string, value: string | number | undefined, condition: string): string[] => {
    if (value === undefined) return []
    params[name] = value
    return [condition]
  }
  if (filter.after !== undefined) params.afterTimestamp = filter.after.timestamp
  const conditions = [
    'e.dataset_id = @dataset',
    ...when('eventType', filter.eventType, 'e.event_type = @eventType'),
    ...when('from', filter.from, 'e.timestamp >= @from'),
    ...when('to', filter.to, 'e.timestamp < @to'),
    ...when('afterPosition', filter.after?.position, '(e.timestamp, e.position) > (@afterTimestamp, @afterPosition)'),
  ]
  const link = [...when('objectId', filter.objectId, 'l.external_id = @objectId'), ...when('objectType', filter.objectType, 'l.object_type = @objectType')]
  if (link.length > 0) {
    conditions.push(`EXISTS (SELECT 1 FROM rm_event_objects l WHERE l.dataset_id = e.dataset_id AND l.event_id = e.event_id AND ${link.join(' AND ')})`)
  }
  return { where: conditions.join(' AND '), params }
}

interface EventSqlRow {
  event_id: string
  event_type: string
  timestamp: string
  end_timestamp: string | null
  properties: string
  position: number
}

type TypeSqlRow = Parameters<typeof withAttributes>[0][number]

export class SqliteReadModelQuery implements ReadModelQuery {
  constructor(private readonly db: SqliteDatabase) {}

  async asOf(): Promise<number> {
    const row = this.db.prepare('SELECT MIN(position) AS p FROM rm_checkpoints').get() as { p: number | null }
    return row.p ?? 0
  }

  async summary(datasetId: string): Promise<DatasetCounts> {
    const row = this.db
      .prepare(
        `SELECT
          (SELECT COUNT(*) FROM rm_events WHERE dataset_id = @d) AS events,
          (SELECT COUNT(*) FROM rm_objects WHERE dataset_id = @d) AS objects,
          (SELECT COUNT(*) FROM rm_event_types WHERE dataset_id = @d) AS event_types,
          (SELECT COUNT(*) FROM rm_object_types WHERE dataset_id = @d) AS object_types,
          (SELECT COUNT(*) FROM rm_event_objects WHERE dataset_id = @d) AS e2o,
          (SELECT MIN(timestamp) FROM rm_events WHERE dataset_id = @d) AS first_event_time,
          (SELECT MAX(timestamp) FROM rm_events WHERE dataset_id = @d) AS last_event_time`,
      )
      .get({ d: datasetId }) as DatasetCounts
    return row
  }

  async eventTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = this.db
      .prepare('SELECT name, count, first_seen_at, last_seen_at FROM rm_event_types WHERE dataset_id = ? ORDER BY name')
      .all(datasetId) as TypeSqlRow[]
    const attributes = this.db
      .prepare(
        `SELECT e.event_type AS owner, j.key AS name, j.type AS type
         FROM rm_events e, json_each(e.properties) j WHERE e.dataset_id = ? GROUP BY e.event_type, j.key, j.type`,
      )
      .all(datasetId) as AttributeTypeRow[]
    return withAttributes(types, attributes)
  }

  async objectTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = this.db
      .prepare('SELECT name, count, first_seen_at, last_seen_at FROM rm_object_types WHERE dataset_id = ? ORDER BY name')
      .all(datasetId) as TypeSqlRow[]
    const attributes = this.db
      .prepare(
        `SELECT o.type AS owner, j.key AS name, j.type AS type
         FROM rm_object_changes c JOIN rm_objects o ON o.dataset_id = c.dataset_id AND o.object_id = c.object_id, json_each(c.attributes) j
         WHERE c.dataset_id = ? GROUP BY o.type, j.key, j.type`,
      )
      .all(datasetId) as AttributeTypeRow[]
    return withAttributes(types, attributes)
  }

  async object(datasetId: string, type: string, id: string, limit: number): Promise<ObjectDetail | null> {
    const row = this.db
      .prepare('SELECT object_id, type, external_id, properties, created_at, updated_at FROM rm_objects WHERE dataset_id = ? AND type = ? AND external_id = ?')
      .get(datasetId, type, id) as
      | { object_id: string; type: string; external_id: string; properties: string; created_at: string; updated_at: string }
      | undefined
    if (row === undefined) return null
    const history = this.db
      .prepare('SELECT time, position, attributes FROM rm_object_changes WHERE dataset_id = ? AND object_id = ? ORDER BY position')
      .all(datasetId, row.object_id) as { time: string; position: number; attributes: string }[]
    const trace = this.db
      .prepare(
        `SELECT e.event_id, e.event_type, e.timestamp, e.end_timestamp, e.position, json_group_array(l.qualifier) AS qualifiers
         FROM rm_event_objects l JOIN rm_events e ON e.dataset_id = l.dataset_id AND e.event_id = l.event_id
         WHERE l.dataset_id = ? AND l.object_id = ?
         GROUP BY e.event_id ORDER BY e.timestamp, e.position LIMIT ?`,
      )
      .all(datasetId, row.object_id, limit + 1) as (Omit<EventSqlRow, 'properties'> & { qualifiers: string })[]
    const related = this.db
      .prepare(
        `SELECT o.object_id, o.object_type AS type, o.external_id AS id, COUNT(DISTINCT o.event_id) AS shared_events
         FROM rm_event_objects me JOIN rm_event_objects o ON o.dataset_id = me.dataset_id AND o.event_id = me.event_id AND o.object_id <> me.object_id
         WHERE me.dataset_id = ? AND me.object_id = ?
         GROUP BY o.object_id ORDER BY shared_events DESC, type, id LIMIT ?`,
      )
      .all(datasetId, row.object_id, limit + 1) as { object_id: string; type: string; id: string; shared_events: number }[]
    const relationships = this.db
      .prepare(
        `SELECT target_object_id AS object_id, target_type AS type, target_external_id AS id, qualifier, time FROM rm_object_relationships
         WHERE dataset_id = ? AND object_id = ? ORDER BY target_type, target_external_id, qualifier LIMIT ?`,
      )
      .all(datasetId, row.object_id, limit + 1) as { object_id: string; type: string; id: string; qualifier: string; time: string }[]
    return {
      object: {
        object_id: row.object_id,
        type: row.type,
        id: row.external_id,
        attributes: JSON.parse(row.properties) as Properties,
        created_at: row.created_at,
        updated_at: row.updated_at,
      },
      attribute_history: history.map((h) => ({ time: h.time, position: h.position, attributes: JSON.parse(h.attributes) as Properties })),
      trace: trace.slice(0, limit).map((t) => ({
        event_id: t.event_id,
        event_type: t.event_type,
        timestamp: t.timestamp,
        end_timestamp: t.end_timestamp,
        qualifiers: [...new Set((JSON.parse(t.qualifiers) as string[]).filter((q) => q !== NO_QUALIFIER))].sort(),
        position: t.position,
      })),
      trace_truncated: trace.length > limit,
      related: related.slice(0, limit),
      related_truncated: related.length > limit,
      relationships: relationships.slice(0, limit).map((r) => ({ ...r, qualifier: r.qualifier === NO_QUALIFIER ? null : r.qualifier })),
      relationships_truncated: relationships.length > limit,
    }
  }

  async events(datasetId: string, filter: EventFilter): Promise<EventPage> {
    const { where, params } = eventConditions(datasetId, filter)
    const rows = this.db
      .prepare(
        `SELECT e.event_id, e.event_type, e.timestamp, e.end_timestamp, e.properties, e.position FROM rm_events e
         WHERE ${where} ORDER BY e.timestamp, e.position LIMIT @limit`,
      )
      .all({ ...params, limit: filter.limit + 1 }) as EventSqlRow[]
    const page = rows.slice(0, filter.limit)
    const links = new Map<string, EventObjectLink[]>()
    if (page.length > 0) {
      const linkRows = this.db
        .prepare(
          `SELECT event_id, object_id, object_type AS type, external_id AS id, qualifier FROM rm_event_objects
           WHERE dataset_id = ? AND event_id IN (SELECT value FROM json_each(?))
           ORDER BY event_id, object_type, external_id, qualifier`,
        )
        .all(datasetId, JSON.stringify(page.map((e) => e.event_id))) as (EventObjectLink & { event_id: string; qualifier: string })[]
      for (const { event_id, qualifier, ...link } of linkRows) {
        const list = links.get(event_id) ?? []
        list.push({ ...link, qualifier: qualifier === NO_QUALIFIER ? null : qualifier })
        links.set(event_id, list)
      }
    }
    const events: EventView[] = page.map((e) => ({
      event_id: e.event_id,
      event_type: e.event_type,
      timestamp: e.timestamp,
      end_timestamp: e.end_timestamp,
      properties: JSON.parse(e.properties) as Properties,
      position: e.position,
      objects: links.get(e.event_id) ?? [],
    }))
    const last = page[page.length - 1]
    return { events, next: rows.length > filter.limit && last !== undefined ? { timestamp: last.timestamp, position: last.position } : null }
  }

  async processMap(datasetId: string, filter: ProcessMapFilter): Promise<ObjectTypeMap[]> {
    const types = filter.objectTypes ?? []
    const params: Record<string, string> = { dataset: datasetId }
    if (filter.from !== undefined) params.from = filter.from
    if (filter.to !== undefined) params.to = filter.to
    if (types.length > 0) params.types = JSON.stringify(types)
    // Synchronous from fill to empty: no other call on this connection sees the scratch rows.
    this.db.exec(SEQUENCE_TABLE)
    try {
      this.db.prepare(sequenceSql(filter, types.length)).run(params)
      return assembleProcessMap(this.db.prepare(PROCESS_MAP_SQL).all() as MapRow[])
    } finally {
      this.db.exec('DELETE FROM temp.process_map_sequence')
    }
  }

  async objectHistories(datasetId: string, page: { after?: string; limit: number }): Promise<ObjectHistoryPage> {
    const rows = this.db
      .prepare('SELECT object_id, type, external_id AS id FROM rm_objects WHERE dataset_id = ? AND object_id > ? ORDER BY object_id LIMIT ?')
      .all(datasetId, page.after ?? '', page.limit + 1) as Omit<ObjectHistory, 'changes'>[]
    const objects: ObjectHistory[] = rows.slice(0, page.limit).map((o) => ({ ...o, changes: [], relationships: [] }))
    const byId = new Map(objects.map((o) => [o.object_id, o]))
    const changes = this.db
      .prepare(
        `SELECT object_id, position, time, attributes FROM rm_object_changes
         WHERE dataset_id = ? AND object_id IN (SELECT value FROM json_each(?)) ORDER BY object_id, position`,
      )
      .all(datasetId, JSON.stringify([...byId.keys()])) as { object_id: string; position: number; time: string; attributes: string }[]
    for (const c of changes) byId.get(c.object_id)?.changes.push({ position: c.position, time: c.time, attributes: JSON.parse(c.attributes) as Properties })
    const relationships = this.db
      .prepare(
        `SELECT object_id, target_object_id, qualifier FROM rm_object_relationships
         WHERE dataset_id = ? AND object_id IN (SELECT value FROM json_each(?)) ORDER BY object_id, target_object_id, qualifier`,
      )
      .all(datasetId, JSON.stringify([...byId.keys()])) as { object_id: string; target_object_id: string; qualifier: string }[]
    for (const r of relationships) {
      byId.get(r.object_id)?.relationships.push({ object_id: r.target_object_id, qualifier: r.qualifier === NO_QUALIFIER ? null : r.qualifier })
    }
    const last = objects[objects.length - 1]
    return { objects, next: rows.length > page.limit && last !== undefined ? last.object_id : null }
  }

  async close(): Promise<void> {}
}
