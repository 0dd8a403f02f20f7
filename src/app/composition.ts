/**
 * The one composition root: builds the adapters the configuration asks for. Code above the ports
 * sees the engines only through `Backends`: `mode` (on the embedded default `serve` runs the
 * projector in process and `export` catches up first) and `isUnavailable` (which engine errors the
 * projector waits out).
 */
import { redactUrl } from '../core/connection-url.js'
import { EngineUnavailableError } from '../core/errors.js'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { openCheckedLog, openDatabase } from '../adapters/sqlite/log/database.js'
import { openReadModelsDatabase, PROCESS_READ_MODELS_FILE, READ_MODELS_FILE } from '../adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../adapters/sqlite/log/sqlite-key-store.js'
import { type HealingReadModels, isSqliteDamage, openHealingReadModels, watchForDamage } from '../adapters/sqlite/read-models/read-models-recovery.js'
import { SqliteReadModelStore } from '../adapters/sqlite/read-models/sqlite-read-model-store.js'
import { isSqliteUnavailable } from '../adapters/sqlite/unavailable.js'
import type { RateLimiter } from '../ports/rate-limiter.js'
import type { EmbeddedProjectorBackends, EmbeddedProjectorOpenOptions } from '../projector/worker.js'
import type { Backends } from './backends.js'
import { lowestCheckpoint, projectorCheckpoints } from '../projector/checkpoints.js'

export type { Backends }

/** A configured engine could not be reached or opened; the message names it. */
export { EngineUnavailableError }

/**
 * Opens the storage engines chosen by `config`.
 * @throws EngineUnavailableError naming the engine (and its variable) that failed.
 */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.postgresUrl !== null) {
    const { openPostgresBackends } = await import('./postgres.js')
    return openPostgresBackends(config.postgresUrl, config.postgresPoolSize)
  }
  if (config.eventstoreUrl !== null && config.mongodbUrl !== null) {
    const { openProductionBackends } = await import('./production.js')
    return openProductionBackends(config.eventstoreUrl, config.mongodbUrl, redactUrl)
  }
  // A damaged log is never touched: openCheckedLog refuses it with a message naming the way back.
  const db = openCheckedLog(config.dataDir)
  const log = new SqliteEventLog(db)
  let healing: HealingReadModels
  try {
    healing = openHealingReadModels(
      config.dataDir,
      () => log.lastPosition(),
      async (store) => lowestCheckpoint(await store.projections(), projectorCheckpoints()),
    )
  } catch (error) {
    db.close()
    throw error
  }
  return {
    mode: 'embedded',
    describe: `SQLite ${config.dataDir}/ocelog.db (read models in ${READ_MODELS_FILE} and ${PROCESS_READ_MODELS_FILE})`,
    log,
    readModels: healing.store,
    query: healing.query,
    keys: new SqliteKeyStore(db),
    isUnavailable: isSqliteUnavailable,
    commitFeed: log,
    notices: healing.made === null ? [] : [`read models: ${healing.made}; made it anew, and the projector rebuilds the read models from the log`],
    healing,
    async close() {
      await log.close()
      db.close()
      await healing.store.close()
      healing.database.close()
    },
  }
}

/**
 * An embedded projector worker thread's backends (src/projector/worker.ts), on the data dir's
 * files: its own connection to ocelog.db (reading the log in order and checkpointing its WAL:
 * SQLite's default 2 MiB page cache does) and to the read-models files (a store writing each file
 * through a connection of its own).
 * @param options `readBytesMax`: largest read of the log, in characters of stored JSON (SqliteEventLog's
 *   option); `onReadModelsDamaged`: called once when a read-models file turns out damaged (read-models-recovery.ts).
 * @throws when a file cannot be opened (the worker then crashes and is started again).
 */
export function openEmbeddedProjectorBackends(dataDir: string, options: EmbeddedProjectorOpenOptions): EmbeddedProjectorBackends {
  const db = openDatabase(dataDir, { cacheKiB: 2048 })
  const readModels = openReadModelsDatabase(dataDir)
  const log = new SqliteEventLog(db, { readBytesMax: options.readBytesMax })
  const store = new SqliteReadModelStore(readModels.db)
  return {
    log,
    // A damaged read-models file (SQLITE_CORRUPT, …): the API thread moves the files aside and starts the
    // worker again on fresh ones (read-models-recovery.ts); the worker stops at once.
    readModels: watchForDamage(store, options.onReadModelsDamaged),
    isUnavailable: (error) => isSqliteUnavailable(error) || isSqliteDamage(error),
    checkpointLog: () => db.pragma('wal_checkpoint(PASSIVE)'),
    async close() {
      await log.close()
      db.close()
      for (const close of [() => store.close(), async () => readModels.db.close()]) {
        try {
          await close()
        } catch {
          // a damaged file may fail to close; the API thread replaces it
        }
      }
    },
  }
}

/**
 * The rate limiter chosen by `config`: Redis when REDIS_URL is set, else the backends' shared one
 * (PostgreSQL's, so that a key's budget holds across every API process), else in memory.
 */
export async function openRateLimiter(config: Config, logger: Pick<Logger, 'warn'>, backends?: Pick<Backends, 'sharedRateLimiter'>): Promise<RateLimiter> {
  // Loaded on demand: only `serve` needs rate-limiter-flexible and ioredis.
  const { memoryRateLimiter, redisRateLimiter } = await import('../adapters/rate-limiter.js')
  const budget = { perMinute: config.rateLimitPerMinute, windowSeconds: config.rateLimitWindowSeconds }
  if (config.redisUrl === null) return backends?.sharedRateLimiter?.(budget) ?? memoryRateLimiter(budget)
  const url = redactUrl(config.redisUrl)
  return redisRateLimiter(config.redisUrl, {
    ...budget,
    onFallback: (error) => logger.warn({ err: error }, `Redis at ${url} unreachable: rate limits fall back to this process's memory until it answers`),
  })
}
