/**
 * The PostgreSQL backends (docs/operations.md#production-on-postgresql), chosen by POSTGRES_URL
 * (src/app/composition.ts): the log with its claims, the datasets and API keys, and the rate
 * limits, in one database; the schema is made or migrated at start (src/adapters/postgres/schema.ts).
 *
 * The read models live in the same database (src/adapters/postgres/postgres-read-model-store.ts,
 * postgres-read-model-query.ts), kept by projection runners under leases
 * (docs/architecture.md#projection-runners-and-leases). Nothing is written to a SQLite file.
 */
import { hostname } from 'node:os'
import { PostgresReadModelStore } from '../adapters/postgres/postgres-read-model-store.js'
import { PostgresReadModelQuery } from '../adapters/postgres/postgres-read-model-query.js'
import { postgresLeases } from '../adapters/postgres/postgres-lease.js'
import { postgresRateLimiter } from '../adapters/rate-limiter.js'
import { checkPostgres, isPostgresUnavailable, openPostgresPool, redactPostgresUrl } from '../adapters/postgres/connection.js'
import { PostgresEventLog } from '../adapters/postgres/postgres-event-log.js'
import { PostgresKeyStore } from '../adapters/postgres/postgres-key-store.js'
import { migrate, SCHEMA, SCHEMA_VERSION } from '../adapters/postgres/schema.js'
import type { Backends } from './backends.js'

/**
 * How this process shows as a lease's holder (the lease session's application_name, at most
 * 63 bytes): host name and process id.
 */
export function leaseHolderName(): string {
  return `ocelog ${hostname()} pid ${String(process.pid)}`.slice(0, 63)
}

/**
 * Opens the PostgreSQL backends on `url`: a pool of `poolSize` connections, checked with one query,
 * and the schema migrated.
 * @throws EngineUnavailableError with one line naming POSTGRES_URL (password hidden) and the cause:
 *   a wrong password, an unknown role or database, a server that does not answer, or a schema that
 *   a newer Ocelog migrated.
 */
export async function openPostgresBackends(url: string, poolSize: number): Promise<Backends> {
  const shown = redactPostgresUrl(url)
  const pool = openPostgresPool(url, { max: poolSize })
  try {
    await checkPostgres(pool, shown)
    await migrate(pool)
  } catch (error) {
    await pool.end()
    throw error
  }
  const log = new PostgresEventLog(pool)
  return {
    mode: 'postgres',
    describe: `PostgreSQL ${shown} (schema ${SCHEMA} v${String(SCHEMA_VERSION)})`,
    log,
    readModels: new PostgresReadModelStore(pool),
    query: new PostgresReadModelQuery(pool),
    leases: postgresLeases(url, pool, { holder: leaseHolderName() }),
    keys: new PostgresKeyStore(pool),
    isUnavailable: isPostgresUnavailable,
    notices: [],
    sharedRateLimiter: (budget) => postgresRateLimiter(pool, budget),
    async close() {
      await log.close()
      await pool.end()
    },
  }
}
