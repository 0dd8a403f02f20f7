/**
 * Leases on PostgreSQL (docs/architecture.md#projection-runners-and-leases): the right of one
 * process to run one projection runner, held as a session-level advisory lock on a connection of
 * its own. The server releases the lock when that session ends, whatever ends it (`kill -9` of the
 * process, a lost connection, `pg_terminate_backend`), so a standby that keeps trying takes the
 * lease over within its retry interval. The lease's holder learns that it lost the lease from its
 * session's end or from a failed heartbeat, and stops writing; a write it had in flight is refused
 * anyway, by the checkpoint's compare-and-set in the same transaction (ReadModelStore.apply).
 */
import pg from 'pg'
import { POSTGRES_CONNECT_TIMEOUT_MS } from './connection.js'
import type { Lease, LeaseHolder, Leases } from '../../ports/leases.js'

export type { Lease, LeaseHolder }

/**
 * The first key of Ocelog's lease locks (pg_advisory_lock(int4, int4)); the second is
 * hashtext(lease name). Other applications' advisory locks on the same database use other keys.
 */
export const LEASE_LOCK_CLASS = 0x0ce1

export interface LeaseOptions {
  /** How often a standby tries to take the lease, in ms (default 1000). */
  retryMs?: number
  /** How often the holder checks that its session is alive, in ms (default 1000). */
  heartbeatMs?: number
  /** Shown as the session's application_name, and so by `holders` (default `ocelog`). */
  holder?: string
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })

/**
 * Waits until this process holds the lease `name` (a runner and its shard, e.g. `entities` or
 * `process-0-of-2`), trying every `retryMs`; a standby is a caller still waiting here.
 * Connection failures while waiting are retried too (the database may be restarting).
 * @returns the lease, or null when `signal` aborted first.
 */
export async function acquireLease(url: string, name: string, signal: AbortSignal, options: LeaseOptions = {}): Promise<Lease | null> {
  const retryMs = options.retryMs ?? 1000
  while (!signal.aborted) {
    const lease = await tryLease(url, name, options)
    if (lease !== null) return lease
    await sleep(retryMs, signal)
  }
  return null
}

/**
 * One try at lease `name`: a new session, `pg_try_advisory_lock`, and the session kept when it got it.
 * @returns the lease, or null when another session holds it or the server did not answer.
 */
export async function tryLease(url: string, name: string, options: LeaseOptions = {}): Promise<Lease | null> {
  const client = new pg.Client({ connectionString: url, application_name: options.holder ?? 'ocelog', connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS })
  // An error of an idle client (the server went away) would otherwise crash the process.
  client.on('error', () => {})
  try {
    await client.connect()
    const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LEASE_LOCK_CLASS, name])
    if (got.rows[0]?.ok === true) return held(client, name, options.heartbeatMs ?? 1000)
  } catch {
    // the server is away or refused: the caller tries again later
  }
  await client.end().catch(() => {})
  return null
}

/** The Leases port on PostgreSQL: each lease on a session of its own to `url`; holders read through `pool`. */
export function postgresLeases(url: string, pool: pg.Pool, options: LeaseOptions = {}): Leases {
  return {
    acquire: (name, signal) => acquireLease(url, name, signal, options),
    tryAcquire: (name) => tryLease(url, name, options),
    holders: (names) => leaseHolders(pool, names),
  }
}

/** The lease on `client`'s session, watched by a heartbeat. */
function held(client: pg.Client, name: string, heartbeatMs: number): Lease {
  const lost = new AbortController()
  const lose = () => {
    clearInterval(heartbeat)
    lost.abort(new Error(`lease ${name} lost: its session ended`))
  }
  client.on('end', lose)
  client.on('error', lose)
  let checking = false
  const heartbeat = setInterval(() => {
    if (checking) return
    checking = true
    client.query('SELECT 1').then(
      () => {
        checking = false
      },
      () => {
        checking = false
        lose()
      },
    )
  }, heartbeatMs)
  heartbeat.unref()
  return {
    name,
    lost: lost.signal,
    async release() {
      clearInterval(heartbeat)
      client.off('end', lose)
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LEASE_LOCK_CLASS, name]).catch(() => {})
      await client.end().catch(() => {})
    },
  }
}

/**
 * The holders of the leases `names` (those held; a lease nobody holds is not in the answer), from
 * `pg_locks` and `pg_stat_activity`: what `ocelog status` shows.
 */
export async function leaseHolders(pool: pg.Pool, names: readonly string[]): Promise<LeaseHolder[]> {
  const r = await pool.query<{ name: string; pid: number; holder: string; since: Date }>(
    `SELECT n.name, l.pid, a.application_name AS holder, a.backend_start AS since
     FROM unnest($2::text[]) AS n(name)
     JOIN pg_locks AS l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.classid::bigint = $1 AND l.objid::bigint = (hashtext(n.name)::bigint & 4294967295)
     JOIN pg_stat_activity AS a ON a.pid = l.pid
     ORDER BY n.name`,
    [LEASE_LOCK_CLASS, names],
  )
  return r.rows.map((row) => ({ name: row.name, pid: row.pid, holder: row.holder, since: row.since.toISOString() }))
}
