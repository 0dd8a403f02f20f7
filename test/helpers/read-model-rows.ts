/**
 * Every read-model row of one dataset, straight from the engine (test support: the writer port
 * ReadModelStore has no getters, and the query port answers in the read side's shapes). For the
 * read-model store's contract suite and the projector's tests, which check what `apply` wrote.
 */
import type { Db } from 'mongodb'
import type pg from 'pg'
import { decodeKeys } from '../../src/adapters/mongodb/field-names.js'
import { READ_MODEL_COLLECTIONS } from '../../src/adapters/mongodb/read-model-writes.js'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { idTextSql, isoOfEpochMs, nameSql, qualifierOf } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import type { Properties } from '../../src/schemas/api.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow, ObjectTypeRow } from '../../src/schemas/read-models.js'

export interface ReadModelRows {
  eventTypes: EventTypeRow[]
  objectTypes: ObjectTypeRow[]
  /** Ordered by (type, external_id). */
  objects: ObjectRow[]
  /** Ordered by (object_id, position). */
  objectChanges: ObjectChangeRow[]
  /** Ordered by (timestamp, position). */
  events: EventRow[]
  /** Ordered by (event_time, position, object_id, qualifier). */
  eventObjects: EventObjectRow[]
  /** O2O, ordered by (object_id, target_object_id, qualifier), no qualifier first. */
  objectRelationships: ObjectRelationshipRow[]
  /** Declared types `[kind, name, position]`, ordered by (kind, name). */
  declaredTypes: [string, string, number][]
  /** Their attributes `[kind, type name, name, type, position]`, ordered by (kind, type name, name). */
  declaredAttributes: [string, string, string, string, number][]
}

/** Reads every row of a dataset. */
export type RowReader = (datasetId: string) => Promise<ReadModelRows>

/**
 * The rows of the SQLite read models (tables rm_*), in the row shapes of src/schemas/read-models.ts:
 * the narrow layout's row ids are joined back to dataset and object ids, and its epoch-millisecond
 * times (every time column) turned back into ISO 8601.
 */
