/**
 * ReadModelStore adapter on the embedded read-model file, read-models.db (tables `rm_*`,
 * read-models-database.ts). `apply` writes a ChangeSet
 * and moves the checkpoint in one transaction, so a crash leaves either all of it or none.
 */
import { type ChangeSet, objectChangeToApply, type TypeChange, typeChangeToApply } from '../../core/read-model-changes.js'
import { mergeProperties } from '../../core/merge.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { Properties } from '../../schemas/api.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import type { SqliteDatabase } from './database.js'
import { remakeReadModels } from './read-models-database.js'

/** E2O and O2O rows without a qualifier are stored with '' (the key needs a value; the API never accepts ''). */
const NO_QUALIFIER = ''

function parseObject(text: string): Properties {
  return JSON.parse(text) as Properties
}

function upsertTypesStatement(db: SqliteDatabase, table: 'rm_event_types' | 'rm_object_types') {
  return db.prepare(
    `INSERT INTO ${table} (dataset_id, name, source, first_seen_at, last_seen_at, count, position)
     VALUES (@datasetId, @name, 'public_api', @firstSeenAt, @lastSeenAt, @added, @maxPosition)
     ON CONFLICT (dataset_id, name) DO UPDATE SET
       first_seen_at = min(first_seen_at, excluded.first_seen_at),
       last_seen_at = max(last_seen_at, excluded.last_seen_at),
       count = count + excluded.count,
       position = excluded.position
     WHERE ${table}.position < @minPosition`,
  )
}

