/**
 * ReadModelStore adapter on the embedded read-model file, read-models.db (tables `rm_*`,
 * read-models-database.ts). `apply` writes a batch in one transaction, so a crash leaves either
 * all of it or none: the compare-and-set of every projection's checkpoint, the identities of the
 * objects the batch names (shared rows, written first), each projection's slice by its own write
 * (sqlite-slice-writes.ts), and every checkpoint with its version. Its writes are set-based
 * (multi-row statements, multi-row.ts), and an object's attributes are read and merged only when a
 * record of the run set some.
 */
import Database from 'better-sqlite3'
import {
  type ChangeBatch,
  KEY_SEP,
  type NamedObject,
  type ObjectsSlice,
  PROJECTION_NAMES,
  type ProjectionName,
  sliceOf,
} from '../../../core/read-model-changes.js'
import type { ReadModelStore } from '../../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../../ports/read-model-store.js'
import type { ProjectionState, ProjectionStop } from '../../../schemas/projections.js'
import { checkpointsSql, positionOf, type ProjectionStateRow, projectionStateOf } from '../../sql/checkpoints-sql.js'
import { SQLITE } from '../../sql/dialect.js'
import type { SqliteDatabase } from '../log/database.js'
import { DfObjectMemory } from '../../../core/df-object-memory.js'
import { MultiRowStatement } from './multi-row.js'
import { ensureQueryIndexes, epochMsOf, remakeReadModels, storedId } from './read-models-database.js'
import { prepareSliceStatements, SLICE_CLEARS, SLICE_WRITES, type SliceWriteContext, type StoredObject } from './sqlite-slice-writes.js'

/** The checkpoints' and stops' statements (shared with PostgreSQL). */
const CHECKPOINTS = checkpointsSql(SQLITE)

/** The statements of `apply` besides the slices' own: datasets, objects' identities, checkpoints. */
function prepareApplyStatements(db: SqliteDatabase) {
  return {
    slices: prepareSliceStatements(db),
    getDataset: db.prepare<[string], { id: number }>('SELECT did AS id FROM rm_datasets WHERE dataset_id = ?'),
    putDataset: db.prepare('INSERT INTO rm_datasets (dataset_id) VALUES (?)'),
    getName: db.prepare<[string], { id: number }>('SELECT nid AS id FROM rm_names WHERE name = ?'),
    putName: db.prepare('INSERT INTO rm_names (name) VALUES (?)'),
    // The stored rows of a run's objects, in one statement per few hundred objects: `[did, type, external id]` triples, by the identity index.
    // Each row names its triple by its index in the list (`i`): the object's id is the named object's, without reading it back.
    getObjects: db.prepare<[string], { i: number; rid: number; properties: string; position: number; first_position: number }>(
      `SELECT j.key AS i, o.rid, o.properties, o.position, o.first_position FROM json_each(?) AS j
       CROSS JOIN rm_objects AS o ON o.did = j.value ->> 0 AND o.type = j.value ->> 1 AND o.external_id = j.value ->> 2`,
    ),
    // An object by its id alone, outside the batch's named objects (none in practice): a scan, no index holds object ids.
    getObjectById: db.prepare<[Buffer | string], { rid: number }>('SELECT rid FROM rm_objects WHERE object_id = ?'),
    maxRid: db.prepare<[], { rid: number | null }>('SELECT max(rid) AS rid FROM rm_objects'),
    // Bumped when another connection commits to the file (sqlite.org/pragma.html#pragma_data_version).
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    // New objects, with the row ids this batch assigns them.
    putObjects: new MultiRowStatement(
      db,
      'INSERT INTO rm_objects (rid, did, object_id, type, external_id, properties, created_at, updated_at, position, first_position) VALUES',
      10,
    ),
    getCheckpoint: db.prepare<[string], { position: number }>(CHECKPOINTS.position),
    putCheckpoint: db.prepare<[string, number, number, string]>(CHECKPOINTS.put),
  }
}

type ApplyStatements = ReturnType<typeof prepareApplyStatements>

/** Object ids read per statement when looking up a batch's stored objects. */
const LOOKUP_CHUNK = 500

/**
 * The identity step of a batch: reads the stored rows of every object it names and makes the rows
 * of new ones, with row ids assigned here in the order of first appearance and `first_position` the
 * record that named them. A new object that the objects projection's slice holds gets its whole row
 * at once (then that slice's write finds it applied); any other new object gets an empty one (no
 * attributes, position 0) for the objects projection to fill.
 * @returns every named object's row, by object id, and the first row id this step made (every
 *   larger one was made by it too).
 */
function writeIdentities(
  st: ApplyStatements,
  named: ReadonlyMap<string, NamedObject>,
  objects: ObjectsSlice | undefined,
  didOf: (datasetId: string) => number,
): { stored: Map<string, StoredObject>; firstNewRid: number } {
  const list = [...named.values()]
  const stored = new Map<string, StoredObject>()
  for (let i = 0; i < list.length; i += LOOKUP_CHUNK) {
    const chunk = list.slice(i, i + LOOKUP_CHUNK)
    const ids = JSON.stringify(chunk.map((o) => [didOf(o.datasetId), o.type, o.externalId]))
    for (const row of st.getObjects.all(ids)) {
      const named = chunk[row.i]
      if (named === undefined) throw new Error(`identity lookup answered index ${String(row.i)} of ${String(chunk.length)}`)
      stored.set(named.objectId, { rid: row.rid, properties: row.properties, position: row.position, firstPosition: row.first_position })
    }
  }
  const firstNewRid = (st.maxRid.get()?.rid ?? 0) + 1
  let nextRid = firstNewRid
  const put: unknown[][] = []
  for (const o of named.values()) {
    if (stored.has(o.objectId)) continue
    const rid = nextRid++
    const whole = objects?.objects.get(o.datasetId + KEY_SEP + o.objectId)
    const properties = JSON.stringify(whole?.properties ?? {})
    const updatedAt = epochMsOf(whole?.lastSeenAt ?? o.firstSeenAt)
    const position = whole?.maxPosition ?? 0
    put.push([rid, didOf(o.datasetId), storedId(o.objectId), o.type, o.externalId, properties, epochMsOf(o.firstSeenAt), updatedAt, position, o.position])
    stored.set(o.objectId, { rid, properties, position, firstPosition: o.position })
  }
  st.putObjects.run(put)
  return { stored, firstNewRid }
}

