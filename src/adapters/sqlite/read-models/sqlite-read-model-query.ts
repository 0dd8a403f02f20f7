/**
 * ReadModelQuery adapter on the embedded SQLite file: reads the `rm_*` tables that the projector
 * writes (sqlite-read-model-store.ts), in their narrow layout (read-models-database.ts: integer row
 * ids for datasets and objects, events keyed by log position, times in epoch milliseconds, turned
 * back into ISO 8601 here). Every method filters, sorts, pages and aggregates in SQL; JavaScript
 * only shapes the few rows an answer holds (a page of events, one object, the process map's
 * per-activity and per-edge rows), so memory does not grow with the number of events.
 *
 * The process map (object-centric directly-follows graph, after pm4py's OC-DFG) reads the
 * directly-follows read model (sqlite-df-query.ts).
 */
import { cutPage, nextCursor, probeLimit } from '../../../core/page.js'
import type {
  DatasetCounts,
  EventFilter,
  EventPage,
  ObjectDetail,
  ObjectHistory,
  ObjectHistoryFilter,
  ObjectHistoryPage,
  PerformanceFilter,
  ProcessMapAnswer,
  ProcessMapFilter,
  ReadModelQuery,
  TimeWindow,
  TypeRelations,
  VariantsFilter,
  VariantsPage,
} from '../../../ports/read-model-query.js'
import type { PerformanceActivity } from '../../../schemas/analysis.js'
import type { Properties } from '../../../schemas/api.js'
import type { EventObjectLink, EventView, TypeInfo } from '../../../schemas/process.js'
import { type AttributeTypeRow, withAttributes } from '../../../core/process-map-rows.js'
import type { SqliteDatabase } from '../log/database.js'
import { sqliteProcessMap } from './sqlite-df-query.js'
import { readAuditChain, readAuditChainAt } from './sqlite-audit-chain.js'
import { readDeclaredTypes } from './sqlite-declared-types.js'
import type { DeclaredTypes } from '../../../schemas/read-models.js'
import type { AuditChainEntry } from '../../../schemas/audit.js'
import { sqlitePerformance, sqliteTypeRelations, sqliteVariants } from './sqlite-analysis-query.js'
import { SQLITE } from '../../sql/dialect.js'
import { typesSql } from '../../sql/types-sql.js'
import {
  ALL_CHECKPOINTS_SQL,
  EVENT_E2O_ROWS,
  epochMsOf,
  PROCESS_SCHEMA,
  idTextSql,
  isoOfEpochMs,
  nameIdSql,
  nameSql,
  objectEventsSql,
  qualifierOf,
  storedIdsSql,
} from './read-models-database.js'

/**
 * The answers' `as_of`: the lowest checkpoint of both files (each runner's), 0 when there is none
 * (docs/architecture.md#projection-runners-and-leases: a reader sees the lowest position of the runners it reads).
 */
const AS_OF = `SELECT COALESCE(MIN(position), 0) FROM (${ALL_CHECKPOINTS_SQL})`

/** The types' lists, shared with PostgreSQL. */
const EVENT_TYPES = typesSql(SQLITE, 'rm_event_types')
const OBJECT_TYPES = typesSql(SQLITE, 'rm_object_types')

/** `isoOfEpochMs` of a nullable time column. */
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoOfEpochMs(ms))

/** Conditions and parameters of an events query (filters and the page's start) over `rm_events e`. */
function eventConditions(did: number, datasetId: string, filter: EventFilter): { where: string; params: Record<string, string | number> } {
  const params: Record<string, string | number> = { did }
  /** `condition` when `value` is given, binding it as `@name`. */
  const when = (name: string, value: string | number | undefined, condition: string): string[] => {
    if (value === undefined) return []
    params[name] = value
    return [condition]
  }
  if (filter.after !== undefined) params.afterTime = epochMsOf(filter.after.timestamp)
  const conditions = [
    'e.did = @did',
    ...when('eventType', filter.eventType, `e.event_type_id = ${nameIdSql('@eventType')}`),
    ...when('from', filter.from === undefined ? undefined : epochMsOf(filter.from), 'e.time >= @from'),
    ...when('to', filter.to === undefined ? undefined : epochMsOf(filter.to), 'e.time < @to'),
    ...when('afterPosition', filter.after?.position, '(e.time, e.position) > (@afterTime, @afterPosition)'),
  ]
  if (filter.objectId !== undefined) {
    // The object's events through its E2O rows; without a type, every object of that id (one per type at most).
    params.objectId = filter.objectId
    params.dataset = datasetId
    const type = filter.objectType === undefined ? 'o.type IN (SELECT name FROM rm_object_types WHERE dataset_id = @dataset)' : 'o.type = @objectType'
    if (filter.objectType !== undefined) params.objectType = filter.objectType
    const objects = `rid IN (SELECT o.rid FROM rm_objects o WHERE o.did = @did AND ${type} AND o.external_id = @objectId)`
    conditions.push(`e.position IN (SELECT position FROM (${objectEventsSql(objects)}))`)
  } else if (filter.objectType !== undefined) {
    params.objectType = filter.objectType
    conditions.push(`EXISTS (SELECT 1 FROM rm_event_objects l JOIN rm_objects o ON o.rid = l.rid WHERE ${EVENT_E2O_ROWS('l', 'e')} AND o.type = @objectType)`)
  }
  return { where: conditions.join(' AND '), params }
}

