/**
 * The EventLog, ReadModelStore, ReadModelQuery, KeyStore and ObjectClaims contracts on the embedded default: real SQLite files
 * (ocelog.db, read-models.db) in a temp folder per case (src/adapters/sqlite/log/*, src/adapters/sqlite/read-models/*).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase, PROJECTOR_INDEXES, readModelIndexes } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteObjectClaims } from '../../src/adapters/sqlite/log/sqlite-object-claims.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'
import { eventLogContract } from './event-log.contract.js'
import { keyStoreContract } from './key-store.contract.js'
import { objectClaimsContract } from './object-claims.contract.js'
import { analysisQueryContract } from './analysis-query.contract.js'
import { readModelQueryContract } from './read-model-query.contract.js'
import { readModelStoreContract } from './read-model-store.contract.js'
import { overriding } from '../helpers/override.js'
import { sqliteRows } from '../helpers/read-model-rows.js'

/** ocelog.db and read-models.db in a fresh temp folder. */
function tempDatabase(): { dir: string; db: SqliteDatabase; rmDb: SqliteDatabase; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-contract-'))
  const db = openDatabase(dir)
  const rmDb = openReadModelsDatabase(dir).db
  return {
    dir,
    db,
    rmDb,
    remove() {
      db.close()
      rmDb.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

eventLogContract('SQLite', async () => {
  const t = tempDatabase()
  const log = new SqliteEventLog(t.db, { pollMs: 50 })
  return {
    log,
    async close() {
      await log.close()
      t.remove()
    },
  }
})

readModelStoreContract('SQLite', async () => {
  const t = tempDatabase()
  const store = new SqliteReadModelStore(t.rmDb)
  return {
    store,
    rows: sqliteRows(t.rmDb),
    async close() {
      await store.close()
      t.remove()
    },
  }
})

keyStoreContract('SQLite', async () => {
  const t = tempDatabase()
  const keys = new SqliteKeyStore(t.db)
  const peers: SqliteDatabase[] = []
  return {
    keys,
    async peer() {
      // Its own connection to the same file, as `ocelog keys` opens it beside a running service.
      const db = openDatabase(t.dir)
      peers.push(db)
      return new SqliteKeyStore(db)
    },
    async close() {
      await keys.close()
      for (const db of peers) db.close()
      t.remove()
    },
  }
})

objectClaimsContract('SQLite', async () => {
  const t = tempDatabase()
  return {
    claims: new SqliteObjectClaims(t.db),
    async close() {
      t.remove()
    },
  }
})

/**
 * A query-contract harness on a fresh pair of files.
 * @param withoutAtHead the store hides `atHead`, so the query indexes are never made (read-models-database.ts).
 */
function queryHarness(withoutAtHead: boolean) {
  const t = tempDatabase()
  const log = new SqliteEventLog(t.db, { pollMs: 50 })
  const sqliteStore = new SqliteReadModelStore(t.rmDb)
  const store: ReadModelStore = withoutAtHead ? overriding(sqliteStore, 'atHead', undefined) : sqliteStore
  const query = new SqliteReadModelQuery(t.rmDb)
  return {
    log,
    store,
    query,
    async close() {
      if (withoutAtHead) {
        const indexes = readModelIndexes(t.rmDb)
        // The case ran without them: only the projector's own index is there.
        if (indexes.join() !== PROJECTOR_INDEXES.join()) throw new Error(`query indexes present: ${indexes.join(', ')}`)
      }
      await query.close()
      await store.close()
      await log.close()
      t.remove()
    },
  }
}

readModelQueryContract('SQLite', async () => queryHarness(false))
analysisQueryContract('SQLite', async () => queryHarness(false))

/**
 * The same query contract while a rebuild replays the log: a new file has no query indexes
 * (read-models-database.ts) until the projector reaches the head; here it never says so (a store
 * without `atHead`), so every query runs on the tables' keys alone and must answer the same.
 */
readModelQueryContract('SQLite without its query indexes (during a rebuild)', async () => queryHarness(true))
analysisQueryContract('SQLite without its query indexes (during a rebuild)', async () => queryHarness(true))
