/**
 * ReadModelQuery adapter on PostgreSQL (docs/read-models.md#the-read-models-on-postgresql): reads
 * the `rm_*` tables of schema `ocelog` (read-models-schema.ts) that PostgresReadModelStore writes.
 * Every method filters, sorts, pages and aggregates in SQL, with parameterised statements only;
 * JavaScript shapes the few rows an answer holds. Names and ids are ordered as UTF-8 bytes
 * (`COLLATE "C"`), as the port asks, whatever the database's collation.
 *
 * The process map reads the directly-follows read model (postgres-df-query.ts); performance,
 * variants and type relations are in postgres-analysis-query.ts; the audit chain in
 * postgres-audit-chain-query.ts. `consistentRead` runs its function's reads on one connection in
 * a REPEATABLE READ, READ ONLY transaction (one snapshot), found through AsyncLocalStorage, so
 * other calls on the same object meanwhile still use the pool.
 */
import { cutPage, nextCursor, probeLimit } from '../../core/page.js'
import { AsyncLocalStorage } from 'node:async_hooks'
import type pg from 'pg'
import { groupDeclaredTypes } from '../../core/declared-types.js'
import type { DeclaredTypes } from '../../schemas/read-models.js'
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
} from '../../ports/read-model-query.js'
import type { AuditChainEntry } from '../../schemas/audit.js'
import type { PerformanceActivity } from '../../schemas/analysis.js'
import type { Properties } from '../../schemas/api.js'
import type { EventObjectLink, EventView, ObjectRelationship, TypeInfo } from '../../schemas/process.js'
import { type AttributeTypeRow, compareText, withAttributes } from '../../core/process-map-rows.js'
import { declaredTypesSql } from '../sql/declared-types-sql.js'
import { POSTGRES } from '../sql/dialect.js'
import { typesSql } from '../sql/types-sql.js'
import { inTransaction } from './connection.js'
import { postgresPerformance, postgresTypeRelations, postgresVariants } from './postgres-analysis-query.js'
import { readAuditChain, readAuditChainAt } from './postgres-audit-chain-query.js'
import { postgresProcessMap } from './postgres-df-query.js'
import { AS_OF_SQL, qualifierOfStored, type SerialClient, SqlParams, type SqlReader, sqlReader, windowConditions } from './postgres-reads.js'

/**
 * SQL of a JSON value's type name (`json_typeof`) as SQLite's `json_each.type` names it, the names
 * withAttributes reads (src/core/process-map-rows.ts): `boolean` as `true`, `number` as `real`.
 */
const attributeTypeSql = (value: string): string =>
  `CASE json_typeof(${value}) WHEN 'boolean' THEN 'true' WHEN 'number' THEN 'real' ELSE json_typeof(${value}) END`

/** The declared types' reads (shared with SQLite). */
const DECLARED_TYPES = declaredTypesSql(POSTGRES)

/** The types' lists (shared with SQLite). */
const EVENT_TYPES = typesSql(POSTGRES, 'rm_event_types')
const OBJECT_TYPES = typesSql(POSTGRES, 'rm_object_types')

type TypeRow = Parameters<typeof withAttributes>[0][number]

interface EventSqlRow {
  event_id: string
  event_type: string
  timestamp: string
  end_timestamp: string | null
  properties: Properties
  position: number
}

/** A relationship row as stored, its qualifier '' when none was sent. */
type StoredRelationship = Omit<ObjectRelationship, 'qualifier'> & { qualifier: string }

/** Conditions over `rm_events e` of an events filter (without its page's start), binding into `p`. */
function eventConditions(datasetId: string, filter: EventFilter, p: SqlParams): string[] {
  const d = p.add(datasetId)
  const conditions = [`e.dataset_id = ${d}`, `e.position <= ${AS_OF_SQL}`, ...windowConditions('e.timestamp', filter, p)]
  if (filter.eventType !== undefined) conditions.push(`e.event_type = ${p.add(filter.eventType)}`)
  if (filter.objectId !== undefined) {
    // The events of the objects of that own id (one per type at most), through their E2O rows (rm_event_objects_by_object).
    const type = filter.objectType === undefined ? '' : ` AND o.type = ${p.add(filter.objectType)}`
    conditions.push(
      `e.event_id IN (SELECT l.event_id FROM ocelog.rm_event_objects l WHERE l.dataset_id = ${d} AND l.object_id IN
        (SELECT o.object_id FROM ocelog.rm_objects o WHERE o.dataset_id = ${d} AND o.external_id = ${p.add(filter.objectId)}${type}))`,
    )
  } else if (filter.objectType !== undefined) {
    conditions.push(`EXISTS (SELECT 1 FROM ocelog.rm_event_objects l WHERE l.position = e.position AND l.object_type = ${p.add(filter.objectType)})`)
  }
  return conditions
}

