/**
 * The one composition root: builds the adapters the configuration asks for. Code above the ports
 * sees the engines only through `Backends`: `mode` (on the embedded default `serve` runs the
 * projector in process and `export` catches up first) and `isUnavailable` (which engine errors the
 * projector waits out).
 */
import { EngineUnavailableError } from './core/errors.js'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { READ_MODELS_FILE } from './adapters/sqlite/read-models-database.js'
import { HealingReadModels, openCheckedReadModels, openCheckedLog } from './adapters/sqlite/read-models-recovery.js'
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.js'
import { SqliteKeyStore } from './adapters/sqlite/sqlite-key-store.js'
import { isSqliteUnavailable } from './adapters/sqlite/unavailable.js'
import type { EventLog } from './ports/event-log.js'
import type { KeyStore } from './ports/key-store.js'
import type { RateLimiter } from './ports/rate-limiter.js'
import type { ReadModelQuery } from './ports/read-model-query.js'
import type { ReadModelStore } from './ports/read-model-store.js'

export interface Backends {
  /** 'embedded': one SQLite file; 'production': EventStoreDB + MongoDB. */
  mode: 'embedded' | 'production'
  /** Where the data lives, for logs and messages (never a password). */
  describe: string
  log: EventLog
  /** The projector's writer port of the read models. */
  readModels: ReadModelStore
  /** The read side's query port over the same read models (`/v1/process/*`, MCP, `/ui/`, `ocelog export`). */
  query: ReadModelQuery
  keys: KeyStore
  /** Whether an error of these engines means one is away (retry later) rather than a failed write; for the projector. */
  isUnavailable(error: unknown): boolean
  /** What opening the engines did that an operator should read in the log, e.g. a read-model file made anew (then rebuilt from the log). */
  notices: readonly string[]
  /** Embedded: the read models that heal themselves (read-models-recovery.ts), for the server to connect to its projector. */
  healing?: HealingReadModels
  close(): Promise<void>
}

/** A configured engine could not be reached or opened; the message names it. */
export { EngineUnavailableError }

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}

/**
 * Opens the storage engines chosen by `config`.
 * @throws EngineUnavailableError naming the engine (and its variable) that failed.
 */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.eventstoreUrl !== null && config.mongodbUrl !== null) {
    const { openProductionBackends } = await import('./adapters/production.js')
    return openProductionBackends(config.eventstoreUrl, config.mongodbUrl, redactUrl)
  }
  // A damaged log is never touched: openCheckedLog refuses it with a message naming the way back.
  const db = openCheckedLog(config.dataDir)
  let readModels: ReturnType<typeof openCheckedReadModels>
  try {
    readModels = openCheckedReadModels(config.dataDir)
  } catch (error) {
    db.close()
    throw new EngineUnavailableError(`cannot open ${READ_MODELS_FILE} in OCELOG_DATA_DIR=${config.dataDir}: ${(error as Error).message}`)
  }
  const log = new SqliteEventLog(db)
  const healing = new HealingReadModels(config.dataDir, readModels, () => log.lastPosition())
  return {
    mode: 'embedded',
    describe: `SQLite ${config.dataDir}/ocelog.db (read models in ${READ_MODELS_FILE})`,
    log,
    readModels: healing.store,
    query: healing.query,
    keys: new SqliteKeyStore(db),
    isUnavailable: isSqliteUnavailable,
    notices: readModels.made === null ? [] : [`read models: ${readModels.made}; made it anew, and the projector rebuilds the read models from the log`],
    healing,
    async close() {
      await log.close()
      db.close()
      healing.database.close()
    },
  }
}

/** The rate limiter chosen by `config`: Redis when REDIS_URL is set, else in memory. */
export async function openRateLimiter(config: Config, logger: Pick<Logger, 'warn'>): Promise<RateLimiter> {
  // Loaded on demand: only `serve` needs rate-limiter-flexible and ioredis.
  const { memoryRateLimiter, redisRateLimiter } = await import('./adapters/rate-limiter.js')
  const budget = { perMinute: config.rateLimitPerMinute, windowSeconds: config.rateLimitWindowSeconds }
  if (config.redisUrl === null) return memoryRateLimiter(budget)
  const url = redactUrl(config.redisUrl)
  return redisRateLimiter(config.redisUrl, {
    ...budget,
    onFallback: (error) => logger.warn({ err: error }, `Redis at ${url} unreachable: rate limits fall back to this process's memory until it answers`),
  })
}
