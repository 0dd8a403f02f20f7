/**
 * The embedded default's read models in SQLite files of their own, one per projection runner
 * (docs/architecture.md#projection-runners-and-leases; README § Read models), beside the log's
 * `ocelog.db`: `<OCELOG_DATA_DIR>/read-models.db` (the `entities` runner's read models) and
 * `read-models-process.db` (the `process` runner's: directly-follows). Log appends and each runner's
 * writes never wait on one write lock (SQLite has one writer per file), and the files are disposable.
 *
 * - Readers open `read-models.db` with `read-models-process.db` attached as schema `process`
 *   (openReadModelsDatabase): a read transaction holds one snapshot of each file, and a table's name
 *   is that of exactly one file, but for the identity tables both hold (`rm_checkpoints`,
 *   `rm_projection_stops`, `rm_datasets`, `rm_objects`), which readers take from the main file.
 * - The two files hold the same row ids for datasets and objects, because each is a function of
 *   the log alone (didOfPosition, ridOf): a reader joins the two files on them.
 *
 * - Disposable: everything in it is derived from the log. A missing file, or one of another schema
 *   version, is (re)made empty at open; its projectors then find no checkpoint and replay the whole
 *   log into it. No migration is ever written for it: a new schema version is a rebuild.
 * - Durability: WAL with `synchronous=NORMAL`. A power cut may lose the last transactions, never
 *   consistency, and each transaction carries its checkpoint with its rows, so the projector
 *   re-applies exactly what was lost. The log (`ocelog.db`) keeps `synchronous=FULL`.
 */
import Database from 'better-sqlite3'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { RUNNER_NAMES, type RunnerName } from '../../../core/runner-groups.js'
import type { SqliteDatabase } from '../log/database.js'
import { DECLARED_TYPES_SCHEMA, DECLARED_TYPES_TABLES } from './sqlite-declared-types.js'
import { DF_PROJECTOR_INDEXES, DF_SCHEMA, DF_TABLES } from './sqlite-df-writes.js'

/** The `entities` runner's file, inside OCELOG_DATA_DIR; readers open it with the other attached. */
export const READ_MODELS_FILE = 'read-models.db'

/** The `process` runner's file (directly-follows), inside OCELOG_DATA_DIR. */
export const PROCESS_READ_MODELS_FILE = 'read-models-process.db'

/** The schema name under which readers' connections attach PROCESS_READ_MODELS_FILE. */
export const PROCESS_SCHEMA = 'process'

/** The read models' files, one per projection runner (src/core/runner-groups.ts): a file is named by its runner. */
export type ReadModelsFileKind = RunnerName

/** Every file, in the order they are opened. */
export const READ_MODELS_FILE_KINDS: readonly ReadModelsFileKind[] = RUNNER_NAMES

/**
 * SQL: every checkpoint (`projector`, `position`) of both files, on a readers' connection
 * (openReadModelsDatabase, openReadModelsReadOnly), as a subquery for the callers' own filters.
 */
export const ALL_CHECKPOINTS_SQL = `SELECT projector, position FROM main.rm_checkpoints UNION ALL SELECT projector, position FROM ${PROCESS_SCHEMA}.rm_checkpoints`

/** The name of each file inside OCELOG_DATA_DIR. */
export const READ_MODELS_FILE_NAMES: { readonly [K in ReadModelsFileKind]: string } = { entities: READ_MODELS_FILE, process: PROCESS_READ_MODELS_FILE }

/**
 * The schema version this build writes (SQLite's user_version, the same in both files); a file of
 * another version is remade and rebuilt from the log. 19: a file per runner, and row ids of the log;
 * 20: one index of each edge's directly-follows couples, in time order.
 */
export const READ_MODELS_SCHEMA_VERSION = 20

/** Page cache of one connection to the file, in KiB (SQLite's negative cache_size): the projector's random-keyed inserts stay in memory. */
const CACHE_KIB = 16 * 1024

/**
 * Page size of a read-models file made by this build, in bytes (SQLite's page_size, set before the
 * file's first table; a file made with another size keeps it, as SQLite does in WAL mode). Each
 * commit of a runner writes every page it changed to the WAL, a frame and a system call or two per
 * page, and the runners' keys (an object's steps, its membership counts) land on pages all over the
 * file: pages of 16 KiB against SQLite's 4 KiB cut the catch-up's CPU by a few percent at the same
 * cache bytes (bench/HISTORY.md#read-models-pages-of-16-kib).
 */