export class PostgresReadModelQuery implements ReadModelQuery {
  /** The connection of the consistent read the current call runs in, if any. */
  private readonly snapshot = new AsyncLocalStorage<SerialClient>()
  private readonly sql: SqlReader
  /** What byteOrder found, once it has asked. */
  private collate: Promise<string> | undefined

  /** @param pool the pool on POSTGRES_URL (connection.ts), its `search_path` whatever it is: every table is named in schema `ocelog`. */
  constructor(private readonly pool: pg.Pool) {
    this.sql = sqlReader(() => this.snapshot.getStore() ?? this.pool)
  }

  /** The rows of `text` (`$n` bound to `values`), on this call's connection (see consistentRead). */
  private rows<R extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<R[]> {
    return this.sql.rows<R>(text, values)
  }

  async asOf(): Promise<number> {
    const [row] = await this.rows<{ p: number }>(`SELECT ${AS_OF_SQL} AS p`, [])
    return row?.p ?? 0
  }

  async summary(datasetId: string): Promise<DatasetCounts> {
    const [row] = await this.rows<DatasetCounts>(
      `SELECT
        (SELECT COUNT(*) FROM ocelog.rm_events WHERE dataset_id = $1) AS events,
        (SELECT COUNT(*) FROM ocelog.rm_objects WHERE dataset_id = $1) AS objects,
        (SELECT COUNT(*) FROM ocelog.rm_event_types WHERE dataset_id = $1) AS event_types,
        (SELECT COUNT(*) FROM ocelog.rm_object_types WHERE dataset_id = $1) AS object_types,
        (SELECT COUNT(*) FROM ocelog.rm_event_objects WHERE dataset_id = $1) AS e2o,
        (SELECT MIN(timestamp) FROM ocelog.rm_events WHERE dataset_id = $1) AS first_event_time,
        (SELECT MAX(timestamp) FROM ocelog.rm_events WHERE dataset_id = $1) AS last_event_time`,
      [datasetId],
    )
    if (row === undefined) throw new Error('a SELECT without FROM gave no row')
    return row
  }

  async declaredTypes(datasetId: string): Promise<DeclaredTypes> {
    const types = await this.sql.rows<{ kind: string; name: string }>(DECLARED_TYPES.types, [datasetId])
    const attributes = await this.sql.rows<{ kind: string; type_name: string; name: string; type: string }>(DECLARED_TYPES.attributes, [datasetId])
    return groupDeclaredTypes(types, attributes)
  }

  async eventTypes(datasetId: string): Promise<TypeInfo[]> {
    return this.typeInfos(EVENT_TYPES.list, datasetId, 'e.event_type', 'ocelog.rm_events e, json_each(e.properties) j WHERE e.dataset_id = $1')
  }

  async objectTypes(datasetId: string): Promise<TypeInfo[]> {
    return this.typeInfos(
      OBJECT_TYPES.list,
      datasetId,
      'o.type',
      `ocelog.rm_object_changes c JOIN ocelog.rm_objects o ON o.dataset_id = c.dataset_id AND o.object_id = c.object_id, json_each(c.attributes) j
       WHERE c.dataset_id = $1`,
    )
  }

  /**
   * The types that `list` reads (TypesSql.list of rm_event_types or rm_object_types) by name, each with the attributes seen
   * on it: the keys `j.key` and value types `j.value` of the rows `from` gives (a FROM clause and
   * its WHERE, `$1` the dataset), grouped by `owner` (the type's name).
   */
  private async typeInfos(list: string, datasetId: string, owner: string, from: string): Promise<TypeInfo[]> {
    const [types, attributes] = await Promise.all([
      this.rows<TypeRow>(list, [datasetId]),
      this.rows<AttributeTypeRow>(`SELECT ${owner} AS owner, j.key AS name, ${attributeTypeSql('j.value')} AS type FROM ${from} GROUP BY 1, 2, 3`, [datasetId]),
    ])
    return withAttributes(types, attributes)
  }

