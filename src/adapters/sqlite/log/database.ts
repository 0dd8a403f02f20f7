/**
 * The embedded default's log file (README § Architecture): the log, the object and idempotency
 * claims and the key store live in `<OCELOG_DATA_DIR>/ocelog.db`, opened in WAL mode with
 * synchronous=FULL so that a committed append survives a power cut (README § The API: a 200 means
 * durable). The read models live beside it in read-models.db (read-models-database.ts); migrations
 * 1 to 5 made them here, and migration 6 drops them.
 */
import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { EngineUnavailableError } from '../../../core/errors.js'
import { startCheck } from '../start-check.js'

export type SqliteDatabase = Database.Database

const MIGRATION_1 = `
CREATE TABLE records (
  position     INTEGER PRIMARY KEY,
  stream       TEXT NOT NULL,
  dataset_id   TEXT NOT NULL,
  type         TEXT NOT NULL,
  version      INTEGER NOT NULL,
  data         TEXT NOT NULL,
  appended_at  TEXT NOT NULL
);
CREATE INDEX records_by_stream ON records (stream, position);
CREATE TRIGGER records_are_immutable_update BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;
CREATE TRIGGER records_are_immutable_delete BEFORE DELETE ON records
  BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;

CREATE TABLE object_claims (
  object_id   TEXT PRIMARY KEY,
  dataset_id  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE datasets (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE TABLE api_keys (
  key_id       TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  dataset_id   TEXT NOT NULL REFERENCES datasets (id),
  scopes       TEXT NOT NULL,
  secret_hash  TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);

CREATE TABLE rm_checkpoints (
  projector   TEXT PRIMARY KEY,
  position    INTEGER NOT NULL,
  updated_at  TEXT NOT NULL
);
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
  dataset_id TEXT NOT NULL, object_id TEXT NOT NULL, type TEXT NOT NULL, external_id TEXT NOT NULL,
  properties TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, object_id)
);
CREATE UNIQUE INDEX rm_objects_by_type_id ON rm_objects (dataset_id, type, external_id);
CREATE TABLE rm_object_changes (
  dataset_id TEXT NOT NULL, object_id TEXT NOT NULL, position INTEGER NOT NULL, time TEXT NOT NULL, attributes TEXT NOT NULL,
  PRIMARY KEY (dataset_id, object_id, position)
);
CREATE TABLE rm_events (
  dataset_id TEXT NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL, timestamp TEXT NOT NULL,
  end_timestamp TEXT, properties TEXT NOT NULL, objects_count INTEGER NOT NULL, received_at TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, event_id)
);
CREATE INDEX rm_events_by_time ON rm_events (dataset_id, timestamp, position);
CREATE TABLE rm_event_objects (
  dataset_id TEXT NOT NULL, event_id TEXT NOT NULL, object_id TEXT NOT NULL, qualifier TEXT NOT NULL,
  object_type TEXT NOT NULL, external_id TEXT NOT NULL, event_time TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, event_id, object_id, qualifier)
);
CREATE TABLE rm_object_links (
  dataset_id TEXT NOT NULL, object_a TEXT NOT NULL, object_b TEXT NOT NULL, event_count INTEGER NOT NULL,
  first_time TEXT NOT NULL, last_time TEXT NOT NULL, event_types TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, object_a, object_b)
);
`

/** Projections stopped on a record they could not apply (one row per projection; `stop` is a ProjectionStop as JSON). */
const MIGRATION_3 = `
CREATE TABLE rm_projection_stops (
  projector  TEXT PRIMARY KEY,
  stop       TEXT NOT NULL
);
`

/**
 * Indexes of the read side's queries (ReadModelQuery, sqlite-read-model-query.ts): an object's
 * events in (timestamp, position) order (traces, the process map's per-object sequences, related
 * objects), events by the client's object id, and events by type in time order.
 */
const MIGRATION_2 = `
CREATE INDEX rm_event_objects_by_object ON rm_event_objects (dataset_id, object_id, event_time, position, event_id, object_type);
CREATE INDEX rm_event_objects_by_external_id ON rm_event_objects (dataset_id, external_id, object_type);
CREATE INDEX rm_events_by_type ON rm_events (dataset_id, event_type, timestamp, position);
`

/**
 * Objects that share events are answered at query time from rm_event_objects; the table of every
 * such pair (k·(k−1)/2 rows for an event with k objects) is dropped.
 */
const MIGRATION_4 = `
DROP TABLE IF EXISTS rm_object_links;
`

/**
 * Exactly once (README § Exactly once): a record's idempotency key and its item's fingerprint are
 * stored with it; a key is unique per dataset, for ever. Records written before carry none.
 */