export function sqliteRows(db: SqliteDatabase): RowReader {
  const all = <T>(sql: string, datasetId: string) => db.prepare(sql).all(datasetId) as T[]
  const parse = (text: string) => JSON.parse(text) as Properties
  const OBJECT = 'rm_objects o JOIN rm_datasets d ON d.did = o.did AND d.dataset_id = ?'
  return async (datasetId) => ({
    eventTypes: all<EventTypeRow>('SELECT * FROM rm_event_types WHERE dataset_id = ? ORDER BY name', datasetId),
    objectTypes: all<ObjectTypeRow>('SELECT * FROM rm_object_types WHERE dataset_id = ? ORDER BY name', datasetId),
    objects: all<Omit<ObjectRow, 'properties' | 'created_at' | 'updated_at'> & { properties: string; created_at: number; updated_at: number }>(
      `SELECT d.dataset_id, ${idTextSql('o.object_id')} AS object_id, o.type, o.external_id, o.properties, o.created_at, o.updated_at, o.position
       FROM ${OBJECT} ORDER BY o.type, o.external_id`,
      datasetId,
    ).map((r) => ({ ...r, properties: parse(r.properties), created_at: isoOfEpochMs(r.created_at), updated_at: isoOfEpochMs(r.updated_at) })),
    objectChanges: all<Omit<ObjectChangeRow, 'attributes' | 'time'> & { attributes: string; time: number }>(
      `SELECT d.dataset_id, ${idTextSql('o.object_id')} AS object_id, c.position, c.time, c.attributes
       FROM ${OBJECT} JOIN rm_object_changes c ON c.rid = o.rid ORDER BY o.object_id, c.position`,
      datasetId,
    ).map((r) => ({ ...r, attributes: parse(r.attributes), time: isoOfEpochMs(r.time) })),
    events: all<
      Omit<EventRow, 'properties' | 'timestamp' | 'end_timestamp' | 'received_at'> & {
        properties: string
        time: number
        end_time: number | null
        received_at: number
      }
    >(
      `SELECT d.dataset_id, ${idTextSql('e.event_id')} AS event_id, ${nameSql('e.event_type_id')} AS event_type, e.time, e.end_time, e.properties, e.objects_count, e.received_at, e.position
       FROM rm_events e JOIN rm_datasets d ON d.did = e.did AND d.dataset_id = ? ORDER BY e.time, e.position`,
      datasetId,
    ).map(({ time, end_time, ...r }) => ({
      ...r,
      received_at: isoOfEpochMs(r.received_at),
      timestamp: isoOfEpochMs(time),
      end_timestamp: end_time === null ? null : isoOfEpochMs(end_time),
      properties: parse(r.properties),
    })),
    eventObjects: all<Omit<EventObjectRow, 'qualifier' | 'event_time'> & { qualifier: string; time: number }>(
      `SELECT d.dataset_id, ${idTextSql('e.event_id')} AS event_id, ${idTextSql('o.object_id')} AS object_id, ${nameSql('l.qualifier_id')} AS qualifier, o.type AS object_type, o.external_id, e.time, l.position
       FROM ${OBJECT} JOIN rm_event_objects l ON l.rid = o.rid JOIN rm_events e ON e.position = l.position
       ORDER BY e.time, l.position, o.object_id, qualifier`,
      datasetId,
    ).map(({ time, ...r }) => ({ ...r, event_time: isoOfEpochMs(time), qualifier: qualifierOf(r.qualifier) })),
    objectRelationships: all<Omit<ObjectRelationshipRow, 'qualifier' | 'time'> & { qualifier: string; time: number }>(
      `SELECT d.dataset_id, ${idTextSql('o.object_id')} AS object_id, ${idTextSql('t.object_id')} AS target_object_id, ${nameSql('r.qualifier_id')} AS qualifier, t.type AS target_type, t.external_id AS target_external_id,
         r.time, r.position
       FROM ${OBJECT} JOIN rm_object_relationships r ON r.rid = o.rid JOIN rm_objects t ON t.rid = r.target_rid
       ORDER BY o.object_id, t.object_id, qualifier`,
      datasetId,
    ).map((r) => ({ ...r, qualifier: qualifierOf(r.qualifier), time: isoOfEpochMs(r.time) })),
    declaredTypes: all<{ kind: string; name: string; position: number }>(
      'SELECT kind, name, position FROM rm_declared_types WHERE dataset_id = ? ORDER BY kind, name',
      datasetId,
    ).map((r) => [r.kind, r.name, r.position]),
    declaredAttributes: all<{ kind: string; type_name: string; name: string; type: string; position: number }>(
      'SELECT kind, type_name, name, type, position FROM rm_declared_attributes WHERE dataset_id = ? ORDER BY kind, type_name, name',
      datasetId,
    ).map((r) => [r.kind, r.type_name, r.name, r.type, r.position]),
  })
}

/** The rows of the MongoDB read models (READ_MODEL_COLLECTIONS), without `_id`, attribute keys decoded (field-names.ts). */
export function mongoRows(db: Db): RowReader {
  const c = READ_MODEL_COLLECTIONS
  const rows = async <T>(collection: string, datasetId: string, sort: Record<string, 1>): Promise<T[]> =>
    (await db
      .collection(collection)
      .find({ dataset_id: datasetId }, { projection: { _id: 0 } })
      .sort(sort)
      .toArray()) as T[]
  return async (datasetId) => ({
    eventTypes: await rows<EventTypeRow>(c.eventTypes, datasetId, { name: 1 }),
    objectTypes: await rows<ObjectTypeRow>(c.objectTypes, datasetId, { name: 1 }),
    objects: (await rows<ObjectRow>(c.objects, datasetId, { type: 1, external_id: 1 })).map((r) => ({ ...r, properties: decodeKeys(r.properties) })),
    objectChanges: (await rows<ObjectChangeRow>(c.objectChanges, datasetId, { object_id: 1, position: 1 })).map((r) => ({
      ...r,
      attributes: decodeKeys(r.attributes),
    })),
    events: (await rows<EventRow>(c.events, datasetId, { timestamp: 1, position: 1 })).map((r) => ({ ...r, properties: decodeKeys(r.properties) })),
    eventObjects: await rows<EventObjectRow>(c.eventObjects, datasetId, { event_time: 1, position: 1, object_id: 1, qualifier: 1 }),
    objectRelationships: await rows<ObjectRelationshipRow>(c.objectRelationships, datasetId, { object_id: 1, target_object_id: 1, qualifier: 1 }),
    declaredTypes: (await rows<{ kind: string; name: string; position: number }>(c.declaredTypes, datasetId, { kind: 1, name: 1 })).map((r) => [
      r.kind,
      r.name,
      r.position,
    ]),
    declaredAttributes: (
      await rows<{ kind: string; type_name: string; name: string; type: string; position: number }>(c.declaredAttributes, datasetId, {
        kind: 1,
        type_name: 1,
        name: 1,
      })
    ).map((r) => [r.kind, r.type_name, r.name, r.type, r.position]),
  })
}

