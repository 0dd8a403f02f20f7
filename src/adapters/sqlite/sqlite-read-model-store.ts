/**
 * ReadModelStore adapter on the embedded read-model file, read-models.db (tables `rm_*`,
 * read-models-database.ts). `apply` writes a ChangeSet and moves the checkpoint in one
 * transaction, so a crash leaves either all of it or none; its writes are set-based (multi-row
 * statements, multi-row.ts), and an object's attributes are read and merged only when a record of
 * the run set some.
 */
import { writeAuditChain } from './sqlite-audit-chain.js'
import Database from 'better-sqlite3'
import { type ChangeSet, type ObjectChange, objectChangeToApply, type TypeChange, typeChangeToApply } from '../../core/read-model-changes.js'
import { mergeProperties } from '../../core/merge.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { Properties } from '../../schemas/api.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import type { SqliteDatabase } from './database.js'
import { MultiRowStatement } from './multi-row.js'
import {
  E2O_MERGE_ROWS,
  E2O_MERGE_ROWS_AT_HEAD,
  ensureQueryIndexes,
  epochMsOf,
  hasQueryIndexes,
  e2oSpan,
  mergeObjectEvents,
  pendingObjectEvents,
  remakeReadModels,
  storedQualifier,
} from './read-models-database.js'

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
  const getDataset = db.prepare<[string], { did: number }>('SELECT did FROM rm_datasets WHERE dataset_id = ?')
  const putDataset = db.prepare('INSERT INTO rm_datasets (dataset_id) VALUES (?)')
  // The stored rows of a run's objects, in one statement per few hundred objects.
  const getObjects = db.prepare<[string], { rid: number; object_id: string; properties: string; position: number }>(
    'SELECT rid, object_id, properties, position FROM rm_objects WHERE object_id IN (SELECT value FROM json_each(?))',
  )
  const maxRid = db.prepare<[], { rid: number | null }>('SELECT max(rid) AS rid FROM rm_objects')
  // New objects, with the row ids this run assigns them.
  const putObjects = new MultiRowStatement(
    db,
    'INSERT INTO rm_objects (rid, did, object_id, type, external_id, properties, created_at, updated_at, position) VALUES',
    9,
  )
  // Objects whose attributes changed: attributes, last-seen time and position.
  const changeObjects = new MultiRowStatement(
    db,
    'WITH v (rid, properties, updated_at, position) AS (VALUES',
    4,
    ') UPDATE rm_objects SET properties = v.properties, updated_at = v.updated_at, position = v.position FROM v WHERE rm_objects.rid = v.rid',
  )
  // Objects only named again: their last-seen time and position, without reading or writing their attributes.
  const touchObjects = new MultiRowStatement(
    db,
    'WITH v (rid, updated_at, position) AS (VALUES',
    3,
    ') UPDATE rm_objects SET updated_at = v.updated_at, position = v.position FROM v WHERE rm_objects.rid = v.rid',
  )
  // An object type's count is its distinct objects: it grows by the objects this batch inserted
  // (recounting rm_objects instead cost a scan of the type's objects on every batch).
  const countObjects = db.prepare('UPDATE rm_object_types SET count = count + ? WHERE dataset_id = ? AND name = ?')
  const putChanges = new MultiRowStatement(db, 'INSERT OR IGNORE INTO rm_object_changes (rid, position, time, attributes) VALUES', 4)
  const putEvents = new MultiRowStatement(
    db,
    'INSERT OR IGNORE INTO rm_events (position, did, event_id, event_type, time, end_time, properties, objects_count, e2o, e2o_first, received_at) VALUES',
    11,
  )
  // Appended (each row's seq is the next one), and merged by object later (read-models-database.ts).
  const putE2O = new MultiRowStatement(db, 'INSERT INTO rm_event_objects (seq, position, rid, qualifier, time) VALUES', 5, '', 200)
  const putO2O = new MultiRowStatement(db, 'INSERT OR IGNORE INTO rm_object_relationships (rid, target_rid, qualifier, time, position) VALUES', 5)
  const eventsBetween = db.prepare<[number, number], number>('SELECT position FROM rm_events WHERE position BETWEEN ? AND ?').pluck()
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
  return {
    getDataset,
    putDataset,
    getObjects,
    maxRid,
    putObjects,
    changeObjects,
    touchObjects,
    countObjects,
    putChanges,
    putEvents,
    putE2O,
    eventsBetween,
    putO2O,
    getCheckpoint,
    putCheckpoint,
    eventTypes,
    objectTypes,
  }
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
 * writes new rows (with row ids assigned here, in the run's order of first appearance), changed
 * rows and rows only named again, set-based.
 * @param didOf the dataset's row id (rm_datasets), made when missing.
 * @returns the row id of every object of the run, by object_id, and how many objects of each
 *   (dataset, type) were new.
 */
function applyObjectChanges(
  st: ApplyStatements,
  objects: Iterable<ObjectChange>,
  didOf: (datasetId: string) => number,
): { rids: Map<string, number>; added: Map<string, { datasetId: string; type: string; added: number }> } {
  const list = [...objects]
  const stored = new Map<string, { rid: number; properties: string; position: number }>()
  for (let i = 0; i < list.length; i += LOOKUP_CHUNK) {
    const ids = JSON.stringify(list.slice(i, i + LOOKUP_CHUNK).map((o) => o.objectId))
    for (const row of st.getObjects.all(ids)) stored.set(row.object_id, row)
  }
  let nextRid = (st.maxRid.get()?.rid ?? 0) + 1
  const rids = new Map<string, number>()
  const put: unknown[][] = []
  const change: unknown[][] = []
  const touch: unknown[][] = []
  const added = new Map<string, { datasetId: string; type: string; added: number }>()
  for (const o of list) {
    const row = stored.get(o.objectId)
    const rid = row?.rid ?? nextRid++
    rids.set(o.objectId, rid)
    const apply = objectChangeToApply(o, row?.position)
    if (apply === null) continue
    if (row === undefined) {
      put.push([rid, didOf(o.datasetId), o.objectId, o.type, o.externalId, JSON.stringify(apply.properties), o.firstSeenAt, o.lastSeenAt, o.maxPosition])
      const key = `${o.datasetId}\u0000${o.type}`
      const counted = added.get(key)
      if (counted === undefined) added.set(key, { datasetId: o.datasetId, type: o.type, added: 1 })
      else counted.added += 1
    } else if (apply.deltas.length > 0) {
      change.push([rid, JSON.stringify(mergeProperties(parseObject(row.properties), apply.properties)), o.lastSeenAt, o.maxPosition])
    } else {
      touch.push([rid, o.lastSeenAt, o.maxPosition])
    }
  }
  st.putObjects.run(put)
  st.changeObjects.run(change)
  st.touchObjects.run(touch)
  return { rids, added }
}

/**
 * The row id of each object a run's rows name: from the run's objects (every object a record names
 * is one of them, projections/objects.ts), else from the file.
 * @throws when an object has no row: a change set that names an object it never touched.
 */
function ridLookup(st: ApplyStatements, rids: Map<string, number>): (objectId: string) => number {
  return (objectId) => {
    let rid = rids.get(objectId)
    if (rid === undefined) {
      rid = st.getObjects.get(JSON.stringify([objectId]))?.rid
      if (rid === undefined) throw new Error(`read model row names object ${objectId}, which has no row in rm_objects`)
      rids.set(objectId, rid)
    }
    return rid
  }
}

/**
 * A run's E2O rows as `rm_event_objects` keeps them, `[seq, position, rid, qualifier, time]`: one
 * per distinct (event, object, qualifier), in log order (an event that names an object twice with
 * one qualifier gives one row), numbered from `firstSeq`, with the time as epoch milliseconds. An
 * event's rows are consecutive.
 */
function e2oRows(
  links: readonly { position: number; object_id: string; qualifier: string | null; event_time: string }[],
  ridOf: (objectId: string) => number,
  firstSeq: number,
): [number, number, number, string, number][] {
  const rows: [number, number, number, string, number][] = []
  let seen = new Set<string>()
  let position = -1
  // An event's E2O rows are adjacent and share its time: parsed once per event.
  let time = 0
  for (const l of links) {
    if (l.position !== position) {
      position = l.position
      seen = new Set<string>()
      time = epochMsOf(l.event_time)
    }
    const rid = ridOf(l.object_id)
    const qualifier = storedQualifier(l.qualifier)
    const key = `${String(rid)}\u0000${qualifier}`
    if (seen.has(key)) continue
    seen.add(key)
    rows.push([firstSeq + rows.length, position, rid, qualifier, time])
  }
  return rows
}

/** The positions of a run's events that rm_events already holds (one read of the run's position range, usually empty). */
function writtenEvents(st: ApplyStatements, events: readonly { position: number }[]): Set<number> {
  if (events.length === 0) return new Set()
  let low = Number.POSITIVE_INFINITY
  let high = Number.NEGATIVE_INFINITY
  for (const e of events) {
    low = Math.min(low, e.position)
    high = Math.max(high, e.position)
  }
  return new Set(st.eventsBetween.all(low, high))
}

/** Per event position, of rows from e2oRows: the seq of its first row and how many it has. */
function e2oSpans(rows: readonly (readonly [number, number, ...unknown[]])[]): Map<number, { first: number; count: number }> {
  const spans = new Map<number, { first: number; count: number }>()
  for (const [seq, position] of rows) {
    const span = spans.get(position)
    if (span === undefined) spans.set(position, { first: seq, count: 1 })
    else span.count += 1
  }
  return spans
}

export interface SqliteReadModelStoreOptions {
  /** Pending E2O rows at which `apply` merges them (default E2O_MERGE_ROWS; tests pass a few). */
  e2oMergeRows?: number
  /** Pending E2O rows at which `atHead` merges them (default E2O_MERGE_ROWS_AT_HEAD). */
  e2oMergeRowsAtHead?: number
}

export class SqliteReadModelStore implements ReadModelStore {
  private applyStatements: ReturnType<typeof prepareApplyStatements> | null = null
  private readonly e2oMergeRows: number
  private readonly e2oMergeRowsAtHead: number
  /**
   * Whether this store replays into a file without its query indexes (a rebuild, or a file made
   * anew; null: not looked at yet). Then `apply` leaves every E2O row pending, and `atHead` merges
   * them in one sorted pass when it makes the indexes: a bulk load, like the indexes' own.
   */
  private bulk: boolean | null = null

  constructor(
    private readonly db: SqliteDatabase,
    options: SqliteReadModelStoreOptions = {},
  ) {
    this.e2oMergeRows = options.e2oMergeRows ?? E2O_MERGE_ROWS
    this.e2oMergeRowsAtHead = options.e2oMergeRowsAtHead ?? E2O_MERGE_ROWS_AT_HEAD
  }

  async checkpoint(name: string): Promise<number | null> {
    const row = this.db.prepare('SELECT position FROM rm_checkpoints WHERE projector = ?').get(name) as { position: number } | undefined
    return row?.position ?? null
  }

  async apply(name: string, expected: number | null, to: number, changes: ChangeSet): Promise<void> {
    const db = this.db
    this.applyStatements ??= prepareApplyStatements(db)
    const st = this.applyStatements
    this.bulk ??= !hasQueryIndexes(db)
    const bulk = this.bulk
    // Datasets' row ids, read (or made) once per transaction: another process may remake the file between two.
    const dids = new Map<string, number>()

    db.transaction(() => {
      const current = (st.getCheckpoint.get(name) as { position: number } | undefined)?.position ?? null
      if (current !== expected) throw new CheckpointConflictError(name, expected, current)

      for (const t of changes.eventTypes.values()) applyTypeChange(st.eventTypes, t)
      for (const t of changes.objectTypes.values()) applyTypeChange(st.objectTypes, t)
      const didOf = (datasetId: string): number => {
        let did = dids.get(datasetId) ?? st.getDataset.get(datasetId)?.did
        if (did === undefined) did = Number(st.putDataset.run(datasetId).lastInsertRowid)
        dids.set(datasetId, did)
        return did
      }
      const { rids, added } = applyObjectChanges(st, changes.objects.values(), didOf)
      for (const t of added.values()) st.countObjects.run(t.added, t.datasetId, t.type)
      const ridOf = ridLookup(st, rids)

      st.putChanges.run(changes.objectChanges.map((c) => [ridOf(c.object_id), c.position, c.time, JSON.stringify(c.attributes)]))
      // Events another projector has written (the replay rule: every write is idempotent) keep their
      // rows: rm_event_objects has no key that would ignore a second copy of an event's E2O rows.
      const written = writtenEvents(st, changes.events)
      const events = written.size === 0 ? changes.events : changes.events.filter((e) => !written.has(e.position))
      const links = written.size === 0 ? changes.eventObjects : changes.eventObjects.filter((l) => !written.has(l.position))
      // Read inside the write transaction: no other writer can take the same seqs.
      const span = e2oSpan(db)
      const firstSeq = Math.max(span.through, span.last) + 1
      const e2oRowsOfRun = e2oRows(links, ridOf, firstSeq)
      const e2o = e2oSpans(e2oRowsOfRun)
      st.putEvents.run(
        events.map((e) => [
          e.position,
          didOf(e.dataset_id),
          e.event_id,
          e.event_type,
          epochMsOf(e.timestamp),
          e.end_timestamp === null ? null : epochMsOf(e.end_timestamp),
          JSON.stringify(e.properties),
          e.objects_count,
          e2o.get(e.position)?.count ?? 0,
          // An event without rows (none in practice: every event names an object) gets an empty range.
          e2o.get(e.position)?.first ?? firstSeq + e2oRowsOfRun.length,
          e.received_at,
        ]),
      )
      st.putE2O.run(e2oRowsOfRun)
      // Pending now: this run's rows and those before them past the watermark.
      const pending = firstSeq + e2oRowsOfRun.length - 1 - span.through
      if (!bulk && e2oRowsOfRun.length > 0 && pending >= this.e2oMergeRows) mergeObjectEvents(db)
      st.putO2O.run(changes.objectRelationships.map((r) => [ridOf(r.object_id), ridOf(r.target_object_id), storedQualifier(r.qualifier), r.time, r.position]))
      writeAuditChain(db, changes.auditChain, didOf)
      st.putCheckpoint.run(name, to, new Date().toISOString())
    }).immediate()
  }

  async reset(): Promise<void> {
    // The prepared statements name tables that are dropped and made again.
    this.applyStatements = null
    remakeReadModels(this.db)
    this.bulk = true
  }

  /**
   * Makes the query indexes a rebuild or a new file left out (ensureQueryIndexes): a read of
   * sqlite_schema when they are there; and merges the pending E2O rows when at least
   * E2O_MERGE_ROWS_AT_HEAD have gathered (mergeObjectEvents). When another connection holds the
   * file's write lock past the busy timeout (another projector, or a long apply), it leaves both to
   * a later call.
   */
  async atHead(): Promise<void> {
    try {
      ensureQueryIndexes(this.db)
      // After a bulk load every pending row is merged, however few.
      const threshold = this.bulk === false ? this.e2oMergeRowsAtHead : 1
      if (pendingObjectEvents(this.db) >= threshold) this.db.transaction(() => mergeObjectEvents(this.db)).immediate()
      this.bulk = false
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') return
      throw error
    }
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
