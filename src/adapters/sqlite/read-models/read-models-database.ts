/**
 * The embedded default's read models in their own SQLite file, `<OCELOG_DATA_DIR>/read-models.db`
 * (README § Read models), beside the log's `ocelog.db`: log appends and projection never wait on one
 * write lock, and the file is disposable.
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
import type { SqliteDatabase } from '../log/database.js'
import { DECLARED_TYPES_SCHEMA, DECLARED_TYPES_TABLES } from './sqlite-declared-types.js'
import { DF_PROJECTOR_INDEXES, DF_SCHEMA, DF_TABLES } from './sqlite-df-writes.js'

/** The file's name inside OCELOG_DATA_DIR. */
export const READ_MODELS_FILE = 'read-models.db'

/** The schema version this build writes (SQLite's user_version); a file of another version is remade and rebuilt from the log. */
export const READ_MODELS_SCHEMA_VERSION = 18

/** Page cache of one connection to the file, in KiB (SQLite's negative cache_size): the projector's random-keyed inserts stay in memory. */
const CACHE_KIB = 16 * 1024

/**
 * The read models in narrow rows (docs/read-models.md#the-embedded-layout). The projector's cost
 * is the pages it dirties per transaction, and an index keyed by a random UUID dirties one page per
 * row; so the wide text keys of the records (dataset id, object id, event id) are stored once, and
 * every other row and index holds integers:
 * - `rm_datasets.did`: a dataset's row id in this file, in order of first appearance in the log;
 * - `rm_objects.rid`: an object's row id, assigned in order of first appearance in the log;
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
const SCHEMA = `
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
CREATE TABLE rm_objects (
  rid INTEGER PRIMARY KEY, did INTEGER NOT NULL, object_id BLOB NOT NULL, type TEXT NOT NULL, external_id TEXT NOT NULL,
  properties TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, position INTEGER NOT NULL,
  first_position INTEGER NOT NULL
);
CREATE UNIQUE INDEX rm_objects_by_type_id ON rm_objects (did, type, external_id);
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
 * identity, and the directly-follows steps by object and by edge (DF_PROJECTOR_INDEXES).
 */
export const PROJECTOR_INDEXES: readonly string[] = [...DF_PROJECTOR_INDEXES, 'rm_objects_by_type_id']

/** The names of the file's own indexes (`rm_…`, SQLite's automatic key indexes left out), sorted. */
export function readModelIndexes(db: SqliteDatabase): string[] {
  const rows = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'rm_%' ORDER BY name").all() as { name: string }[]
  return rows.map((r) => r.name)
}

/** The query indexes (QUERY_INDEXES) the file lacks: one read of sqlite_schema. */
function missingQueryIndexes(db: SqliteDatabase): { name: string; sql: string }[] {
  const present = new Set(readModelIndexes(db))
  return QUERY_INDEXES.filter((i) => !present.has(i.name))
}

/** Whether the file holds every query index (QUERY_INDEXES): false during a rebuild, until the replay reaches the head. */
export function hasQueryIndexes(db: SqliteDatabase): boolean {
  return missingQueryIndexes(db).length === 0
}

/**
 * Makes the query indexes (QUERY_INDEXES) that the file lacks, in one transaction.
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
  db: SqliteDatabase
  /** Why the file was made at this open (then its read models are rebuilt from the log), or null when it was there and current. */
  made: string | null
}

function connect(path: string): SqliteDatabase {
  const db = new Database(path)
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
 * Opens `<dataDir>/read-models.db`, making it (empty, at READ_MODELS_SCHEMA_VERSION) when it is
 * missing, and making it again when it holds another schema version. Safe when several processes
 * open it at once on a current file; remaking a file of an old version assumes no other process
 * of the old build still has it open (an upgrade stops the old processes first).
 * @throws when the folder cannot be created or the file cannot be opened or written.
 */
export function openReadModelsDatabase(dataDir: string): ReadModelsFile {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, READ_MODELS_FILE)
  let made: string | null = existsSync(path) ? null : `${READ_MODELS_FILE} is missing`
  let db = connect(path)
  const version = Number(db.pragma('user_version', { simple: true }))
  if (version !== 0 && version !== READ_MODELS_SCHEMA_VERSION) {
    db.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
    made = `${READ_MODELS_FILE} had schema version ${String(version)}; this build writes version ${String(READ_MODELS_SCHEMA_VERSION)}`
    db = connect(path)
  }
  db.transaction(() => {
    // Another process may have made it between our read and this write lock.
    if (Number(db.pragma('user_version', { simple: true })) === READ_MODELS_SCHEMA_VERSION) return
    made ??= `${READ_MODELS_FILE} was empty`
    db.exec(SCHEMA + DF_SCHEMA + DECLARED_TYPES_SCHEMA)
    db.pragma(`user_version = ${String(READ_MODELS_SCHEMA_VERSION)}`)
  }).immediate()
  return { db, made }
}

/** The tables of SCHEMA, in the order they are dropped. */
const TABLES = [
  'rm_checkpoints',
  'rm_projection_stops',
  'rm_datasets',
  'rm_names',
  'rm_event_types',
  'rm_object_types',
  'rm_objects',
  'rm_object_changes',
  'rm_events',
  'rm_event_objects',
  'rm_object_relationships',
  'rm_audit_chain',
  'rm_audit_heads',
  ...DF_TABLES,
  ...DECLARED_TYPES_TABLES,
]

/**
 * Empties the file as a new one would be (README: a rebuild is a fresh file plus a replay of the
 * log): drops every read-model table, checkpoints and stops included, and makes them again, in one
 * transaction, without the query indexes (made when the replay reaches the log's head,
 * ensureQueryIndexes). Dropping is one step per table where deleting rows is one per row.
 */
export function remakeReadModels(db: SqliteDatabase): void {
  db.transaction(() => {
    for (const table of TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`)
    db.exec(SCHEMA + DF_SCHEMA + DECLARED_TYPES_SCHEMA)
  }).immediate()
}
