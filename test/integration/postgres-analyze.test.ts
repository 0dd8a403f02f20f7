/**
 * The PostgreSQL read-model store refreshes the planner's statistics at the head of the log after a
 * bulk of records (PostgresReadModelStore.atHead), on the run's server: before the threshold the
 * read models' tables are never analyzed by it, after it they are.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { Projector } from '../../src/projector/runner.js'
import { Ingest } from '../../src/write/ingest.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { testContext } from '../helpers/sqlite.js'

const admin = postgresAdminUrl()
let url = ''
let pool: pg.Pool
let log: PostgresEventLog

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'analyze')
  pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  log = new PostgresEventLog(pool, { pollMs: 50 })
})
afterAll(async () => {
  await log?.close()
  await pool?.end()
  if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
})

/** How many times this database's rm_events was analyzed by hand (ANALYZE, not autovacuum). */
async function analyzed(): Promise<number> {
  const r = await pool.query<{ n: string }>("SELECT analyze_count AS n FROM pg_stat_user_tables WHERE schemaname = 'ocelog' AND relname = 'rm_events'")
  return Number(r.rows[0]?.n ?? 0)
}

describe.skipIf(admin === null)('PostgreSQL read-model statistics', () => {
  it('runs ANALYZE at the head once the records applied since the last one reach the threshold', async () => {
    const ingest = new Ingest(log)
    const events = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => ({ event: 'scan', timestamp: '2024-05-01T10:00:00Z', objects: [{ type: 'item', id: `i${String(from + i)}` }] }))
    const store = new PostgresReadModelStore(pool, { analyzeAfterRecords: 30 })
    await ingest.recordEvents(events(20, 0), testContext('ds'))
    await new Projector(log, store).catchUp()
    // The statistics collector reports with a delay: wait for it before each reading.
    await pool.query('SELECT pg_stat_force_next_flush()').catch(() => {})
    const before = await analyzed()
    expect(before).toBe(0)
    await ingest.recordEvents(events(20, 20), testContext('ds'))
    await new Projector(log, store).catchUp()
    await expect.poll(analyzed, { timeout: 5000, interval: 100 }).toBe(1)
  })
})