export const READ_MODELS_PAGE_SIZE = 16_384

/**
 * The read models in narrow rows (docs/read-models.md#the-embedded-layout). The projector's cost
 * is the pages it dirties per transaction, and an index keyed by a random UUID dirties one page per
 * row; so the wide text keys of the records (dataset id, object id, event id) are stored once, and
 * every other row and index holds integers:
 * - `rm_datasets.did`: a dataset's row id, the log position of its first record (didOf in the store);
 * - `rm_objects.rid`: an object's row id, ridOf(the position of the first record that names it, its
 *   index among that record's objects): in order of first appearance in the log, and the same in
 *   both files;
 * - events and E2O rows are keyed by the event's log position (unique in the embedded log), so
 *   they are appended in key order;
 * - every time column (`time`, `end_time`, `received_at`, `created_at`, `updated_at`): milliseconds
 *   since the epoch (the log's timestamps are UTC with milliseconds, so this is exact); readers turn
 *   them back into ISO 8601;
 * - `event_id`/`object_id`: a canonical UUID's 16 bytes (storedId; readers turn them back, idTextSql);
 * - `rm_events.event_type_id` and the E2O and O2O rows' `qualifier_id`: the name's row in `rm_names`
 *   (a dictionary of names, shared by every dataset and projection, cleared only with the whole
 *   file; nameSql, nameIdSql).
 * E2O and O2O rows without a qualifier hold the id of NO_QUALIFIER (0).
 *
 * E2O rows are kept by event (`rm_event_objects`), written in append order: each row gets the
 * next `seq` (its rowid) when it is written, and an event's rows are consecutive, from
 * `rm_events.e2o_first`, `rm_events.e2o` of them; readers take an event's rows as that rowid range,
 * with no index to keep. By object, readers take each object's (object, event) pairs, in time and
 * position order, from the directly-follows read model's steps (`rm_df_steps` by its index
 * `rm_df_steps_by_object`: one step per pair, qualifiers merged; objectEventsSql), which the
 * projector keeps anyway: a second copy of every E2O row by object cost the file 37 MiB per
 * million events (bench/HISTORY.md#read-model-bytes). A record's rows are written once: its
 * run's transaction moves the projector's checkpoint past it (apply's checkpoint check), and
 * shards take disjoint datasets.
 *
 * Shared by every projection and cleared only with the whole file: `rm_datasets`, `rm_names` and the identity
 * of each object in `rm_objects` (rid, dataset, object id, type, external id, `created_at` and
 * `first_position`, the position of the first record that named it); the objects projection owns
 * the rest of the row (attributes, `updated_at`, `position`; 0 until it applies the object).
 *
 * The tables, with the keys and the one index the projector itself reads (objects by dataset, type
 * and external id, which identify an object as its object id does: UUIDv5 of the three).
 * The readers' indexes are QUERY_INDEXES, made apart (ensureQueryIndexes).
 */
const IDENTITY_SCHEMA = `
CREATE TABLE rm_checkpoints (
  projector   TEXT PRIMARY KEY,
  position    INTEGER NOT NULL,
  version     INTEGER NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE TABLE rm_projection_stops (
  projector  TEXT PRIMARY KEY,
  stop       TEXT NOT NULL
);
CREATE TABLE rm_datasets (
  did        INTEGER PRIMARY KEY,
  dataset_id TEXT NOT NULL UNIQUE
);
CREATE TABLE rm_objects (
  rid INTEGER PRIMARY KEY, did INTEGER NOT NULL, object_id BLOB NOT NULL, type TEXT NOT NULL, external_id TEXT NOT NULL,
  properties TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, position INTEGER NOT NULL,
  first_position INTEGER NOT NULL
);
CREATE UNIQUE INDEX rm_objects_by_type_id ON rm_objects (did, type, external_id);
`

