/**
 * The PostgreSQL store keeps the directly-follows write's memory of objects true
 * (src/core/df-object-memory.ts; PostgresReadModelStore): after another writer moved the runner's
 * checkpoint (a projector that took the lease over, a rebuild), and after a transaction that did not
 * commit, the next batch reads the tables again. A stale memory would take the steps of these tests
 * for replays (they are the steps it remembers) and write none of them. On the run's server; skipped
 * with a printed reason where none could start.
 */
import type pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import type { StoredRecord } from '../../src/schemas/records.js'
import { batchOf, eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
let url = ''
let pool: pg.Pool
let log: PostgresEventLog
let records: StoredRecord[] = []

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'df_memory')
  pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  log = new PostgresEventLog(pool, { pollMs: 50 })
  const ds = freshDatasetId()
  const objects = [
    { type: 'order', id: 'o1' },
    { type: 'item', id: 'i1' },
  ]
  const at = (minute: number) => ({ timestamp: `2024-05-01T10:0${String(minute)}:00.000Z` })
  await log.append(
    ds,
    [eventRecord(ds, 'A', objects, at(1)), eventRecord(ds, 'B', objects, at(2)), eventRecord(ds, 'C', objects, at(3)), eventRecord(ds, 'D', objects, at(4))],
    [],
  )
  records = await log.readAll(null, 10)
})
afterAll(async () => {
  await log?.close()
  await pool?.end()
  if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
})

describe.skipIf(admin === null)('the directly-follows memory of the PostgreSQL store', () => {
  let store: PostgresReadModelStore
  beforeEach(async () => {
    expect(records).toHaveLength(4)
    await pool.query('DROP TRIGGER IF EXISTS refuse_checkpoint ON ocelog.rm_checkpoints')
    store = new PostgresReadModelStore(pool)
    await store.reset()
  })

  const steps = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM ocelog.rm_df_steps')).rows[0]?.n)
  const position = (i: number) => (records[i] as StoredRecord).position
  /** Applies the records one batch each, as projector `name`: from the second on, the store remembers o1 and i1. */
  const applyEach = async (name: string, count: number) => {
    for (let i = 0; i < count; i += 1) await store.apply(batchOf(name, i === 0 ? null : position(i - 1), position(i), records.slice(i, i + 1)))
  }

  it('trusts the memory while the checkpoint row is the one its last transaction wrote', async () => {
    await applyEach('p', 3)
    expect(await steps()).toBe(6)
    // Behind the store's back (no writer of the runner does this): the steps go, the checkpoint row stays as written.
    await pool.query('DELETE FROM ocelog.rm_df_steps')
    await store.apply(batchOf('p', position(2), position(3), records.slice(3)))
    // D's steps follow the remembered tails (C), which a read of the emptied table would not have found.
    const prev = await pool.query<{ prev_act: string | null }>(`SELECT prev_act FROM ocelog.rm_df_steps WHERE activity = 'D'`)
    expect(prev.rows.map((r) => r.prev_act)).toEqual(['C', 'C'])
  })

  it('reads the tables again after another writer moved the checkpoint', async () => {
    await applyEach('q', 3)
    expect(await steps()).toBe(6)
    // Another process rebuilds the runner: its tables emptied, its checkpoint back at the first record.
    await pool.query('DELETE FROM ocelog.rm_df_steps; DELETE FROM ocelog.rm_df_memberships; DELETE FROM ocelog.rm_df_aggregates')
    await pool.query(`UPDATE ocelog.rm_checkpoints SET position = $1 WHERE projector LIKE 'q.%'`, [position(0)])
    // Steps the memory holds: a stale memory would take them for replays.
    await store.apply(batchOf('q', position(0), position(2), records.slice(1, 3)))
    expect(await steps()).toBe(4)
  })

  it('forgets what a transaction that did not commit wrote', async () => {
    await applyEach('r', 2)
    expect(await steps()).toBe(4)
    // The checkpoint cannot move to the third record: that batch's transaction fails after its slices' writes.
    await pool.query(`CREATE OR REPLACE FUNCTION ocelog.refuse_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.position = ${String(position(2))} THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`)
    await pool.query('CREATE TRIGGER refuse_checkpoint BEFORE UPDATE ON ocelog.rm_checkpoints FOR EACH ROW EXECUTE FUNCTION ocelog.refuse_checkpoint()')
    await expect(store.apply(batchOf('r', position(1), position(2), records.slice(2, 3)))).rejects.toThrow(/refused/)
    expect(await steps()).toBe(4)
    await pool.query('DROP TRIGGER refuse_checkpoint ON ocelog.rm_checkpoints')
    await store.apply(batchOf('r', position(1), position(2), records.slice(2, 3)))
    expect(await steps()).toBe(6)
  })
})