  async object(datasetId: string, type: string, id: string, limit: number): Promise<ObjectDetail | null> {
    const [row] = await this.rows<{ object_id: string; type: string; external_id: string; properties: Properties; created_at: string; updated_at: string }>(
      `SELECT object_id, type, external_id, properties, created_at, updated_at FROM ocelog.rm_objects
       WHERE dataset_id = $1 AND type = $2 AND external_id = $3 AND first_position <= ${AS_OF_SQL}`,
      [datasetId, type, id],
    )
    if (row === undefined) return null
    const mine = [datasetId, row.object_id, probeLimit(limit)]
    const [history, trace, related, relationships, incoming] = await Promise.all([
      // The latest `limit` changes (and one more, to tell whether older ones were left out), newest first.
      this.rows<{ time: string; position: number; attributes: Properties }>(
        `SELECT time, position, attributes FROM ocelog.rm_object_changes WHERE dataset_id = $1 AND object_id = $2 AND position <= ${AS_OF_SQL}
         ORDER BY position DESC LIMIT $3`,
        mine,
      ),
      // Its events (rm_event_objects_by_object), each once with its qualifiers.
      this.rows<Omit<EventSqlRow, 'properties'> & { qualifiers: string[] }>(
        `SELECT e.event_id, e.event_type, e.timestamp, e.end_timestamp, e.position, l.qualifiers
         FROM (SELECT event_id, MIN(event_time) AS event_time, MIN(position) AS position, array_agg(qualifier) AS qualifiers
               FROM ocelog.rm_event_objects WHERE dataset_id = $1 AND object_id = $2 AND position <= ${AS_OF_SQL}
               GROUP BY event_id ORDER BY event_time, position LIMIT $3) l
           JOIN ocelog.rm_events e ON e.dataset_id = $1 AND e.event_id = l.event_id
         ORDER BY e.timestamp, e.position`,
        mine,
      ),
      this.rows<{ object_id: string; type: string; id: string; shared_events: number }>(
        `SELECT other.object_id, other.object_type AS type, other.external_id AS id, COUNT(DISTINCT other.event_id) AS shared_events
         FROM ocelog.rm_event_objects me
           JOIN ocelog.rm_event_objects other ON other.position = me.position AND other.object_id <> me.object_id
         WHERE me.dataset_id = $1 AND me.object_id = $2 AND me.position <= ${AS_OF_SQL}
         GROUP BY other.object_id, other.object_type, other.external_id
         ORDER BY shared_events DESC, other.object_type COLLATE "C", other.external_id COLLATE "C" LIMIT $3`,
        mine,
      ),
      this.rows<StoredRelationship>(
        `SELECT target_object_id AS object_id, target_type AS type, target_external_id AS id, qualifier, time FROM ocelog.rm_object_relationships
         WHERE dataset_id = $1 AND object_id = $2 AND position <= ${AS_OF_SQL} ORDER BY target_type COLLATE "C", target_external_id COLLATE "C", qualifier COLLATE "C" LIMIT $3`,
        mine,
      ),
      // Relationships of other objects to this one (rm_object_relationships_by_target).
      this.rows<StoredRelationship>(
        `SELECT r.object_id, s.type, s.external_id AS id, r.qualifier, r.time
         FROM ocelog.rm_object_relationships r JOIN ocelog.rm_objects s ON s.dataset_id = r.dataset_id AND s.object_id = r.object_id
         WHERE r.dataset_id = $1 AND r.target_object_id = $2 AND r.position <= ${AS_OF_SQL} ORDER BY s.type COLLATE "C", s.external_id COLLATE "C", r.qualifier COLLATE "C" LIMIT $3`,
        mine,
      ),
    ])
    const relationship = (r: StoredRelationship): ObjectRelationship => ({ ...r, qualifier: qualifierOfStored(r.qualifier) })
    return {
      object: {
        object_id: row.object_id,
        type: row.type,
        id: row.external_id,
        attributes: row.properties,
        created_at: row.created_at,
        updated_at: row.updated_at,
      },
      attribute_history: cutPage(history, limit)
        .items.reverse()
        .map((h) => ({ time: h.time, position: h.position, attributes: h.attributes })),
      attribute_history_truncated: cutPage(history, limit).truncated,
      trace: cutPage(trace, limit).items.map((t) => ({
        event_id: t.event_id,
        event_type: t.event_type,
        timestamp: t.timestamp,
        end_timestamp: t.end_timestamp,
        qualifiers: [...new Set(t.qualifiers.filter((q) => q !== ''))].sort(compareText),
        position: t.position,
      })),
      trace_truncated: cutPage(trace, limit).truncated,
      related: cutPage(related, limit).items,
      related_truncated: cutPage(related, limit).truncated,
      relationships: cutPage(relationships, limit).items.map(relationship),
      relationships_truncated: cutPage(relationships, limit).truncated,
      incoming_relationships: cutPage(incoming, limit).items.map(relationship),
      incoming_relationships_truncated: cutPage(incoming, limit).truncated,
    }
  }