/** The `entities` runner's tables besides the identities (read-models.db). */
const ENTITY_SCHEMA = `
CREATE TABLE rm_names (
  nid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE
);
INSERT INTO rm_names (nid, name) VALUES (0, '');
CREATE TABLE rm_event_types (
  dataset_id TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
  first_seen_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, count INTEGER NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, name)
);
CREATE TABLE rm_object_types (
  dataset_id TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
  first_seen_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, count INTEGER NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, name)
);
CREATE TABLE rm_object_changes (
  rid INTEGER NOT NULL, position INTEGER NOT NULL, time INTEGER NOT NULL, attributes TEXT NOT NULL,
  PRIMARY KEY (rid, position)
) WITHOUT ROWID;
CREATE TABLE rm_events (
  position INTEGER PRIMARY KEY, did INTEGER NOT NULL, event_id BLOB NOT NULL, event_type_id INTEGER NOT NULL,
  time INTEGER NOT NULL, end_time INTEGER, properties TEXT NOT NULL, objects_count INTEGER NOT NULL,
  e2o INTEGER NOT NULL, e2o_first INTEGER NOT NULL, received_at INTEGER NOT NULL
);
CREATE TABLE rm_event_objects (
  seq INTEGER PRIMARY KEY, position INTEGER NOT NULL, rid INTEGER NOT NULL, qualifier_id INTEGER NOT NULL
);
CREATE TABLE rm_object_relationships (
  rid INTEGER NOT NULL, target_rid INTEGER NOT NULL, qualifier_id INTEGER NOT NULL, time INTEGER NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (rid, target_rid, qualifier_id)
) WITHOUT ROWID;
CREATE TABLE rm_audit_chain (
  position INTEGER PRIMARY KEY, did INTEGER NOT NULL, seq INTEGER NOT NULL, hash BLOB NOT NULL
);
CREATE TABLE rm_audit_heads (
  did INTEGER PRIMARY KEY, position INTEGER NOT NULL, seq INTEGER NOT NULL, hash BLOB NOT NULL
);
`

/** The identity tables, which both files hold (IDENTITY_SCHEMA), in the order they are dropped. */
const IDENTITY_TABLES = ['rm_checkpoints', 'rm_projection_stops', 'rm_datasets', 'rm_objects'] as const

/** The tables of ENTITY_SCHEMA, in the order they are dropped. */
const ENTITY_TABLES = [
  'rm_names',
  'rm_event_types',
  'rm_object_types',
  'rm_object_changes',
  'rm_events',
  'rm_event_objects',
  'rm_object_relationships',
  'rm_audit_chain',
  'rm_audit_heads',
] as const

/** Each file's schema and tables: the identities, and its runner's read models. */
const FILE_LAYOUT: { readonly [K in ReadModelsFileKind]: { schema: string; tables: readonly string[] } } = {
  entities: { schema: IDENTITY_SCHEMA + ENTITY_SCHEMA + DECLARED_TYPES_SCHEMA, tables: [...IDENTITY_TABLES, ...ENTITY_TABLES, ...DECLARED_TYPES_TABLES] },
  process: { schema: IDENTITY_SCHEMA + DF_SCHEMA, tables: [...IDENTITY_TABLES, ...DF_TABLES] },
}

/** Row ids per log position (ridOf). */
const RID_SPAN = 128

/**
 * An object's row id (`rm_objects.rid`, the same in both files): `position` × 128 + `index`, where
 * `position` is the log position of the first record that names the object and `index` its place
 * among that record's objects (below 128: a record names at most 101, an upsert and its 100 O2O
 * targets, docs/api.md#limits). Exact up to position 2^46.
 * @throws RangeError when `index` is out of 0..127.
 */
export function ridOf(position: number, index: number): number {
  if (!Number.isInteger(index) || index < 0 || index >= RID_SPAN)
    throw new RangeError(`object index ${String(index)} of a record is outside 0..${String(RID_SPAN - 1)}`)
  return position * RID_SPAN + index
}

/**
 * E2O and O2O rows without a qualifier hold this name's id in their key (the key needs a value; the
 * API never accepts ''): 0, a row of `rm_names` from the start, which SQLite stores in no bytes.
 */
export const NO_QUALIFIER = ''

/** A qualifier as the key column holds it. */
export const storedQualifier = (qualifier: string | null): string => qualifier ?? NO_QUALIFIER

/** A qualifier column as the read models' row shapes give it (null: none was sent). */
export const qualifierOf = (stored: string): string | null => (stored === NO_QUALIFIER ? null : stored)

/** A canonical UUID as the API writes them (lowercase, hyphenated; RFC 9562 § 4). */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The same as a SQLite GLOB pattern (case-sensitive, of length 36). */
const CANONICAL_UUID_GLOB = ['[0-9a-f]'.repeat(8), '[0-9a-f]'.repeat(4), '[0-9a-f]'.repeat(4), '[0-9a-f]'.repeat(4), '[0-9a-f]'.repeat(12)].join('-')