const MIGRATION_5 = `
ALTER TABLE records ADD COLUMN idempotency_key TEXT;
ALTER TABLE records ADD COLUMN fingerprint TEXT;
CREATE UNIQUE INDEX records_by_idempotency_key ON records (dataset_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
`

/**
 * The read models move to their own file, read-models.db (read-models-database.ts): their tables
 * leave this one. A data dir of an earlier version then has no read-models.db, which is made and
 * rebuilt from the log at the next start.
 */
const MIGRATION_6 = `
DROP TABLE IF EXISTS rm_checkpoints;
DROP TABLE IF EXISTS rm_projection_stops;
DROP TABLE IF EXISTS rm_event_types;
DROP TABLE IF EXISTS rm_object_types;
DROP TABLE IF EXISTS rm_objects;
DROP TABLE IF EXISTS rm_object_changes;
DROP TABLE IF EXISTS rm_events;
DROP TABLE IF EXISTS rm_event_objects;
DROP TABLE IF EXISTS rm_object_links;
`

/**
 * A key's own rate limit (docs/rate-limits.md#how-it-is-counted): requests per minute, NULL for the service's
 * default. Keys of an earlier version read as NULL, so they keep the default.
 */
const MIGRATION_7 = `
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
`

/** The migrations in order: MIGRATIONS[v - 1] brings a file from version v − 1 to v. */
export const MIGRATIONS: readonly string[] = [MIGRATION_1, MIGRATION_2, MIGRATION_3, MIGRATION_4, MIGRATION_5, MIGRATION_6, MIGRATION_7]
/** The schema version of a file whose every migration has run (SQLite's user_version). */
const SCHEMA_VERSION = MIGRATIONS.length

/**
 * Opens (creating when missing) `<dataDir>/ocelog.db` and brings its schema up to date.
 * @param options.cacheKiB the connection's page cache in KiB (default 16,384).
 * @throws when the folder cannot be created or the file is not an Ocelog database of a known version.
 */
export function openDatabase(dataDir: string, options: { cacheKiB?: number } = {}): SqliteDatabase {
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(join(dataDir, 'ocelog.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  // 16 MiB of page cache by default (SQLite's is 2 MiB): the object and key claims that appends
  // check are random-keyed B-trees. A connection that only reads the log in order needs less.
  db.pragma(`cache_size = -${String(options.cacheKiB ?? 16_384)}`)
  const version = Number(db.pragma('user_version', { simple: true }))
  if (version > SCHEMA_VERSION) {
    db.close()
    throw new Error(`${join(dataDir, 'ocelog.db')} has schema version ${String(version)}; this Ocelog knows up to ${String(SCHEMA_VERSION)}`)
  }
  if (version < SCHEMA_VERSION) {
    db.transaction(() => {
      // Another process may have migrated between our read and this write lock.
      const current = Number(db.pragma('user_version', { simple: true }))
      for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
        const migration = MIGRATIONS[v - 1]
        if (migration !== undefined) db.exec(migration)
      }
      if (current < SCHEMA_VERSION) db.pragma(`user_version = ${String(SCHEMA_VERSION)}`)
    }).immediate()
  }
  return db
}

/**
 * Opens the log's `<dataDir>/ocelog.db` (openDatabase) after a check (startCheck). A
 * damaged log is never changed, moved or rebuilt automatically: it holds the only copy of the
 * records, the keys and the claims.
 * @throws EngineUnavailableError naming the file, SQLite's error and the way back (`ocelog verify`,
 *   the last backup with `ocelog restore`; README § Operations).
 */
export function openCheckedLog(dataDir: string): SqliteDatabase {
  const path = join(dataDir, 'ocelog.db')
  let db: SqliteDatabase | null = null
  try {
    db = openDatabase(dataDir)
    const bad = startCheck(db, path, 'records')
    if (bad === null) return db
    throw new Error(`quick_check: ${bad}`)
  } catch (error) {
    try {
      db?.close()
    } catch {
      // the file is refused either way
    }
    if (!(error instanceof Database.SqliteError) && !/^quick_check/.test((error as Error).message)) {
      throw new EngineUnavailableError(`cannot open the SQLite file in OCELOG_DATA_DIR=${dataDir}: ${(error as Error).message}`)
    }
    const code = error instanceof Database.SqliteError ? `${error.code}: ` : ''
    throw new EngineUnavailableError(
      `cannot open the log ${path} (OCELOG_DATA_DIR=${dataDir}): ${code}${(error as Error).message}. ` +
        'Ocelog never changes the log by itself. Keep the file as it is, run `ocelog verify` to see what is damaged, ' +
        'and bring the data directory back from the last backup with `ocelog restore FILE` (README § Operations).',
    )
  }
}