/**
 * The id of a key (a dataset id in rm_datasets, a name in rm_names): read by `get` (a row with
 * `id`), else made by `put` (its rowid), and kept in a map for the caller's transaction.
 */
function idCache(get: Database.Statement<[string], { id: number }>, put: Database.Statement): (key: string) => number {
  const ids = new Map<string, number>()
  return (key) => {
    let id = ids.get(key) ?? get.get(key)?.id
    if (id === undefined) id = Number(put.run(key).lastInsertRowid)
    ids.set(key, id)
    return id
  }
}

/** Runs the write of projection `name`'s slice, when the batch has one. */
function writeSlice<K extends ProjectionName>(ctx: SliceWriteContext, batch: ChangeBatch, name: K): void {
  const part = sliceOf(batch.slices, name)
  if (part !== undefined) SLICE_WRITES[name](ctx, part)
}

export class SqliteReadModelStore implements ReadModelStore {
  private applyStatements: ApplyStatements | null = null
  /** The directly-follows write's memory of objects between transactions (DfObjectMemory: a cache of this file, kept true here). */
  private readonly dfMemory = new DfObjectMemory()
  /** The file's `data_version` as this connection last saw it in a transaction (null: not yet). */
  private seenDataVersion: number | null = null

  constructor(private readonly db: SqliteDatabase) {}

  async checkpoint(name: string): Promise<number | null> {
    return positionOf(this.db.prepare<[string], { position: number }>(CHECKPOINTS.position).get(name))
  }

  async apply(batch: ChangeBatch): Promise<void> {
    const db = this.db
    this.applyStatements ??= prepareApplyStatements(db)
    const st = this.applyStatements
    const parts = Object.values(batch.slices)
    // Datasets' row ids and names' ids (event types), read (or made) once per transaction: another process may remake the file between two.
    const didOf = idCache(st.getDataset, st.putDataset)
    const nameId = idCache(st.getName, st.putName)

    const memory = this.dfMemory
    const transaction = db.transaction(() => {
      // Another connection committed since this one's last transaction: what the memory holds may be stale.
      const version = st.dataVersion.get() ?? null
      if (version !== this.seenDataVersion) {
        memory.clear()
        this.seenDataVersion = version
      }
      for (const part of parts) {
        const current = positionOf(st.getCheckpoint.get(part.checkpoint))
        if (current !== part.expected) throw new CheckpointConflictError(part.checkpoint, part.expected, current)
      }
      const { stored: objects, firstNewRid } = writeIdentities(st, batch.objects, sliceOf(batch.slices, 'objects')?.slice, didOf)
      const ctx: SliceWriteContext = {
        db,
        st: st.slices,
        didOf,
        nameId,
        ridOf: (objectId) => {
          const rid = objects.get(objectId)?.rid ?? st.getObjectById.get(storedId(objectId))?.rid
          if (rid === undefined) throw new Error(`read model row names object ${objectId}, which has no row in rm_objects`)
          return rid
        },
        objects,
        named: batch.objects,
        dfMemory: { memory, firstNewRid },
      }
      for (const name of PROJECTION_NAMES) writeSlice(ctx, batch, name)
      const now = new Date().toISOString()
      for (const part of parts) st.putCheckpoint.run(part.checkpoint, batch.to, part.version, now)
    })
    try {
      transaction.immediate()
    } catch (error) {
      // Rolled back: the memory may hold this transaction's writes.
      memory.clear()
      throw error
    }
  }

  async clearProjection(projection: ProjectionName, checkpoints: readonly string[]): Promise<void> {
    const db = this.db
    this.dfMemory.clear()
    db.transaction(() => {
      SLICE_CLEARS[projection](db)
      const remove = db.prepare<[string]>(CHECKPOINTS.remove)
      const removeStop = db.prepare<[string]>(CHECKPOINTS.removeStop)
      for (const name of checkpoints) {
        remove.run(name)
        removeStop.run(name)
      }
    }).immediate()
  }

  async reset(): Promise<void> {
    // The prepared statements name tables that are dropped and made again.
    this.applyStatements = null
    this.dfMemory.clear()
    remakeReadModels(this.db)
  }

  /**
   * Makes the query indexes a rebuild or a new file left out (ensureQueryIndexes): a read of
   * sqlite_schema when they are there. When another connection holds the file's write lock past
   * the busy timeout (another projector, or a long apply), it leaves them to a later call.
   */
  async atHead(): Promise<void> {
    try {
      ensureQueryIndexes(this.db)
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') return
      throw error
    }
  }

  async projections(): Promise<ProjectionState[]> {
    return this.db.prepare<[], ProjectionStateRow>(CHECKPOINTS.projections).all().map(projectionStateOf)
  }

  async recordStop(stop: ProjectionStop): Promise<void> {
    this.db.prepare<[string, string]>(CHECKPOINTS.putStop).run(stop.projection, JSON.stringify(stop))
  }

  async clearStop(name: string): Promise<void> {
    this.db.prepare<[string]>(CHECKPOINTS.removeStop).run(name)
  }

  async close(): Promise<void> {}
}