/**
 * An event or object id as the `event_id`/`object_id` columns hold it: a canonical UUID (every id
 * the log holds: events' UUIDv7, objects' UUIDv5) as its 16 bytes (a BLOB), any other id as its
 * text. Readers turn the column back into the same string (idTextSql).
 */
export function storedId(id: string): Buffer | string {
  return CANONICAL_UUID.test(id) ? Buffer.from(id.replaceAll('-', ''), 'hex') : id
}

/** SQL: the id text (lowercase, hyphenated UUID) of `column`, a column holding storedId's values. */
export function idTextSql(column: string): string {
  const hex = (from: number, length?: number) => `substr(hex(${column}), ${String(from)}${length === undefined ? '' : `, ${String(length)}`})`
  const text = [hex(1, 8), hex(9, 4), hex(13, 4), hex(17, 4), hex(21)].join(` || '-' || `)
  return `CASE WHEN typeof(${column}) = 'blob' THEN lower(${text}) ELSE ${column} END`
}

/** SQL: the stored ids (storedId) of the ids in a JSON array bound as `param`, one per row. */
export function storedIdsSql(param: string): string {
  return `SELECT CASE WHEN value GLOB '${CANONICAL_UUID_GLOB}' THEN unhex(replace(value, '-', '')) ELSE value END FROM json_each(${param})`
}

/** SQL: the name (rm_names) of the name id `column` holds, e.g. an event's type. */
export const nameSql = (column: string): string => `(SELECT name FROM rm_names WHERE nid = ${column})`

/** SQL: the id in rm_names of the name bound as `param` (NULL when no row names it, which matches nothing). */
export const nameIdSql = (param: string): string => `(SELECT nid FROM rm_names WHERE name = ${param})`

/** Every name of rm_names, by id (a few dozen rows: the event types of every dataset). */
export function namesById(db: SqliteDatabase): Map<number, string> {
  const rows = db.prepare<[], { nid: number; name: string }>('SELECT nid, name FROM rm_names').all()
  return new Map(rows.map((r) => [r.nid, r.name]))
}

/** A time column's value (epoch milliseconds) of one of the log's UTC ISO 8601 timestamps: exact, they carry milliseconds. */
export const epochMsOf = (utc: string): number => Date.parse(utc)

/** A time column (epoch milliseconds) as the log's UTC ISO 8601 with milliseconds. */
export const isoOfEpochMs = (ms: number): string => new Date(ms).toISOString()

/**
 * The indexes only readers use (the query adapter, sqlite-read-model-query.ts). A file made anew,
 * or remade for a rebuild, starts without them, and the projector's store makes them once it has
 * replayed the log to its head (ReadModelStore.atHead): building an index once over sorted rows
 * costs a fraction of keeping it up to date through a replay (a bulk load;
 * bench/HISTORY.md#2026-11-24-the-narrow-read-model-layout). Until then readers get the same answers, from scans.
 */
const QUERY_INDEXES: readonly { name: string; sql: string }[] = [
  { name: 'rm_events_by_time', sql: 'CREATE INDEX IF NOT EXISTS rm_events_by_time ON rm_events (did, time)' },
  { name: 'rm_events_by_type', sql: 'CREATE INDEX IF NOT EXISTS rm_events_by_type ON rm_events (did, event_type_id, time)' },
  { name: 'rm_object_relationships_by_target', sql: 'CREATE INDEX IF NOT EXISTS rm_object_relationships_by_target ON rm_object_relationships (target_rid)' },
]

/**
 * The condition that an `rm_event_objects` row (alias `rows`) is one of the event `event`'s (an
 * `rm_events` alias): its rowid range, from `e2o_first`, `e2o` rows.
 */
export const EVENT_E2O_ROWS = (rows: string, event: string): string => `${rows}.seq BETWEEN ${event}.e2o_first AND ${event}.e2o_first + ${event}.e2o - 1`

/**
 * Each object's (object, event) pairs as readers take them (docs/read-models.md#the-embedded-layout):
 * the directly-follows steps (`rm_df_steps`, one per pair), each with `rid`, `time` (the event's,
 * epoch ms) and `position`, by the index `rm_df_steps_by_object` (rid, time, position). `where` is a
 * condition on `rid` (e.g. `rid = @rid`; `true` for a join on `rid`). An event's qualifiers for the
 * object are its E2O rows (`rm_event_objects`, EVENT_E2O_ROWS) of that `rid`.
 */
