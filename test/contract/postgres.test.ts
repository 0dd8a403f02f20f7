/**
 * The EventLog, KeyStore, ObjectClaims, RateLimiter and ReadModelStore contracts on PostgreSQL
 * (src/adapters/postgres/*, src/adapters/rate-limiter.ts), against the run's real server
 * (test/helpers/postgres-global-setup.ts): one database for this file, migrated as a process
 * migrates it at start; the cases use fresh dataset ids and keys, as on a shared engine.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe } from 'vitest'
import { postgresRateLimiter } from '../../src/adapters/rate-limiter.js'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresKeyStore } from '../../src/adapters/postgres/postgres-key-store.js'
import { PostgresObjectClaims } from '../../src/adapters/postgres/postgres-object-claims.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { eventLogContract } from './event-log.contract.js'
import { keyStoreContract } from './key-store.contract.js'
import { objectClaimsContract } from './object-claims.contract.js'
import { rateLimiterContract } from './rate-limiter.contract.js'
import { readModelStoreContract } from './read-model-store.contract.js'
import { postgresRows } from '../helpers/read-model-rows.js'

const admin = postgresAdminUrl()
let url = ''
let pool: pg.Pool
const pools: pg.Pool[] = []

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'contract')
  pool = openPostgresPool(url)
  await migrate(pool)
})
afterAll(async () => {
  for (const p of pools.splice(0)) await p.end()
  await pool?.end()
})

describe.skipIf(admin === null)('PostgreSQL', () => {
  eventLogContract('PostgreSQL', async () => {
    const log = new PostgresEventLog(pool, { pollMs: 50 })
    return {
      log,
      async close() {
        await log.close()
      },
    }
  })

  keyStoreContract('PostgreSQL', async () => {
    // Each case starts on an empty key store (the contract lists every dataset and key).
    await pool.query('TRUNCATE ocelog.api_keys, ocelog.datasets')
    return {
      keys: new PostgresKeyStore(pool),
      async peer() {
        // Its own pool on the same database, as `ocelog keys` opens one beside a running service.
        const other = openPostgresPool(url, { max: 2 })
        pools.push(other)
        return new PostgresKeyStore(other)
      },
      async close() {},
    }
  })

  objectClaimsContract('PostgreSQL', async () => ({ claims: new PostgresObjectClaims(pool), async close() {} }))

  rateLimiterContract('PostgreSQL', async (budget) => postgresRateLimiter(pool, budget))

  readModelStoreContract('PostgreSQL', async () => {
    // Each case starts on empty read models (the contract reads checkpoints by name).
    const store = new PostgresReadModelStore(pool)
    await store.reset()
    return { store, rows: postgresRows(pool), async close() {} }
  })
})