/**
 * The rows of the PostgreSQL read models (tables ocelog.rm_*, src/adapters/postgres/read-models-schema.ts):
 * bigint columns as numbers, '' qualifiers as null, and the types' constant `source`.
 */
export function postgresRows(pool: pg.Pool): RowReader {
  const rows = async <T>(sql: string, datasetId: string): Promise<T[]> => (await pool.query(sql, [datasetId])).rows as T[]
  const n = <R extends object>(r: R, ...fields: (keyof R)[]): R => {
    const out = { ...r }
    for (const f of fields) out[f] = Number(r[f]) as R[keyof R]
    return out
  }
  const q = (qualifier: string): string | null => (qualifier === '' ? null : qualifier)
  const C = 'COLLATE "C"'
  const types = async (table: string, datasetId: string) =>
    (await rows<EventTypeRow>(`SELECT * FROM ocelog.${table} WHERE dataset_id = $1 ORDER BY name ${C}`, datasetId)).map((r) => ({
      ...n(r, 'count', 'position'),
      source: 'public_api' as const,
    }))
  return async (datasetId) => ({
    eventTypes: await types('rm_event_types', datasetId),
    objectTypes: await types('rm_object_types', datasetId),
    objects: (
      await rows<ObjectRow & { first_position: string }>(
        `SELECT * FROM ocelog.rm_objects WHERE dataset_id = $1 ORDER BY type ${C}, external_id ${C}`,
        datasetId,
      )
    ).map(({ first_position: _first, ...r }) => n(r, 'position')),
    objectChanges: (await rows<ObjectChangeRow>(`SELECT * FROM ocelog.rm_object_changes WHERE dataset_id = $1 ORDER BY object_id, position`, datasetId)).map(
      (r) => n(r, 'position'),
    ),
    events: (await rows<EventRow>(`SELECT * FROM ocelog.rm_events WHERE dataset_id = $1 ORDER BY timestamp ${C}, position`, datasetId)).map((r) =>
      n(r, 'position'),
    ),
    eventObjects: (
      await rows<EventObjectRow & { qualifier: string }>(
        `SELECT * FROM ocelog.rm_event_objects WHERE dataset_id = $1 ORDER BY event_time ${C}, position, object_id, qualifier ${C}`,
        datasetId,
      )
    ).map((r) => ({ ...n(r, 'position'), qualifier: q(r.qualifier) })),
    objectRelationships: (
      await rows<ObjectRelationshipRow & { qualifier: string }>(
        `SELECT * FROM ocelog.rm_object_relationships WHERE dataset_id = $1 ORDER BY object_id, target_object_id, qualifier ${C}`,
        datasetId,
      )
    ).map((r) => ({ ...n(r, 'position'), qualifier: q(r.qualifier) })),
    declaredTypes: (
      await rows<{ kind: string; name: string; position: string }>(
        `SELECT kind, name, position FROM ocelog.rm_declared_types WHERE dataset_id = $1 ORDER BY kind ${C}, name ${C}`,
        datasetId,
      )
    ).map((r) => [r.kind, r.name, Number(r.position)]),
    declaredAttributes: (
      await rows<{ kind: string; type_name: string; name: string; type: string; position: string }>(
        `SELECT kind, type_name, name, type, position FROM ocelog.rm_declared_attributes WHERE dataset_id = $1 ORDER BY kind ${C}, type_name ${C}, name ${C}`,
        datasetId,
      )
    ).map((r) => [r.kind, r.type_name, r.name, r.type, Number(r.position)]),
  })
}