/** The statements of `apply`, prepared once per store: preparing them per batch cost more than small batches did. */
function prepareApplyStatements(db: SqliteDatabase) {
  const getObject = db.prepare('SELECT properties, position FROM rm_objects WHERE dataset_id = ? AND object_id = ?')
  const putObject = db.prepare(
    `INSERT INTO rm_objects (dataset_id, object_id, type, external_id, properties, created_at, updated_at, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (dataset_id, object_id) DO UPDATE SET
       properties = excluded.properties, updated_at = excluded.updated_at, position = excluded.position`,
  )
  // An object type's count is its distinct objects: it grows by the objects this batch inserted
  // (recounting rm_objects instead cost a scan of the type's objects on every batch).
  const countObjects = db.prepare('UPDATE rm_object_types SET count = count + ? WHERE dataset_id = ? AND name = ?')
  const putChange = db.prepare('INSERT OR IGNORE INTO rm_object_changes (dataset_id, object_id, position, time, attributes) VALUES (?, ?, ?, ?, ?)')
  const putEvent = db.prepare(
    `INSERT OR IGNORE INTO rm_events (dataset_id, event_id, event_type, timestamp, end_timestamp, properties, objects_count, received_at, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const putE2O = db.prepare(
    `INSERT OR IGNORE INTO rm_event_objects (dataset_id, event_id, object_id, qualifier, object_type, external_id, event_time, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const putO2O = db.prepare(
    `INSERT OR IGNORE INTO rm_object_relationships (dataset_id, object_id, target_object_id, qualifier, target_type, target_external_id, time, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const getCheckpoint = db.prepare('SELECT position FROM rm_checkpoints WHERE projector = ?')
  const putCheckpoint = db.prepare(
    `INSERT INTO rm_checkpoints (projector, position, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (projector) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
  )
  const eventTypes = {
    upsert: upsertTypesStatement(db, 'rm_event_types'),
    position: db.prepare('SELECT position FROM rm_event_types WHERE dataset_id = ? AND name = ?'),
  }
  const objectTypes = {
    upsert: upsertTypesStatement(db, 'rm_object_types'),
    position: db.prepare('SELECT position FROM rm_object_types WHERE dataset_id = ? AND name = ?'),
  }
  return { getObject, putObject, countObjects, putChange, putEvent, putE2O, putO2O, getCheckpoint, putCheckpoint, eventTypes, objectTypes }
}

type TypeStatements = ReturnType<typeof prepareApplyStatements>['eventTypes']

/** Applies one type change by the replay rule (typeChangeToApply), as a guarded upsert. */
function applyTypeChange(statements: TypeStatements, t: TypeChange): void {
  const row = statements.position.get(t.datasetId, t.name) as { position: number } | undefined
  const change = typeChangeToApply(t, row?.position)
  if (change !== null) statements.upsert.run(change)
}

export class SqliteReadModelStore implements ReadModelStore {
  private applyStatements: ReturnType<typeof prepareApplyStatements> | null = null

  constructor(private readonly db: SqliteDatabase) {}

  async checkpoint(name: string): Promise<number | null> {
    const row = this.db.prepare('SELECT position FROM rm_checkpoints WHERE projector = ?').get(name) as { position: number } | undefined
    return row?.position ?? null
  }

  async apply(name: string, expected: number | null, to: number, changes: ChangeSet): Promise<void> {
    const db = this.db
    this.applyStatements ??= prepareApplyStatements(db)
    const { getObject, putObject, countObjects, putChange, putEvent, putE2O, putO2O, getCheckpoint, putCheckpoint, eventTypes, objectTypes } =
      this.applyStatements

    db.transaction(() => {
      const current = (getCheckpoint.get(name) as { position: number } | undefined)?.position ?? null
      if (current !== expected) throw new CheckpointConflictError(name, expected, current)

      for (const t of changes.eventTypes.values()) applyTypeChange(eventTypes, t)
      for (const t of changes.objectTypes.values()) applyTypeChange(objectTypes, t)

      const newObjects = new Map<string, { datasetId: string; type: string; added: number }>()
      for (const o of changes.objects.values()) {
        const row = getObject.get(o.datasetId, o.objectId) as { properties: string; position: number } | undefined
        const change = objectChangeToApply(o, row?.position)
        if (change === null) continue
        const merged = row === undefined ? change.properties : mergeProperties(parseObject(row.properties), change.properties)
        putObject.run(o.datasetId, o.objectId, o.type, o.externalId, JSON.stringify(merged), o.firstSeenAt, o.lastSeenAt, o.maxPosition)
        if (row !== undefined) continue
        const key = `${o.datasetId}\u0000${o.type}`
        const counted = newObjects.get(key)
        if (counted === undefined) newObjects.set(key, { datasetId: o.datasetId, type: o.type, added: 1 })
        else counted.added += 1
      }
      for (const t of newObjects.values()) countObjects.run(t.added, t.datasetId, t.type)

      for (const c of changes.objectChanges) putChange.run(c.dataset_id, c.object_id, c.position, c.time, JSON.stringify(c.attributes))
      for (const e of changes.events) {
        putEvent.run(
          e.dataset_id,
          e.event_id,
          e.event_type,
          e.timestamp,
          e.end_timestamp,
          JSON.stringify(e.properties),
          e.objects_count,
          e.received_at,
          e.position,
        )
      }
      for (const l of changes.eventObjects) {
        putE2O.run(l.dataset_id, l.event_id, l.object_id, l.qualifier ?? NO_QUALIFIER, l.object_type, l.external_id, l.event_time, l.position)
      }
      for (const r of changes.objectRelationships) {
        putO2O.run(r.dataset_id, r.object_id, r.target_object_id, r.qualifier ?? NO_QUALIFIER, r.target_type, r.target_external_id, r.time, r.position)
      }
      putCheckpoint.run(name, to, new Date().toISOString())
    }).immediate()
  }

  async reset(): Promise<void> {
    // The prepared statements name tables that are dropped and made again.
    this.applyStatements = null
    remakeReadModels(this.db)
  }

  async projections(): Promise<ProjectionState[]> {
    const rows = this.db
      .prepare(
        `SELECT name, c.position AS position, c.updated_at AS updated_at, s.stop AS stop
         FROM (SELECT projector AS name FROM rm_checkpoints UNION SELECT projector FROM rm_projection_stops) AS n
         LEFT JOIN rm_checkpoints AS c ON c.projector = n.name
         LEFT JOIN rm_projection_stops AS s ON s.projector = n.name
         ORDER BY name`,
      )
      .all() as { name: string; position: number | null; updated_at: string | null; stop: string | null }[]
    return rows.map((r) => ({
      projection: r.name,
      position: r.position,
      updated_at: r.updated_at,
      stopped: r.stop === null ? null : (JSON.parse(r.stop) as ProjectionStop),
    }))
  }

  async recordStop(stop: ProjectionStop): Promise<void> {
    this.db
      .prepare('INSERT INTO rm_projection_stops (projector, stop) VALUES (?, ?) ON CONFLICT (projector) DO UPDATE SET stop = excluded.stop')
      .run(stop.projection, JSON.stringify(stop))
  }

  async clearStop(name: string): Promise<void> {
    this.db.prepare('DELETE FROM rm_projection_stops WHERE projector = ?').run(name)
  }

  async close(): Promise<void> {}
}