export function objectEventsSql(where: string): string {
  return `SELECT rid, t AS time, pos AS position FROM rm_df_steps WHERE ${where}`
}

/** The last `seq` of `rm_event_objects` (0: none): the next row takes the one after it. */
export function lastE2oSeq(db: SqliteDatabase): number {
  return db.prepare<[], number>('SELECT coalesce(max(seq), 0) FROM rm_event_objects').pluck().get() ?? 0
}

/**
 * The indexes the projector itself reads (never dropped for a rebuild), sorted: objects by their
 * identity (in both files), and the directly-follows steps by object and by edge (DF_PROJECTOR_INDEXES).
 */
export const PROJECTOR_INDEXES: readonly string[] = [...DF_PROJECTOR_INDEXES, 'rm_objects_by_type_id']

/** Whether `db` has the process file attached (a readers' connection, openReadModelsDatabase). */
export function hasProcessAttached(db: SqliteDatabase): boolean {
  return (db.pragma('database_list') as { name: string }[]).some((d) => d.name === PROCESS_SCHEMA)
}

/**
 * The names of the read models' own indexes (`rm_…`, SQLite's automatic key indexes left out), sorted
 * and without repeats: of the file `db` opened, and of the attached process file on a readers' connection.
 */
export function readModelIndexes(db: SqliteDatabase): string[] {
  const schemas = hasProcessAttached(db) ? ['main', PROCESS_SCHEMA] : ['main']
  const sql = schemas.map((schema) => `SELECT name FROM ${schema}.sqlite_schema WHERE type = 'index' AND name LIKE 'rm_%'`).join(' UNION ')
  const rows = db.prepare(`${sql} ORDER BY name`).all() as { name: string }[]
  return rows.map((r) => r.name)
}

/** The query indexes (QUERY_INDEXES, all of the entities file) that the main file of `db` lacks: one read of sqlite_schema. */
function missingQueryIndexes(db: SqliteDatabase): { name: string; sql: string }[] {
  const rows = db.prepare("SELECT name FROM main.sqlite_schema WHERE type = 'index' AND name LIKE 'rm_%'").all() as { name: string }[]
  const present = new Set(rows.map((r) => r.name))
  return QUERY_INDEXES.filter((i) => !present.has(i.name))
}

/** Whether the entities file (the main file of `db`) holds every query index (QUERY_INDEXES): false during a rebuild, until the replay reaches the head. */
export function hasQueryIndexes(db: SqliteDatabase): boolean {
  return missingQueryIndexes(db).length === 0
}

/**
 * Makes the query indexes (QUERY_INDEXES) that the entities file (the main file of `db`, a
 * connection without the process file attached) lacks, in one transaction.
 * @returns the names of the indexes it made (none when all were there: one read of sqlite_schema).
 */
export function ensureQueryIndexes(db: SqliteDatabase): string[] {
  const missing = missingQueryIndexes(db)
  if (missing.length === 0) return []
  db.transaction(() => {
    for (const index of missing) db.exec(index.sql)
  }).immediate()
  return missing.map((i) => i.name)
}

export interface ReadModelsFile {
  /** A readers' connection (openReadModelsDatabase: the process file attached), or a runner's file alone (openReadModelsFile). */
  db: SqliteDatabase
  /** Why a file was made at this open (then its read models are rebuilt from the log), or null when both were there and current. */
  made: string | null
}

function connect(path: string): SqliteDatabase {
  const db = new Database(path)
  db.pragma(`page_size = ${String(READ_MODELS_PAGE_SIZE)}`)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma(`cache_size = -${String(CACHE_KIB)}`)
  // Checkpoint the WAL into the file every 20,000 pages (about 80 MB) instead of SQLite's 1,000:
  // the projector writes in bursts, and fewer, larger checkpoints cost it about a tenth less.
  db.pragma('wal_autocheckpoint = 20000')
  return db
}

/**
 * Opens one runner's file, `<dataDir>/<READ_MODELS_FILE_NAMES[kind]>`, alone: the connection a
 * runner's store writes through (a connection with a file attached would take both files' write
 * locks in each of its write transactions). Makes the file (empty, at READ_MODELS_SCHEMA_VERSION)
 * when it is missing, and makes it again when it holds another schema version. Safe when several
 * processes open it at once on a current file; remaking a file of an old version assumes no other
 * process of the old build still has it open (an upgrade stops the old processes first).
 * @throws when the folder cannot be created or the file cannot be opened or written.
 */
