/**
 * ReadModelStore adapter on the embedded read models' files, one per projection runner
 * (read-models-database.ts: read-models.db for `entities`, read-models-process.db for `process`),
 * each written through a connection of its own. `apply` writes each file's part of a batch in one
 * transaction of that file, so a crash leaves either all of a file's part or none: the
 * compare-and-set of the file's projections' checkpoints, the identities of the datasets and
 * objects the batch names (rows both files hold, written first, with row ids of the log), each
 * projection's slice by its own write (sqlite-slice-writes.ts), and every checkpoint with its
 * version. A batch of both runners' projections (one projector of every projection) writes the two
 * files one after the other: each projection's checkpoint moves with its own rows, which is all the
 * replay rule needs. Its writes are set-based (multi-row statements, multi-row.ts), and an object's
 * attributes are read and merged only when a record of the run set some.
 */
import Database from 'better-sqlite3'
import { LRUCache } from 'lru-cache'
import {
  type ChangeBatch,
  KEY_SEP,
  type NamedObject,
  type ObjectsSlice,
  PROJECTION_NAMES,
  type ProjectionName,
  type SliceBatches,
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
import { dirname } from 'node:path'
import { projectionOfCheckpoint, runnerOf } from '../../../core/runner-groups.js'
import {
  ensureQueryIndexes,
  epochMsOf,
  openReadModelsFile,
  READ_MODELS_FILE_KINDS,
  type ReadModelsFileKind,
  remakeReadModels,
  ridOf,
  storedId,
} from './read-models-database.js'
import { lazily, prepareSliceStatements, SLICE_CLEARS, SLICE_WRITES, type SliceWriteContext, type StoredObject } from './sqlite-slice-writes.js'

/** The checkpoints' and stops' statements (shared with PostgreSQL). */
const CHECKPOINTS = checkpointsSql(SQLITE)

/** The statements of `apply` besides the slices' own: datasets, objects' identities, checkpoints. */
function prepareApplyStatements(db: SqliteDatabase) {
  return {
    slices: prepareSliceStatements(db),
    getDataset: db.prepare<[string], { id: number }>('SELECT did AS id FROM rm_datasets WHERE dataset_id = ?'),
    // A dataset's row id is the position of its first record (the same in both files).
    putDataset: db.prepare<[number, string]>('INSERT OR IGNORE INTO rm_datasets (did, dataset_id) VALUES (?, ?)'),
    // The names' dictionary is the entities file's alone: prepared at first use.
    names: lazily({
      get: () => db.prepare<[string], { id: number }>('SELECT nid AS id FROM rm_names WHERE name = ?'),
      put: () => db.prepare('INSERT INTO rm_names (name) VALUES (?)'),
    }),
    // The stored rows of a run's objects, in one statement per few hundred objects: `[did, type, external id]` triples, by the identity index.
    // Each row names its triple by its index in the list (`i`): the object's id is the named object's, without reading it back.
    getObjects: db.prepare<[string], { i: number; rid: number; properties: string; position: number; first_position: number }>(
      `SELECT j.key AS i, o.rid, o.properties, o.position, o.first_position FROM json_each(?) AS j
       CROSS JOIN rm_objects AS o ON o.did = j.value ->> 0 AND o.type = j.value ->> 1 AND o.external_id = j.value ->> 2`,
    ),
    // An object by its id alone, outside the batch's named objects (none in practice): a scan, no index holds object ids.
    getObjectById: db.prepare<[Buffer | string], { rid: number }>('SELECT rid FROM rm_objects WHERE object_id = ?'),
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
 * Objects' identity rows a runner's file store keeps between its transactions (IdentityCache): the
 * hot objects of a log (its customers, products, resources), as DF_MEMORY_OBJECTS. An entry costs
 * about 200 bytes (its id, the row's values, the cache's own entry; bench/HISTORY.md#the-audit-chains-texts-hashed-as-written-and-recent-objects-identity-rows-kept-on-f26ef10).
 */
const IDENTITY_CACHE_OBJECTS = 16_384

/**
 * The identity rows (StoredObject) of the objects a file's recent transactions named, by object id:
 * a cache of the file, never a source. The store keeps it true as it does the directly-follows
 * memory (DfObjectMemory): the objects write updates each row it changes in place (writeObjects),
 * and the store clears the cache when a transaction does not commit, when it clears a projection,
 * and when another connection committed to the file since this one's last transaction.
 */
type IdentityCache = LRUCache<string, StoredObject>

/**
 * The identity step of a batch: takes the rows of the objects it names from `cache` (IdentityCache),
 * reads the stored rows of the others and makes the rows of new ones, with row ids of the log
 * (ridOf: the record that first named them and their index in it, so the two files agree) and
 * `first_position` that record. A new object that the objects
 * projection's slice holds gets its whole row at once (then that slice's write finds it applied);
 * any other new object gets an empty one (no attributes, position 0) for the objects projection to fill.
 * @param cache the file's recent identity rows: the rows this step reads or makes are put in it.
 * @returns every named object's row, by object id, and the smallest row id this step made (every
 *   object it did not make has a smaller one: it was first named before this batch's records;
 *   Infinity when it made none).
 */
function writeIdentities(
  st: ApplyStatements,
  named: ReadonlyMap<string, NamedObject>,
  objects: ObjectsSlice | undefined,
  didOf: (datasetId: string) => number,
  cache: IdentityCache,
): { stored: Map<string, StoredObject>; firstNewRid: number } {
  const stored = new Map<string, StoredObject>()
  const list: NamedObject[] = []
  for (const o of named.values()) {
    const row = cache.get(o.objectId)
    if (row === undefined) list.push(o)
    else stored.set(o.objectId, row)
  }
  for (let i = 0; i < list.length; i += LOOKUP_CHUNK) {
    const chunk = list.slice(i, i + LOOKUP_CHUNK)
    const ids = JSON.stringify(chunk.map((o) => [didOf(o.datasetId), o.type, o.externalId]))
    for (const row of st.getObjects.all(ids)) {
      const named = chunk[row.i]
      if (named === undefined) throw new Error(`identity lookup answered index ${String(row.i)} of ${String(chunk.length)}`)
      const found = { rid: row.rid, properties: row.properties, position: row.position, firstPosition: row.first_position }
      stored.set(named.objectId, found)
      cache.set(named.objectId, found)
    }
  }
  let firstNewRid = Number.POSITIVE_INFINITY
  const put = st.putObjects.rows()
  for (const o of named.values()) {
    if (stored.has(o.objectId)) continue
    const rid = ridOf(o.position, o.index)
    if (rid < firstNewRid) firstNewRid = rid
    const whole = objects?.objects.get(o.datasetId + KEY_SEP + o.objectId)
    const properties = JSON.stringify(whole?.properties ?? {})
    const updatedAt = epochMsOf(whole?.lastSeenAt ?? o.firstSeenAt)
    const position = whole?.maxPosition ?? 0
    put.add(rid)
    put.add(didOf(o.datasetId))
    put.add(storedId(o.objectId))
    put.add(o.type)
    put.add(o.externalId)
    put.add(properties)
    put.add(epochMsOf(o.firstSeenAt))
    put.add(updatedAt)
    put.add(position)
    put.add(o.position)
    const made = { rid, properties, position, firstPosition: o.position }
    stored.set(o.objectId, made)
    cache.set(o.objectId, made)
  }
  put.end()
  return { stored, firstNewRid }
}

/**
 * The id of a name in rm_names: read by `get` (a row with `id`), else made by `put` (its rowid), and
 * kept in a map for the caller's transaction.
 */
function idCache(names: { get: Database.Statement<[string], { id: number }>; put: Database.Statement }): (key: string) => number {
  const ids = new Map<string, number>()
  return (key) => {
    let id = ids.get(key) ?? names.get.get(key)?.id
    if (id === undefined) id = Number(names.put.run(key).lastInsertRowid)
    ids.set(key, id)
    return id
  }
}

/**
 * Registers the batch's datasets (`datasets`: each one's first position among the batch's records)
 * that the file lacks, with that position as their row id, and returns the lookup of row ids for
 * the transaction. A dataset's first record is in the first batch that folds any of its records,
 * so its row id is the position of its first record in the log, in both files.
 * @throws Error when asked for a dataset the batch did not name (a bug of the fold).
 */
function registerDatasets(st: ApplyStatements, datasets: ReadonlyMap<string, number>): (datasetId: string) => number {
  const ids = new Map<string, number>()
  for (const [datasetId, position] of datasets) {
    const did = st.putDataset.run(position, datasetId).changes === 1 ? position : st.getDataset.get(datasetId)?.id
    if (did === undefined) throw new Error(`dataset ${datasetId} has no row in rm_datasets after its registration`)
    ids.set(datasetId, did)
  }
  return (datasetId) => {
    const did = ids.get(datasetId)
    if (did === undefined) throw new Error(`a read-model row names dataset ${datasetId}, which the batch did not name`)
    return did
  }
}

/** Runs the write of projection `name`'s slice, when the batch has one. */
function writeSlice<K extends ProjectionName>(ctx: SliceWriteContext, batch: ChangeBatch, name: K): void {
  const part = sliceOf(batch.slices, name)
  if (part !== undefined) SLICE_WRITES[name](ctx, part)
}

/** One runner's file and what is written through its connection (the part of SqliteReadModelStore for that file). */
class RunnerFileStore {
  private applyStatements: ApplyStatements | null = null
  /** The directly-follows write's memory of objects between transactions (DfObjectMemory: a cache of this file, kept true here). */
  private readonly dfMemory = new DfObjectMemory()
  /** The identity rows of recently named objects (IdentityCache: a cache of this file, kept true here). */
  private readonly identities: IdentityCache = new LRUCache({ max: IDENTITY_CACHE_OBJECTS })
  /** The file's `data_version` as this connection last saw it in a transaction (null: not yet). */
  private seenDataVersion: number | null = null

  constructor(
    readonly db: SqliteDatabase,
    private readonly kind: ReadModelsFileKind,
  ) {}

  checkpoint(name: string): number | null {
    return positionOf(this.db.prepare<[string], { position: number }>(CHECKPOINTS.position).get(name))
  }

  apply(batch: ChangeBatch): void {
    const db = this.db
    this.applyStatements ??= prepareApplyStatements(db)
    const st = this.applyStatements
    const parts = Object.values(batch.slices)
    // Names' ids (event types), read (or made) once per transaction: another process may remake the file between two.
    const nameId = idCache(st.names)

    const memory = this.dfMemory
    const identities = this.identities
    const transaction = db.transaction(() => {
      // Another connection committed since this one's last transaction: what the memory holds may be stale.
      const version = st.dataVersion.get() ?? null
      if (version !== this.seenDataVersion) {
        memory.clear()
        identities.clear()
        this.seenDataVersion = version
      }
      for (const part of parts) {
        const current = positionOf(st.getCheckpoint.get(part.checkpoint))
        if (current !== part.expected) throw new CheckpointConflictError(part.checkpoint, part.expected, current)
      }
      const didOf = registerDatasets(st, batch.datasets)
      const { stored: objects, firstNewRid } = writeIdentities(st, batch.objects, sliceOf(batch.slices, 'objects')?.slice, didOf, identities)
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
      // Rolled back: the memory and the identity cache may hold this transaction's writes.
      memory.clear()
      identities.clear()
      throw error
    }
  }

  clearProjection(projection: ProjectionName, checkpoints: readonly string[]): void {
    const db = this.db
    this.dfMemory.clear()
    this.identities.clear()
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

  reset(): void {
    // The prepared statements name tables that are dropped and made again.
    this.applyStatements = null
    this.dfMemory.clear()
    this.identities.clear()
    remakeReadModels(this.db, this.kind)
  }

  /**
   * Makes the query indexes a rebuild or a new file left out (ensureQueryIndexes): a read of
   * sqlite_schema when they are there. When another connection holds the file's write lock past
   * the busy timeout (another projector, or a long apply), it leaves them to a later call.
   */
  atHead(): void {
    if (this.kind !== 'entities') return
    try {
      ensureQueryIndexes(this.db)
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') return
      throw error
    }
  }

  projections(): ProjectionState[] {
    return this.db.prepare<[], ProjectionStateRow>(CHECKPOINTS.projections).all().map(projectionStateOf)
  }

  recordStop(stop: ProjectionStop): void {
    this.db.prepare<[string, string]>(CHECKPOINTS.putStop).run(stop.projection, JSON.stringify(stop))
  }

  clearStop(name: string): void {
    this.db.prepare<[string]>(CHECKPOINTS.removeStop).run(name)
  }
}

/** The file of projection `projection`: its runner's (src/projector/runners.ts). */
const fileOfProjection = (projection: ProjectionName): ReadModelsFileKind => runnerOf(projection)

/**
 * The file of checkpoint (or stop) `name`: its projection's, whatever its projector (`<projector>.`)
 * and shard (`-<i>-of-<n>`); the entities file for a name of no projection.
 */
function fileOfCheckpoint(name: string): ReadModelsFileKind {
  const projection = projectionOfCheckpoint(name)
  return projection === null ? 'entities' : fileOfProjection(projection)
}

/** Byte order of two names, as the checkpoints' SQL sorts them (CheckpointsSql.projections). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

export class SqliteReadModelStore implements ReadModelStore {
  /** Each runner's file, opened at first use (a store that only reads checkpoints opens them too). */
  private files: Record<ReadModelsFileKind, RunnerFileStore> | null = null

  /**
   * @param db a connection to the read models (openReadModelsDatabase's): the store writes the files
   *   in its folder through connections of its own (openReadModelsFile), made at first use and closed by `close`.
   * @param options `busyTimeoutMs`: how long a write of the store waits for another connection's write
   *   lock on its file before SQLITE_BUSY (SQLite's busy_timeout; default openReadModelsFile's, 5,000 ms).
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly options: { busyTimeoutMs?: number } = {},
  ) {}

  private file(kind: ReadModelsFileKind): RunnerFileStore {
    if (this.files === null) {
      const dir = dirname(this.db.name)
      const open = (k: ReadModelsFileKind) => {
        const { db } = openReadModelsFile(dir, k)
        if (this.options.busyTimeoutMs !== undefined) db.pragma(`busy_timeout = ${String(this.options.busyTimeoutMs)}`)
        return new RunnerFileStore(db, k)
      }
      this.files = { entities: open('entities'), process: open('process') }
    }
    return this.files[kind]
  }

  async checkpoint(name: string): Promise<number | null> {
    return this.file(fileOfCheckpoint(name)).checkpoint(name)
  }

  async apply(batch: ChangeBatch): Promise<void> {
    const parts: Partial<Record<ReadModelsFileKind, SliceBatches>> = {}
    for (const [name, part] of Object.entries(batch.slices) as [ProjectionName, SliceBatches[ProjectionName]][]) {
      const kind = fileOfProjection(name)
      parts[kind] = { ...parts[kind], [name]: part }
    }
    for (const kind of READ_MODELS_FILE_KINDS) {
      const slices = parts[kind]
      if (slices !== undefined) this.file(kind).apply({ ...batch, slices })
    }
  }

  async clearProjection(projection: ProjectionName, checkpoints: readonly string[]): Promise<void> {
    this.file(fileOfProjection(projection)).clearProjection(projection, checkpoints)
  }

  async reset(): Promise<void> {
    for (const kind of READ_MODELS_FILE_KINDS) this.file(kind).reset()
  }

  async atHead(): Promise<void> {
    for (const kind of READ_MODELS_FILE_KINDS) this.file(kind).atHead()
  }

  async projections(): Promise<ProjectionState[]> {
    const all = READ_MODELS_FILE_KINDS.flatMap((kind) => this.file(kind).projections())
    return all.sort((a, b) => byBytes(a.projection, b.projection))
  }

  async recordStop(stop: ProjectionStop): Promise<void> {
    this.file(fileOfCheckpoint(stop.projection)).recordStop(stop)
  }

  async clearStop(name: string): Promise<void> {
    this.file(fileOfCheckpoint(name)).clearStop(name)
  }

  /** Closes the files' own connections (not the connection it was given). */
  async close(): Promise<void> {
    const files = this.files
    this.files = null
    for (const kind of READ_MODELS_FILE_KINDS) files?.[kind].db.close()
  }
}
