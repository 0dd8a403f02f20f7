/**
 * ReadModelStore adapter on the embedded read-model file, read-models.db (tables `rm_*`,
 * read-models-database.ts). `apply` writes a ChangeSet and moves the checkpoint in one
 * transaction, so a crash leaves either all of it or none; its writes are set-based (multi-row
 * statements, multi-row.ts), and an object's attributes are read and merged only when a record of
 * the run set some.
 */
import { type ChangeSet, type ObjectChange, objectChangeToApply, type TypeChange, typeChangeToApply } from '../../core/read-model-changes.js'
import { mergeProperties } from '../../core/merge.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { Properties } from '../../schemas/api.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import type { SqliteDatabase } from './database.js'
import { MultiRowStatement } from './multi-row.js'
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

/** The statements of `apply`, prepared once per store: set-based (MultiRowStatement) where a run writes many rows. */
function prepareApplyStatements(db: SqliteDatabase) {
  // The stored rows of a run's objects, in one statement per few hundred objects.
  const getObjects = db.prepare<[string, string], { object_id: string; properties: string; position: number }>(
    'SELECT object_id, properties, position FROM rm_objects WHERE dataset_id = ? AND object_id IN (SELECT value FROM json_each(?))',
  )
  // New objects, and objects whose attributes changed: their whole row.
  const putObjects = new MultiRowStatement(
    db,
    'INSERT INTO rm_objects (dataset_id, object_id, type, external_id, properties, created_at, updated_at, position) VALUES',
    8,
    'ON CONFLICT (dataset_id, object_id) DO UPDATE SET properties = excluded.properties, updated_at = excluded.updated_at, position = excluded.position',
  )
  // Objects only named again: their last-seen time and position, without reading or writing their attributes.
  const touchObjects = new MultiRowStatement(
    db,
    'WITH v (dataset_id, object_id, updated_at, position) AS (VALUES',
    4,
    ') UPDATE rm_objects SET updated_at = v.updated_at, position = v.position FROM v WHERE rm_objects.dataset_id = v.dataset_id AND rm_objects.object_id = v.object_id',
  )
  // An object type's count is its distinct objects: it grows by the objects this batch inserted
  // (recounting rm_objects instead cost a scan of the type's objects on every batch).
  const countObjects = db.prepare('UPDATE rm_object_types SET count = count + ? WHERE dataset_id = ? AND name = ?')
  const putChanges = new MultiRowStatement(db, 'INSERT OR IGNORE INTO rm_object_changes (dataset_id, object_id, position, time, attributes) VALUES', 5)
  const putEvents = new MultiRowStatement(
    db,
    'INSERT OR IGNORE INTO rm_events (dataset_id, event_id, event_type, timestamp, end_timestamp, properties, objects_count, received_at, position) VALUES',
    9,
  )
  const putE2O = new MultiRowStatement(
    db,
    'INSERT OR IGNORE INTO rm_event_objects (dataset_id, event_id, object_id, qualifier, object_type, external_id, event_time, position) VALUES',
    8,
  )
  const putO2O = new MultiRowStatement(
    db,
    'INSERT OR IGNORE INTO rm_object_relationships (dataset_id, object_id, target_object_id, qualifier, target_type, target_external_id, time, position) VALUES',
    8,
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
  return { getObjects, putObjects, touchObjects, countObjects, putChanges, putEvents, putE2O, putO2O, getCheckpoint, putCheckpoint, eventTypes, objectTypes }
}

type ApplyStatements = ReturnType<typeof prepareApplyStatements>
type TypeStatements = ApplyStatements['eventTypes']

/** Applies one type change by the replay rule (typeChangeToApply), as a guarded upsert. */
function applyTypeChange(statements: TypeStatements, t: TypeChange): void {
  const row = statements.position.get(t.datasetId, t.name) as { position: number } | undefined
  const change = typeChangeToApply(t, row?.position)
  if (change !== null) statements.upsert.run(change)
}

/** Object ids read per statement when looking up a run's stored objects. */
const LOOKUP_CHUNK = 500

/**
 * Applies a run's object changes by the replay rule (objectChangeToApply): reads the stored rows of
 * all its objects, merges attributes in JavaScript only for objects whose attributes changed, and
 * writes new and changed rows, then the rows only named again, set-based.
 * @returns how many objects of each (dataset, type) were new.
 */
function applyObjectChanges(st: ApplyStatements, objects: Iterable<ObjectChange>): Map<string, { datasetId: string; type: string; added: number }> {
  const byDataset = new Map<string, ObjectChange[]>()
  for (const o of objects) {
    const list = byDataset.get(o.datasetId)
    if (list === undefined) byDataset.set(o.datasetId, [o])
    else list.push(o)
  }
  const put: unknown[][] = []
  const touch: unknown[][] = []
  const newObjects = new Map<string, { datasetId: string; type: string; added: number }>()
  for (const [datasetId, list] of byDataset) {
    const stored = new Map<string, { properties: string; position: number }>()
    for (let i = 0; i < list.length; i += LOOKUP_CHUNK) {
      const ids = JSON.stringify(list.slice(i, i + LOOKUP_CHUNK).map((o) => o.objectId))
      for (const row of st.getObjects.all(datasetId, ids)) stored.set(row.object_id, row)
    }
    for (const o of list) {
      const row = stored.get(o.objectId)
      const change = objectChangeToApply(o, row?.position)
      if (change === null) continue
      if (row === undefined) {
        put.push([datasetId, o.objectId, o.type, o.externalId, JSON.stringify(change.properties), o.firstSeenAt, o.lastSeenAt, o.maxPosition])
        const key = `${datasetId}\u0000${o.type}`
        const counted = newObjects.get(key)
        if (counted === undefined) newObjects.set(key, { datasetId, type: o.type, added: 1 })
        else counted.added += 1
      } else if (change.deltas.length > 0) {
        const merged = mergeProperties(parseObject(row.properties), change.properties)
        put.push([datasetId, o.objectId, o.type, o.externalId, JSON.stringify(merged), o.firstSeenAt, o.lastSeenAt, o.maxPosition])
      } else {
        touch.push([datasetId, o.objectId, o.lastSeenAt, o.maxPosition])
      }
    }
  }
  st.putObjects.run(put)
  st.touchObjects.run(touch)
  return newObjects
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
    const st = this.applyStatements

    db.transaction(() => {
      const current = (st.getCheckpoint.get(name) as { position: number } | undefined)?.position ?? null
      if (current !== expected) throw new CheckpointConflictError(name, expected, current)

      for (const t of changes.eventTypes.values()) applyTypeChange(st.eventTypes, t)
      for (const t of changes.objectTypes.values()) applyTypeChange(st.objectTypes, t)
      for (const t of applyObjectChanges(st, changes.objects.values()).values()) st.countObjects.run(t.added, t.datasetId, t.type)

      st.putChanges.run(changes.objectChanges.map((c) => [c.dataset_id, c.object_id, c.position, c.time, JSON.stringify(c.attributes)]))
      st.putEvents.run(
        changes.events.map((e) => [
          e.dataset_id,
          e.event_id,
          e.event_type,
          e.timestamp,
          e.end_timestamp,
          JSON.stringify(e.properties),
          e.objects_count,
          e.received_at,
          e.position,
        ]),
      )
      st.putE2O.run(
        changes.eventObjects.map((l) => [
          l.dataset_id,
          l.event_id,
          l.object_id,
          l.qualifier ?? NO_QUALIFIER,
          l.object_type,
          l.external_id,
          l.event_time,
          l.position,
        ]),
      )
      st.putO2O.run(
        changes.objectRelationships.map((r) => [
          r.dataset_id,
          r.object_id,
          r.target_object_id,
          r.qualifier ?? NO_QUALIFIER,
          r.target_type,
          r.target_external_id,
          r.time,
          r.position,
        ]),
      )
      st.putCheckpoint.run(name, to, new Date().toISOString())
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
