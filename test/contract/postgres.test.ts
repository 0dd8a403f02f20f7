/**
 * The EventLog, KeyStore, ObjectClaims, RateLimiter, ReadModelStore and ReadModelQuery (with its
 * analysis reads) contracts on PostgreSQL (src/adapters/postgres/*, src/adapters/rate-limiter.ts), against the
 * run's real server (test/helpers/postgres-global-setup.ts): one database for this file, migrated
 * as a process migrates it at start; the cases use fresh dataset ids and keys, as on a shared
 * engine. A ReadModelQuery case needs an empty log (its positions and asOf are asserted) and the
 * log cannot be emptied: each gets a database of its own, copied from one migrated template.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe } from 'vitest'
import { postgresRateLimiter } from '../../src/adapters/rate-limiter.js'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresKeyStore } from '../../src/adapters/postgres/postgres-key-store.js'
import { PostgresObjectClaims } from '../../src/adapters/postgres/postgres-object-claims.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { eventLogContract } from './event-log.contract.js'
import { keyStoreContract } from './key-store.contract.js'
import { objectClaimsContract } from './object-claims.contract.js'
import { rateLimiterContract } from './rate-limiter.contract.js'
import { readModelStoreContract } from './read-model-store.contract.js'
import { postgresRows } from '../helpers/read-model-rows.js'
import { analysisQueryContract } from './analysis-query.contract.js'
import { readModelQueryContract, type ReadModelQueryHarness } from './read-model-query.contract.js'

const admin = postgresAdminUrl()
let url = ''
/** A migrated database that the read-model cases copy (no connection stays open on it). */
let template = ''
let pool: pg.Pool
const pools: pg.Pool[] = []

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'contract')
  pool = openPostgresPool(url)
  await migrate(pool)
  template = await freshPostgresDatabase(admin, 'read_models_template')
  const migrating = openPostgresPool(template, { max: 1 })
  try {
    await migrate(migrating)
  } finally {
    await migrating.end()
  }
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

  /** A log, a store and a query on a database of their own, copied from the migrated template. */
  const queryHarness = async (): Promise<ReadModelQueryHarness> => {
    if (admin === null) throw new Error('the PostgreSQL suites are skipped without a server')
    const own = await freshPostgresDatabase(admin, 'read_models', { template })
    const ownPool = openPostgresPool(own, { max: 4 })
    const log = new PostgresEventLog(ownPool, { pollMs: 50 })
    const store = new PostgresReadModelStore(ownPool)
    const query = new PostgresReadModelQuery(ownPool)
    return {
      log,
      store,
      query,
      async close() {
        await query.close()
        await store.close()
        await log.close()
        await ownPool.end()
        await dropPostgresDatabase(admin, own)
      },
    }
  }
  readModelQueryContract('PostgreSQL', queryHarness)
  analysisQueryContract('PostgreSQL', queryHarness)
})