export function openReadModelsFile(dataDir: string, kind: ReadModelsFileKind): ReadModelsFile {
  mkdirSync(dataDir, { recursive: true })
  const name = READ_MODELS_FILE_NAMES[kind]
  const path = join(dataDir, name)
  let made: string | null = existsSync(path) ? null : `${name} is missing`
  let db = connect(path)
  const version = Number(db.pragma('user_version', { simple: true }))
  if (version !== 0 && version !== READ_MODELS_SCHEMA_VERSION) {
    db.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
    made = `${name} had schema version ${String(version)}; this build writes version ${String(READ_MODELS_SCHEMA_VERSION)}`
    db = connect(path)
  }
  // A current file needs no write lock (another connection may hold it for long, as a runner's transaction does).
  if (version === READ_MODELS_SCHEMA_VERSION) return { db, made }
  db.transaction(() => {
    // Another process may have made it between our read and this write lock.
    if (Number(db.pragma('user_version', { simple: true })) === READ_MODELS_SCHEMA_VERSION) return
    made ??= `${name} was empty`
    db.exec(FILE_LAYOUT[kind].schema)
    db.pragma(`user_version = ${String(READ_MODELS_SCHEMA_VERSION)}`)
  }).immediate()
  return { db, made }
}

/**
 * Opens the read models for readers: `<dataDir>/read-models.db`, with `read-models-process.db`
 * attached as schema `process` (PROCESS_SCHEMA), each made or remade first as openReadModelsFile
 * does. The stores' writes go through connections of their own (SqliteReadModelStore).
 * @returns the connection, and why a file was made (both reasons, when both were).
 * @throws when the folder cannot be created or a file cannot be opened or written.
 */
export function openReadModelsDatabase(dataDir: string): ReadModelsFile {
  const processFile = openReadModelsFile(dataDir, 'process')
  processFile.db.close()
  const entities = openReadModelsFile(dataDir, 'entities')
  try {
    attachProcessFile(entities.db, dataDir)
  } catch (error) {
    entities.db.close()
    throw error
  }
  const made = [entities.made, processFile.made].filter((m) => m !== null)
  return { db: entities.db, made: made.length === 0 ? null : made.join('; ') }
}

/**
 * Opens the read models read-only, as openReadModelsDatabase's readers see them (the process file
 * attached as `process`), without making or remaking either file: for tools that watch a running
 * service's data dir (the bench).
 * @throws when a file is missing or cannot be opened.
 */
export function openReadModelsReadOnly(dataDir: string): SqliteDatabase {
  const db = new Database(join(dataDir, READ_MODELS_FILE), { readonly: true, fileMustExist: true })
  try {
    if (!existsSync(join(dataDir, PROCESS_READ_MODELS_FILE))) throw new Error(`${PROCESS_READ_MODELS_FILE} is missing in ${dataDir}`)
    attachProcessFile(db, dataDir)
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

/** Attaches `<dataDir>/read-models-process.db` to `db` as schema `process`, with the same page cache as a file of its own. */
function attachProcessFile(db: SqliteDatabase, dataDir: string): void {
  db.prepare(`ATTACH DATABASE ? AS ${PROCESS_SCHEMA}`).run(join(dataDir, PROCESS_READ_MODELS_FILE))
  db.pragma(`${PROCESS_SCHEMA}.cache_size = -${String(CACHE_KIB)}`)
}

/**
 * Empties one runner's file (`db`, opened by openReadModelsFile) as a new one would be (README: a
 * rebuild is a fresh file plus a replay of the log): drops every table of the file, checkpoints and
 * stops included, and makes them again, in one transaction, without the query indexes (made when
 * the replay reaches the log's head, ensureQueryIndexes). Dropping is one step per table where
 * deleting rows is one per row.
 */
export function remakeReadModels(db: SqliteDatabase, kind: ReadModelsFileKind): void {
  const layout = FILE_LAYOUT[kind]
  db.transaction(() => {
    for (const table of layout.tables) db.exec(`DROP TABLE IF EXISTS ${table}`)
    db.exec(layout.schema)
  }).immediate()
}
