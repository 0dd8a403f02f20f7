/** Fresh embedded SQLite files in a temp dir (ocelog.db and read-models.db) with the log, the read-model store and ingest over them, for integration tests. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog, type SqliteEventLogOptions } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
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
  return {
    dir,
    db,
    rmDb,
    log,
    store: new SqliteReadModelStore(rmDb),
    ingest: new Ingest(log),
    close() {
      db.close()
      rmDb.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The record context of a test request to `datasetId`. */
export const testContext = (datasetId: string) => ({ datasetId, keyId: 'k', requestId: 'r', receivedAt: new Date().toISOString() })