  async events(datasetId: string, filter: EventFilter): Promise<EventPage> {
    let total: number | null = null
    if (filter.count !== false) {
      // Every page's events: the filter without `after`.
      const counted = new SqlParams()
      const where = eventConditions(datasetId, filter, counted).join(' AND ')
      const [row] = await this.rows<{ n: number }>(`SELECT COUNT(*) AS n FROM ocelog.rm_events e WHERE ${where}`, counted.values)
      total = row?.n ?? 0
    }
    const p = new SqlParams()
    const conditions = eventConditions(datasetId, filter, p)
    if (filter.after !== undefined) conditions.push(`(e.timestamp, e.position) > (${p.add(filter.after.timestamp)}, ${p.add(filter.after.position)})`)
    const rows = await this.rows<EventSqlRow>(
      `SELECT e.event_id, e.event_type, e.timestamp, e.end_timestamp, e.properties, e.position FROM ocelog.rm_events e
       WHERE ${conditions.join(' AND ')} ORDER BY e.timestamp, e.position LIMIT ${p.add(probeLimit(filter.limit))}`,
      p.values,
    )
    const cut = cutPage(rows, filter.limit)
    const page = cut.items
    const links = new Map<string, EventObjectLink[]>()
    if (page.length > 0) {
      const linkRows = await this.rows<Omit<EventObjectLink, 'qualifier'> & { event_id: string; qualifier: string }>(
        `SELECT event_id, object_id, object_type AS type, external_id AS id, qualifier FROM ocelog.rm_event_objects
         WHERE position = ANY($1::bigint[])
         ORDER BY position, object_type COLLATE "C", external_id COLLATE "C", qualifier COLLATE "C"`,
        [page.map((e) => e.position)],
      )
      for (const { event_id, qualifier, ...link } of linkRows) {
        const list = links.get(event_id) ?? []
        list.push({ ...link, qualifier: qualifierOfStored(qualifier) })
        links.set(event_id, list)
      }
    }
    const events: EventView[] = page.map((e) => ({ ...e, objects: links.get(e.event_id) ?? [] }))
    return {
      events,
      next: nextCursor(cut, (last) => ({ timestamp: last.timestamp, position: last.position })),
      total,
    }
  }

