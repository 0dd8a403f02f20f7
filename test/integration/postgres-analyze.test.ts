/**
 * The planner and the PostgreSQL read-model store, on the run's server:
 * - the store refreshes the planner's statistics at the head of the log once the records applied
 *   since its last ANALYZE reach a minimum and a share of the log's position then
 *   (PostgresReadModelStore.atHead): short of either, the read models' tables are not analyzed by it;
 * - under the apply transaction's settings (PLAN_WRITES_BY_KEY) a batch's read of membership counts
 *   probes the key, where the default costs scan the whole table.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { MEMBERSHIPS_READ_SQL } from '../../src/adapters/postgres/postgres-df-writes.js'
import { PLAN_WRITES_BY_KEY, PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
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
  it('runs ANALYZE at the head once the records applied since the last one reach the minimum and the growth share', async () => {
    const ingest = new Ingest(log)
    let next = 0
    const send = async (n: number): Promise<void> => {
      const events = Array.from({ length: n }, (_, i) => ({
        event: 'scan',
        timestamp: '2024-05-01T10:00:00Z',
        objects: [{ type: 'item', id: `i${String(next + i)}` }],
      }))
      next += n
      await ingest.recordEvents(events, testContext('ds'))
    }
    // At least 30 records, and twice the log's position at the last ANALYZE.
    const store = new PostgresReadModelStore(pool, { analyzeMinRecords: 30, analyzeGrowth: 2 })
    const project = async (): Promise<number> => {
      await new Projector(log, store).catchUp()
      // The statistics collector reports with a delay: flush it before each reading.
      await pool.query('SELECT pg_stat_force_next_flush()').catch(() => {})
      return analyzed()
    }
    await send(20)
    expect(await project()).toBe(0)
    await send(20)
    await expect.poll(project, { timeout: 5000, interval: 100 }).toBe(1)
    // Past the minimum but short of twice the position at that ANALYZE: not yet.
    const at = (await log.lastPosition()) ?? 0
    expect(at).toBeGreaterThanOrEqual(40)
    await send(2 * at - 1)
    expect(await project()).toBe(1)
    await send(1)
    await expect.poll(project, { timeout: 5000, interval: 100 }).toBe(2)
    // A reset (a rebuild) starts the rule again from empty tables: the minimum alone is due, not
    // twice the position of the last ANALYZE (which the rebuild's records do not reach).
    await store.reset()
    await expect.poll(project, { timeout: 5000, interval: 100 }).toBe(3)
  })
})

describe.skipIf(admin === null)('PostgreSQL plans of the batch writes', () => {
  it('reads a batch of membership counts by index probes under PLAN_WRITES_BY_KEY, not by a scan of the table', async () => {
    // 200,000 counts of 20,000 objects, analyzed; a batch asks for 5,000 of them.
    await pool.query(
      `INSERT INTO ocelog.rm_df_memberships (dataset_id, object_id, a, b, n)
       SELECT 'ds', md5(o::text)::uuid, 'a' || (k % 10)::text, '', 1 FROM generate_series(1, 20000) o, generate_series(1, 10) k`,
    )
    await pool.query('ANALYZE ocelog.rm_df_memberships')
    const keys = Array.from({ length: 5000 }, (_, i) => i * 4 + 1)
    const ids = await pool.query<{ id: string }>('SELECT md5(o::text)::uuid::text AS id FROM unnest($1::int[]) AS o', [keys])
    const params = [keys.map(() => 'ds'), ids.rows.map((r) => r.id), keys.map(() => 'a3'), keys.map(() => '')]
    const plan = async (settings: string): Promise<string> => {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        if (settings !== '') await client.query(settings)
        const r = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${MEMBERSHIPS_READ_SQL}`, params)
        const found = await client.query(MEMBERSHIPS_READ_SQL, params)
        expect(found.rowCount).toBe(5000)
        await client.query('ROLLBACK')
        return r.rows.map((row) => row['QUERY PLAN']).join('\n')
      } finally {
        client.release()
      }
    }
    const byKey = await plan(PLAN_WRITES_BY_KEY)
    expect(byKey).toMatch(/Index (Only )?Scan using rm_df_memberships_pkey/)
    expect(byKey).not.toMatch(/Seq Scan on rm_df_memberships/)
    // Why the settings exist: the default costs scan the 200,000 rows for 5,000 keys.
    expect(await plan('')).toMatch(/Seq Scan on rm_df_memberships/)
    await pool.query('TRUNCATE ocelog.rm_df_memberships')
  })
})
