/**
 * The PostgreSQL backends (docs/operations.md#production-on-postgresql), chosen by POSTGRES_URL
 * (src/app/composition.ts): the log with its claims, the datasets and API keys, and the rate
 * limits, in one database; the schema is made or migrated at start (src/adapters/postgres/schema.ts).
 *
 * Not built yet: the read models on PostgreSQL. Until they are, the read side (`/v1/process/*`,
 * MCP, `/ui/` data, `ocelog export`, digests) answers 501 with a message that says so, and no
 * process projects; nothing is written to a SQLite file.
 */
import { UnsupportedError } from '../core/errors.js'
import type { ReadModelQuery } from '../ports/read-model-query.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import { postgresRateLimiter } from '../adapters/rate-limiter.js'
import { checkPostgres, isPostgresUnavailable, openPostgresPool, redactPostgresUrl } from '../adapters/postgres/connection.js'
import { PostgresEventLog } from '../adapters/postgres/postgres-event-log.js'
import { PostgresKeyStore } from '../adapters/postgres/postgres-key-store.js'
import { migrate, SCHEMA, SCHEMA_VERSION } from '../adapters/postgres/schema.js'
import type { Backends } from './backends.js'

/** What the read side says on PostgreSQL until its read models are built. */
export const READ_MODELS_NOT_BUILT =
  'the read models are not built on PostgreSQL yet: this version keeps the log, the keys and the rate limits there; read process data on the embedded default (docs/operations.md#production-on-postgresql)'

const notBuilt = async (): Promise<never> => {
  throw new UnsupportedError(READ_MODELS_NOT_BUILT)
}

/** The read-model ports on PostgreSQL until they are built: nothing applied, every read a 501. */
function readModelsNotBuilt(): { store: ReadModelStore; query: ReadModelQuery } {
  const store: ReadModelStore = {
    checkpoint: async () => null,
    apply: notBuilt,
    clearProjection: notBuilt,
    reset: notBuilt,
    projections: async () => [],
    recordStop: notBuilt,
    clearStop: async () => {},
    close: async () => {},
  }
  const query: ReadModelQuery = {
    asOf: async () => 0,
    summary: notBuilt,
    eventTypes: notBuilt,
    objectTypes: notBuilt,
    declaredTypes: notBuilt,
    object: notBuilt,
    events: notBuilt,
    processMap: notBuilt,
    performance: notBuilt,
    variants: notBuilt,
    typeRelations: notBuilt,
    objectHistories: notBuilt,
    sharedObjectIds: notBuilt,
    objectsWithIds: notBuilt,
    consistentRead: (fn) => fn(),
    auditChain: notBuilt,
    auditChainAt: notBuilt,
    close: async () => {},
  }
  return { store, query }
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
  const { store, query } = readModelsNotBuilt()
  return {
    mode: 'postgres',
    describe: `PostgreSQL ${shown} (schema ${SCHEMA} v${String(SCHEMA_VERSION)})`,
    log,
    readModels: store,
    query,
    keys: new PostgresKeyStore(pool),
    isUnavailable: isPostgresUnavailable,
    notices: [READ_MODELS_NOT_BUILT],
    sharedRateLimiter: (budget) => postgresRateLimiter(pool, budget),
    async close() {
      await log.close()
      await pool.end()
    },
  }
}
