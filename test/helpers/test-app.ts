/**
 * An Ocelog app on a real SQLite file in a fresh temp dir, driven through Fastify's `inject`
 * (API tier). Everything is real except the socket.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Projector } from '../../src/projector/runner.js'
import { createKey, type CreatedKey } from '../../src/write/admin.js'
import { buildApp } from '../../src/api/app.js'
import { memoryRateLimiter } from '../../src/adapters/rate-limiter.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { Ingest } from '../../src/write/ingest.js'
import { projectorCheckpoints } from '../../src/projector/checkpoints.js'

export interface TestApp {
  app: FastifyInstance
  dir: string
  db: SqliteDatabase
  /** read-models.db beside `db`'s ocelog.db. */
  rmDb: SqliteDatabase
  log: SqliteEventLog
  keys: SqliteKeyStore
  readModels: SqliteReadModelStore
  projector: Projector
  /** Creates a key (new dataset unless datasetId is given). */
  newKey(opts?: { scopes?: string[]; datasetId?: string; name?: string /** The key's own requests per minute. */; rateLimit?: number }): Promise<CreatedKey>
  close(): Promise<void>
}

export async function makeTestApp(
  opts: { perMinute?: number; windowSeconds?: number; bodyLimitBytes?: number /** Serve GET /metrics (default off). */; metrics?: boolean } = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-api-'))
  const db = openDatabase(dir)
  const rmDb = openReadModelsDatabase(dir).db
  const log = new SqliteEventLog(db)
  const keys = new SqliteKeyStore(db)
  const readModels = new SqliteReadModelStore(rmDb)
  const rateLimiter = memoryRateLimiter({
    perMinute: opts.perMinute ?? 1200,
    ...(opts.windowSeconds === undefined ? {} : { windowSeconds: opts.windowSeconds }),
  })
  const app = await buildApp({
    ingest: new Ingest(log),
    keys,
    rateLimiter,
    logger: false,
    reader: new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log }),
    ...(opts.bodyLimitBytes === undefined ? {} : { bodyLimitBytes: opts.bodyLimitBytes }),
    ...(opts.metrics === true ? { metrics: { log, readModels, projections: projectorCheckpoints() } } : {}),
  })
  await app.ready()
  return {
    app,
    dir,
    db,
    rmDb,
    log,
    keys,
    readModels,
    projector: new Projector(log, readModels),
    newKey: (k = {}) =>
      createKey(keys, {
        name: k.name ?? 'test',
        scopes: k.scopes ?? [],
        ...(k.datasetId === undefined ? {} : { datasetId: k.datasetId }),
        ...(k.rateLimit === undefined ? {} : { rateLimitPerMinute: k.rateLimit }),
      }),
    async close() {
      await app.close()
      await rateLimiter.close()
      await log.close()
      db.close()
      await readModels.close()
      rmDb.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A valid event body with `n` objects. */
export function eventBody(n = 1, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: 'Create Order',
    timestamp: '2024-05-01T10:00:00Z',
    objects: Array.from({ length: n }, (_, i) => ({ type: 'order', id: `o${String(i)}` })),
    ...extra,
  }
}