  async processMap(datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer> {
    return postgresProcessMap(this.sql, datasetId, filter)
  }

  async performance(datasetId: string, filter: PerformanceFilter): Promise<PerformanceActivity[]> {
    return postgresPerformance(this.sql, datasetId, filter)
  }

  async variants(datasetId: string, filter: VariantsFilter): Promise<VariantsPage> {
    return postgresVariants(this.sql, datasetId, filter)
  }

  async typeRelations(datasetId: string, window: TimeWindow): Promise<TypeRelations> {
    return postgresTypeRelations(this.sql, datasetId, window)
  }

  /**
   * `COLLATE "C"` when the database's own collation is not already the byte order (libc `C` or
   * `POSIX`), else nothing: a key ordered by its own collation can be read along its index
   * (rm_objects_by_type_id), one with COLLATE "C" on another collation must be sorted.
   */
  private async byteOrder(): Promise<string> {
    this.collate ??= this.rows<{ bytes: boolean }>(
      // datlocprovider (libc `c` or ICU `i`) is there from PostgreSQL 15 on; before, every database is libc.
      `SELECT coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c' AND d.datcollate IN ('C', 'POSIX') AS bytes
       FROM pg_database d WHERE d.datname = current_database()`,
      [],
    ).then(
      ([row]) => (row?.bytes === true ? '' : ' COLLATE "C"'),
      (error: unknown) => {
        this.collate = undefined
        throw error
      },
    )
    return this.collate
  }

  async objectHistories(datasetId: string, page: ObjectHistoryFilter): Promise<ObjectHistoryPage> {
    const c = await this.byteOrder()
    const p = new SqlParams()
    const conditions = [`dataset_id = ${p.add(datasetId)}`]
    if (page.after !== undefined) conditions.push(`(type${c}, external_id${c}) > (${p.add(page.after.type)}, ${p.add(page.after.id)})`)
    if (page.objectIds !== undefined) conditions.push(`object_id = ANY(${p.add([...page.objectIds])}::uuid[])`)
    const rows = await this.rows<{ object_id: string; type: string; id: string }>(
      `SELECT object_id, type, external_id AS id FROM ocelog.rm_objects WHERE ${conditions.join(' AND ')}
       ORDER BY type${c}, external_id${c} LIMIT ${p.add(probeLimit(page.limit))}`,
      p.values,
    )
    const objects: ObjectHistory[] = cutPage(rows, page.limit).items.map((o) => ({ ...o, changes: [], relationships: [] }))
    const byId = new Map(objects.map((o) => [o.object_id, o]))
    if (objects.length > 0) {
      const ids = [datasetId, [...byId.keys()]]
      const [changes, relationships] = await Promise.all([
        this.rows<{ object_id: string; position: number; time: string; attributes: Properties }>(
          'SELECT object_id, position, time, attributes FROM ocelog.rm_object_changes WHERE dataset_id = $1 AND object_id = ANY($2::uuid[]) ORDER BY object_id, position',
          ids,
        ),
        this.rows<{ source: string; object_id: string; type: string; id: string; qualifier: string }>(
          `SELECT object_id AS source, target_object_id AS object_id, target_type AS type, target_external_id AS id, qualifier
           FROM ocelog.rm_object_relationships WHERE dataset_id = $1 AND object_id = ANY($2::uuid[])
           ORDER BY object_id, target_object_id, qualifier COLLATE "C"`,
          ids,
        ),
      ])
      for (const { object_id, ...c } of changes) byId.get(object_id)?.changes.push(c)
      for (const { source, qualifier, ...r } of relationships) byId.get(source)?.relationships.push({ ...r, qualifier: qualifierOfStored(qualifier) })
    }
    return { objects, next: nextCursor(cutPage(rows, page.limit), (last) => ({ type: last.type, id: last.id })) }
  }

  async sharedObjectIds(datasetId: string): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      'SELECT external_id AS id FROM ocelog.rm_objects WHERE dataset_id = $1 GROUP BY external_id HAVING COUNT(*) > 1 ORDER BY external_id COLLATE "C"',
      [datasetId],
    )
    return rows.map((r) => r.id)
  }

  async objectsWithIds(datasetId: string, ids: readonly string[]): Promise<{ object_id: string; type: string; id: string }[]> {
    if (ids.length === 0) return []
    return this.rows<{ object_id: string; type: string; id: string }>(
      `SELECT object_id, type, external_id AS id FROM ocelog.rm_objects WHERE dataset_id = $1 AND external_id = ANY($2::text[])
       ORDER BY type COLLATE "C", external_id COLLATE "C"`,
      [datasetId, [...ids]],
    )
  }

  /**
   * Runs `fn` with its reads on one connection, in a REPEATABLE READ, READ ONLY transaction: every
   * read sees the snapshot of the transaction's first statement. Nested calls run inside the outer one;
   * calls outside `fn` meanwhile use the pool.
   */
  async consistentRead<T>(fn: () => Promise<T>): Promise<T> {
    if (this.snapshot.getStore() !== undefined) return fn()
    return inTransaction(this.pool, async (client) => {
      // First in the transaction, so it takes effect before its snapshot.
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
      return this.snapshot.run({ client, tail: Promise.resolve() }, fn)
    })
  }

  async auditChain(datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]> {
    return readAuditChain(this.sql, datasetId, after, limit)
  }

  async auditChainAt(datasetId: string, position: number | null): Promise<AuditChainEntry | null> {
    return readAuditChainAt(this.sql, datasetId, position)
  }

  /** The pool is the caller's to end. */
  async close(): Promise<void> {}
}