interface EventSqlRow {
  event_id: string
  event_type: string
  time: number
  end_time: number | null
  properties: string
  position: number
}

type TypeSqlRow = Parameters<typeof withAttributes>[0][number]

export class SqliteReadModelQuery implements ReadModelQuery {
  constructor(private readonly db: SqliteDatabase) {}

  /**
   * The dataset's row id (the same in both files), or null when no runner has written anything of it
   * yet: from the entities file, else from the process file when its runner is ahead.
   */
  private did(datasetId: string): number | null {
    const did = this.db
      .prepare<[{ d: string }], number>(
        `SELECT did FROM main.rm_datasets WHERE dataset_id = @d UNION ALL SELECT did FROM ${PROCESS_SCHEMA}.rm_datasets WHERE dataset_id = @d LIMIT 1`,
      )
      .pluck()
      .get({ d: datasetId })
    return did ?? null
  }

  async asOf(): Promise<number> {
    return this.db.prepare<[], number>(AS_OF).pluck().get() ?? 0
  }

  async summary(datasetId: string): Promise<DatasetCounts> {
    const counts = this.db
      .prepare(
        `SELECT
          (SELECT COUNT(*) FROM rm_events WHERE did = @did) AS events,
          (SELECT COUNT(*) FROM rm_objects WHERE did = @did) AS objects,
          (SELECT COUNT(*) FROM rm_event_types WHERE dataset_id = @d) AS event_types,
          (SELECT COUNT(*) FROM rm_object_types WHERE dataset_id = @d) AS object_types,
          (SELECT TOTAL(e2o) FROM rm_events WHERE did = @did) AS e2o,
          (SELECT MIN(time) FROM rm_events WHERE did = @did) AS first_time,
          (SELECT MAX(time) FROM rm_events WHERE did = @did) AS last_time`,
      )
      .get({ d: datasetId, did: this.did(datasetId) ?? -1 }) as Omit<DatasetCounts, 'first_event_time' | 'last_event_time'> & {
      first_time: number | null
      last_time: number | null
    }
    const { first_time, last_time, ...rest } = counts
    return { ...rest, e2o: Number(rest.e2o), first_event_time: isoOrNull(first_time), last_event_time: isoOrNull(last_time) }
  }

