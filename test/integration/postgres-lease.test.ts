/**
 * Leases on PostgreSQL (src/adapters/postgres/postgres-lease.ts;
 * docs/architecture.md#projection-runners-and-leases) against the run's real server: one holder per
 * lease, a standby that takes over when the holder's session dies, and who holds what.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { acquireLease, type Lease, leaseHolders } from '../../src/adapters/postgres/postgres-lease.js'
import { freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
let url = ''
let pool: pg.Pool

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'lease')
  pool = openPostgresPool(url)
})
afterAll(async () => {
  await pool?.end()
})

const options = (holder: string) => ({ holder, retryMs: 100, heartbeatMs: 100 })

describe.skipIf(admin === null)('PostgreSQL leases', () => {
  it('gives a lease to one process; a standby takes it over when the holder’s session dies', async () => {
    const never = new AbortController().signal
    const a = await acquireLease(url, 'entities', never, options('process-a'))
    if (a === null) throw new Error('process-a got no lease')
    const standby = new AbortController()
    let b: Lease | null = null
    const waiting = acquireLease(url, 'entities', standby.signal, options('process-b')).then((lease) => {
      b = lease
      return lease
    })
    await new Promise((r) => setTimeout(r, 500))
    expect(b).toBeNull()
    const [holder] = await leaseHolders(pool, ['entities', 'process'])
    expect(holder).toMatchObject({ name: 'entities', holder: 'process-a' })
    expect(await leaseHolders(pool, ['process'])).toEqual([])

    // The holder's session ends as it would at kill -9 of its process.
    await pool.query('SELECT pg_terminate_backend($1)', [holder?.pid])
    const took = await Promise.race([waiting, new Promise<'late'>((r) => setTimeout(() => r('late'), 10_000))])
    expect(took).not.toBe('late')
    expect(a.lost.aborted).toBe(true)
    expect((await leaseHolders(pool, ['entities']))[0]?.holder).toBe('process-b')

    await (took as Lease).release()
    expect(await leaseHolders(pool, ['entities'])).toEqual([])
    await a.release()
  }, 60_000)

  it('keeps leases of different runners apart, and a waiting standby stops when asked', async () => {
    const never = new AbortController().signal
    const entities = await acquireLease(url, 'entities-0-of-2', never, options('p1'))
    const process = await acquireLease(url, 'process-0-of-2', never, options('p1'))
    expect((await leaseHolders(pool, ['entities-0-of-2', 'process-0-of-2'])).map((h) => h.name)).toEqual(['entities-0-of-2', 'process-0-of-2'])
    const stop = new AbortController()
    const waiting = acquireLease(url, 'entities-0-of-2', stop.signal, options('p2'))
    stop.abort()
    expect(await waiting).toBeNull()
    await entities?.release()
    await process?.release()
  }, 60_000)
})
