/** Fresh embedded SQLite files in a temp dir (ocelog.db and read-models.db) with the log, the read-model store and ingest over them, for integration tests. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog, type SqliteEventLogOptions } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import type { FdatasyncFn } from '../../src/adapters/sqlite/log/wal-sync.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { Ingest } from '../../src/write/ingest.js'

export interface SqliteFixture {
  dir: string
  db: SqliteDatabase
  /** read-models.db beside `db`'s ocelog.db. */
  rmDb: SqliteDatabase
  log: SqliteEventLog
  store: SqliteReadModelStore
  ingest: Ingest
  /** Closes the file and removes the temp dir. */
  close(): void
}

/** Opens `<temp dir>/ocelog.db` (prefix names the temp dir) with the log options given. */
export function openSqliteFixture(prefix: string, logOptions: SqliteEventLogOptions = {}): SqliteFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const db = openDatabase(dir)
  const rmDb = openReadModelsDatabase(dir).db
  const log = new SqliteEventLog(db, logOptions)
  const store = new SqliteReadModelStore(rmDb)
  return {
    dir,
    db,
    rmDb,
    log,
    store,
    ingest: new Ingest(log),
    close() {
      db.close()
      // The store's connections close at once (its close is synchronous inside).
      void store.close()
      rmDb.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The record context of a test request to `datasetId`. */
export const testContext = (datasetId: string) => ({ datasetId, keyId: 'k', requestId: 'r', receivedAt: new Date().toISOString() })

/**
 * An fdatasync for SqliteEventLogOptions that starts only when released, one call at a time, in
 * order: it then runs `run` (default: none, answered at once with success; pass `fs.fdatasync` for
 * the real one, answered from libuv's thread pool).
 */
export function heldFdatasync(run: FdatasyncFn = (_fd, callback) => callback(null)) {
  const held: Array<() => void> = []
  const fds: number[] = []
  const sync: FdatasyncFn = (fd, callback) => {
    fds.push(fd)
    held.push(() => run(fd, callback))
  }
  return {
    sync,
    /** The descriptors of every call so far, released or not. */
    fds,
    /** How many calls were made so far. */
    get calls() {
      return fds.length
    },
    /** How many calls wait for a release. */
    get waiting() {
      return held.length
    },
    /** Starts the oldest waiting call; throws when none waits. */
    release() {
      const next = held.shift()
      if (next === undefined) throw new Error('no fdatasync is waiting')
      next()
    },
  }
}
