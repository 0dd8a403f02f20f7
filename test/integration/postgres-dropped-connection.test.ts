/**
 * A connection that the server drops while the service holds it between two statements of a
 * transaction (src/adapters/postgres/connection.ts, inTransaction): pg emits `error` on it, which
 * without a listener would end the process (the e2e test of PostgreSQL going down found it under
 * load). Here the connection's backend is terminated from another connection, deterministically:
 * the transaction rejects as "unavailable" (503 and retry), the process goes on, and the pool
 * answers the next query on a fresh connection.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inTransaction, isPostgresUnavailable, openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
let url = ''
let pool: pg.Pool

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'dropped')
  pool = openPostgresPool(url, { max: 2 })
})
afterAll(async () => {
  await pool?.end()
  if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
})

describe.skipIf(admin === null)('a connection dropped inside a transaction', () => {
  it('rejects the transaction as unavailable, keeps the process, and the pool answers again', async () => {
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', onUncaught)
    try {
      let pid = 0
      const run = inTransaction(pool, async (client) => {
        pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0
        // Between two statements: another connection ends this one's backend, and pg reports it on
        // this client with no query in flight.
        const other = await pool.connect()
        try {
          await other.query('SELECT pg_terminate_backend($1)', [pid])
        } finally {
          other.release()
        }
        await new Promise((resolve) => setTimeout(resolve, 300))
        return client.query('SELECT 1')
      })
      const error = await run.then(
        () => null,
        (e: unknown) => e,
      )
      expect(pid).toBeGreaterThan(0)
      expect(error).not.toBeNull()
      expect(isPostgresUnavailable(error)).toBe(true)
      expect(uncaught).toEqual([])
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1)
    } finally {
      process.off('uncaughtException', onUncaught)
    }
  })
})