  async eventTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = this.db.prepare<[string], TypeSqlRow>(EVENT_TYPES.list).all(datasetId)
    const attributes = this.db
      .prepare(
        `SELECT ${nameSql('e.event_type_id')} AS owner, j.key AS name, j.type AS type
         FROM rm_events e, json_each(e.properties) j WHERE e.did = ? GROUP BY e.event_type_id, j.key, j.type`,
      )
      .all(this.did(datasetId) ?? -1) as AttributeTypeRow[]
    return withAttributes(types, attributes)
  }

  async objectTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = this.db.prepare<[string], TypeSqlRow>(OBJECT_TYPES.list).all(datasetId)
    const attributes = this.db
      .prepare(
        `SELECT o.type AS owner, j.key AS name, j.type AS type
         FROM rm_objects o JOIN rm_object_changes c ON c.rid = o.rid, json_each(c.attributes) j
         WHERE o.did = ? GROUP BY o.type, j.key, j.type`,
      )
      .all(this.did(datasetId) ?? -1) as AttributeTypeRow[]
    return withAttributes(types, attributes)
  }

  async declaredTypes(datasetId: string): Promise<DeclaredTypes> {
    return readDeclaredTypes(this.db, datasetId)
  }

  async object(datasetId: string, type: string, id: string, limit: number): Promise<ObjectDetail | null> {
    const row = this.db
      .prepare(
        `SELECT rid, ${idTextSql('object_id')} AS object_id, type, external_id, properties, created_at, updated_at FROM rm_objects
         WHERE did = ? AND type = ? AND external_id = ?`,
      )
      .get(this.did(datasetId) ?? -1, type, id) as
      | { rid: number; object_id: string; type: string; external_id: string; properties: string; created_at: number; updated_at: number }
      | undefined
    if (row === undefined) return null
    // The latest `limit` changes (and one more, to tell whether older ones were left out), newest first.
    const history = this.db
      .prepare('SELECT time, position, attributes FROM rm_object_changes WHERE rid = ? ORDER BY position DESC LIMIT ?')
      .all(row.rid, probeLimit(limit)) as { time: number; position: number; attributes: string }[]
    const trace = this.db
      .prepare(
        `SELECT ${idTextSql('e.event_id')} AS event_id, ${nameSql('e.event_type_id')} AS event_type, e.time, e.end_time, e.position,
           (SELECT json_group_array(${nameSql('q.qualifier_id')}) FROM rm_event_objects q WHERE ${EVENT_E2O_ROWS('q', 'e')} AND q.rid = l.rid) AS qualifiers
         FROM (${objectEventsSql('rid = @rid')}) l CROSS JOIN rm_events e ON e.position = l.position
         ORDER BY l.time, l.position LIMIT @limit`,
      )
      .all({ rid: row.rid, limit: probeLimit(limit) }) as (Omit<EventSqlRow, 'properties'> & { qualifiers: string })[]
    const related = this.db
      .prepare(
        `SELECT ${idTextSql('o.object_id')} AS object_id, o.type, o.external_id AS id, r.shared_events
         FROM (SELECT other.rid, COUNT(DISTINCT other.position) AS shared_events
               FROM (${objectEventsSql('rid = @rid')}) me
                 CROSS JOIN rm_events e ON e.position = me.position
                 CROSS JOIN rm_event_objects other ON ${EVENT_E2O_ROWS('other', 'e')} AND other.rid <> me.rid
               GROUP BY other.rid) AS r
           JOIN rm_objects o ON o.rid = r.rid
         ORDER BY r.shared_events DESC, o.type, o.external_id LIMIT @limit`,
      )
      .all({ rid: row.rid, limit: probeLimit(limit) }) as { object_id: string; type: string; id: string; shared_events: number }[]
    const relationships = this.db
      .prepare(
        `SELECT ${idTextSql('t.object_id')} AS object_id, t.type, t.external_id AS id, ${nameSql('r.qualifier_id')} AS qualifier, r.time
         FROM rm_object_relationships r JOIN rm_objects t ON t.rid = r.target_rid
         WHERE r.rid = ? ORDER BY t.type, t.external_id, qualifier LIMIT ?`,
      )
      .all(row.rid, probeLimit(limit)) as { object_id: string; type: string; id: string; qualifier: string; time: number }[]
    // Relationships of other objects to this one (rm_object_relationships_by_target).
    const incoming = this.db
      .prepare(
        `SELECT ${idTextSql('s.object_id')} AS object_id, s.type, s.external_id AS id, ${nameSql('r.qualifier_id')} AS qualifier, r.time
         FROM rm_object_relationships r JOIN rm_objects s ON s.rid = r.rid
         WHERE r.target_rid = ? ORDER BY s.type, s.external_id, qualifier LIMIT ?`,
      )
      .all(row.rid, probeLimit(limit)) as { object_id: string; type: string; id: string; qualifier: string; time: number }[]
    return {
      object: {
        object_id: row.object_id,
        type: row.type,
        id: row.external_id,
        attributes: JSON.parse(row.properties) as Properties,
        created_at: isoOfEpochMs(row.created_at),
        updated_at: isoOfEpochMs(row.updated_at),
      },
      attribute_history: cutPage(history, limit)
        .items.reverse()
        .map((h) => ({ time: isoOfEpochMs(h.time), position: h.position, attributes: JSON.parse(h.attributes) as Properties })),
      attribute_history_truncated: cutPage(history, limit).truncated,
      trace: cutPage(trace, limit).items.map((t) => ({
        event_id: t.event_id,
        event_type: t.event_type,
        timestamp: isoOfEpochMs(t.time),
        end_timestamp: isoOrNull(t.end_time),
        qualifiers: [...new Set((JSON.parse(t.qualifiers) as string[]).map(qualifierOf).filter((q) => q !== null))].sort(),
        position: t.position,
      })),
      trace_truncated: cutPage(trace, limit).truncated,
      related: cutPage(related, limit).items,
      related_truncated: cutPage(related, limit).truncated,
      relationships: cutPage(relationships, limit).items.map((r) => ({ ...r, qualifier: qualifierOf(r.qualifier), time: isoOfEpochMs(r.time) })),
      relationships_truncated: cutPage(relationships, limit).truncated,
      incoming_relationships: cutPage(incoming, limit).items.map((r) => ({ ...r, qualifier: qualifierOf(r.qualifier), time: isoOfEpochMs(r.time) })),
      incoming_relationships_truncated: cutPage(incoming, limit).truncated,
    }
  }

  async events(datasetId: string, filter: EventFilter): Promise<EventPage> {
    const did = this.did(datasetId)
    if (did === null) return { events: [], next: null, total: filter.count === false ? null : 0 }
    const { where, params } = eventConditions(did, datasetId, filter)
    const { after: _after, ...everyPage } = filter
    const counted = eventConditions(did, datasetId, everyPage)
    const total =
      filter.count === false
        ? null
        : (this.db.prepare(`SELECT count(*) AS total FROM rm_events e WHERE ${counted.where}`).get(counted.params) as { total: number }).total
    const rows = this.db
      .prepare(
        `SELECT ${idTextSql('e.event_id')} AS event_id, ${nameSql('e.event_type_id')} AS event_type, e.time, e.end_time, e.properties, e.position FROM rm_events e
         WHERE ${where} ORDER BY e.time, e.position LIMIT @limit`,
      )
      .all({ ...params, limit: probeLimit(filter.limit) }) as EventSqlRow[]
    const cut = cutPage(rows, filter.limit)
    const page = cut.items
    const links = new Map<number, EventObjectLink[]>()
    if (page.length > 0) {
      const linkRows = this.db
        .prepare(
          `SELECT e.position, ${idTextSql('o.object_id')} AS object_id, o.type, o.external_id AS id, ${nameSql('l.qualifier_id')} AS qualifier
           FROM rm_events e CROSS JOIN rm_event_objects l ON ${EVENT_E2O_ROWS('l', 'e')} JOIN rm_objects o ON o.rid = l.rid
           WHERE e.position IN (SELECT value FROM json_each(?))
           ORDER BY e.position, o.type, o.external_id, qualifier`,
        )
        .all(JSON.stringify(page.map((e) => e.position))) as (EventObjectLink & { position: number; qualifier: string })[]
      for (const { position, qualifier, ...link } of linkRows) {
        const list = links.get(position) ?? []
        list.push({ ...link, qualifier: qualifierOf(qualifier) })
        links.set(position, list)
      }
    }
    const events: EventView[] = page.map((e) => ({
      event_id: e.event_id,
      event_type: e.event_type,
      timestamp: isoOfEpochMs(e.time),
      end_timestamp: isoOrNull(e.end_time),
      properties: JSON.parse(e.properties) as Properties,
      position: e.position,
      objects: links.get(e.position) ?? [],
    }))
    return {
      events,
      next: nextCursor(cut, (last) => ({ timestamp: isoOfEpochMs(last.time), position: last.position })),
      total,
    }
  }

  async processMap(datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer> {
    const did = this.did(datasetId)
    return did === null ? { object_types: [], median_relative_error: 0 } : sqliteProcessMap(this.db, did, filter)
  }

  async performance(datasetId: string, filter: PerformanceFilter): Promise<PerformanceActivity[]> {
    const did = this.did(datasetId)
    return did === null ? [] : sqlitePerformance(this.db, did, filter)
  }

  async variants(datasetId: string, filter: VariantsFilter): Promise<VariantsPage> {
    const did = this.did(datasetId)
    return did === null ? { objects: 0, total: 0, variants: [], next: null } : sqliteVariants(this.db, did, filter)
  }

  async typeRelations(datasetId: string, window: TimeWindow): Promise<TypeRelations> {
    const did = this.did(datasetId)
    return did === null ? { activity_object_types: [], o2o: [] } : sqliteTypeRelations(this.db, did, window)
  }

  async objectHistories(datasetId: string, page: ObjectHistoryFilter): Promise<ObjectHistoryPage> {
    const conditions = ['did = @did']
    const params: Record<string, string | number> = { did: this.did(datasetId) ?? -1, limit: probeLimit(page.limit) }
    if (page.after !== undefined) {
      conditions.push('(type, external_id) > (@type, @id)')
      params.type = page.after.type
      params.id = page.after.id
    }
    if (page.objectIds !== undefined) {
      conditions.push(`object_id IN (${storedIdsSql('@only')})`)
      params.only = JSON.stringify(page.objectIds)
    }
    const rows = this.db
      .prepare(
        `SELECT rid, ${idTextSql('object_id')} AS object_id, type, external_id AS id FROM rm_objects WHERE ${conditions.join(' AND ')} ORDER BY type, external_id LIMIT @limit`,
      )
      .all(params) as (Omit<ObjectHistory, 'changes' | 'relationships'> & { rid: number })[]
    const cut = cutPage(rows, page.limit)
    const kept = cut.items
    const objects: ObjectHistory[] = kept.map(({ rid: _rid, ...o }) => ({ ...o, changes: [], relationships: [] }))
    const byRid = new Map(kept.map((o, i) => [o.rid, objects[i] as ObjectHistory]))
    const rids = JSON.stringify([...byRid.keys()])
    const changes = this.db
      .prepare('SELECT rid, position, time, attributes FROM rm_object_changes WHERE rid IN (SELECT value FROM json_each(?)) ORDER BY rid, position')
      .all(rids) as { rid: number; position: number; time: number; attributes: string }[]
    for (const c of changes) {
      byRid.get(c.rid)?.changes.push({ position: c.position, time: isoOfEpochMs(c.time), attributes: JSON.parse(c.attributes) as Properties })
    }
    const relationships = this.db
      .prepare(
        `SELECT r.rid, ${idTextSql('t.object_id')} AS target_object_id, t.type, t.external_id AS id, ${nameSql('r.qualifier_id')} AS qualifier
         FROM rm_object_relationships r JOIN rm_objects t ON t.rid = r.target_rid
         WHERE r.rid IN (SELECT value FROM json_each(?)) ORDER BY r.rid, t.object_id, qualifier`,
      )
      .all(rids) as { rid: number; target_object_id: string; type: string; id: string; qualifier: string }[]
    for (const r of relationships) {
      byRid.get(r.rid)?.relationships.push({ object_id: r.target_object_id, type: r.type, id: r.id, qualifier: qualifierOf(r.qualifier) })
    }
    return { objects, next: nextCursor(cutPage(rows, page.limit), (last) => ({ type: last.type, id: last.id })) }
  }

  async sharedObjectIds(datasetId: string): Promise<string[]> {
    return this.db
      .prepare<[number], string>('SELECT external_id FROM rm_objects WHERE did = ? GROUP BY external_id HAVING COUNT(*) > 1 ORDER BY external_id')
      .pluck()
      .all(this.did(datasetId) ?? -1)
  }

  async objectsWithIds(datasetId: string, ids: readonly string[]): Promise<{ object_id: string; type: string; id: string }[]> {
    if (ids.length === 0) return []
    return this.db
      .prepare(
        `SELECT ${idTextSql('object_id')} AS object_id, type, external_id AS id FROM rm_objects
         WHERE did = ? AND external_id IN (SELECT value FROM json_each(?)) ORDER BY type, external_id`,
      )
      .all(this.did(datasetId) ?? -1, JSON.stringify(ids)) as { object_id: string; type: string; id: string }[]
  }

  async consistentRead<T>(fn: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction) return fn()
    // Deferred: the snapshot is taken at the first read and held until COMMIT (WAL mode).
    this.db.exec('BEGIN')
    try {
      return await fn()
    } finally {
      if (this.db.inTransaction) this.db.exec('COMMIT')
    }
  }

  async auditChain(datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]> {
    return readAuditChain(this.db, datasetId, after, limit)
  }

  async auditChainAt(datasetId: string, position: number | null): Promise<AuditChainEntry | null> {
    return readAuditChainAt(this.db, datasetId, position)
  }

  async close(): Promise<void> {}
}
