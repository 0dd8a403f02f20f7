/**
 * The PostgreSQL connection (docs/operations.md#production-on-postgresql): one `pg` pool per process
 * on POSTGRES_URL (a libpq connection string), which errors mean the server is away (503 and retry,
 * never 500), and one clear start-up line when the server cannot be reached or refuses us.
 */
import pg from 'pg'
import { messageOf, EngineUnavailableError } from '../../core/errors.js'

/** How long a connection attempt may take, in ms, at start and for each new connection of the pool. */
export const POSTGRES_CONNECT_TIMEOUT_MS = 5000

export interface PostgresPoolOptions {
  /** Largest number of connections of the pool (OCELOG_POSTGRES_POOL_SIZE; default 10). */
  max?: number
  /** Name shown in pg_stat_activity.application_name (default `ocelog`). */
  applicationName?: string
}

/**
 * Opens a pool on `url`. The pool never crashes the process: an idle connection that the server
 * drops (a restart, `pg_ctl stop -m immediate`) is logged through `onIdleError` and replaced on
 * the next query.
 */
export function openPostgresPool(url: string, options: PostgresPoolOptions = {}, onIdleError: (error: Error) => void = () => {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'ocelog',
  })
  pool.on('error', onIdleError)
  return pool
}

/** SQLSTATE classes and codes that mean "the server is away or busy; try again" (postgresql.org/docs/15/errcodes-appendix.html). */
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
  '53100', // disk_full
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
])

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH'])

function field(error: unknown, name: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined
}

/**
 * Whether a failure of a PostgreSQL call means the server is away or busy (connection refused or
 * lost, shutting down or starting up, too many connections, a deadlock or serialization failure
 * that a retry clears) rather than a statement that cannot succeed.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  const code = field(error, 'code')
  if (typeof code === 'string') {
    if (code.startsWith('08') || UNAVAILABLE_STATES.has(code) || NETWORK_CODES.has(code)) return true
  }
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)/i.test(
    message,
  )
}

/** A connection string with its password hidden, for messages. */
export function redactPostgresUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@')
  }
}

/**
 * One line that says why a connection at start failed, for an operator: a wrong password, an
 * unknown role or database, or a server that does not answer.
 */
export function postgresStartMessage(error: unknown, shownUrl: string): string {
  const code = field(error, 'code')
  const detail = messageOf(error)
  const at = `PostgreSQL at POSTGRES_URL=${shownUrl}`
  switch (code) {
    case '28P01':
      return `${at} refused the password: ${detail} (check the password in POSTGRES_URL)`
    case '28000':
      return `${at} refused the connection: ${detail} (check the role in POSTGRES_URL and pg_hba.conf)`
    case '3D000':
      return `${at}: ${detail} (create it first: createdb, or CREATE DATABASE)`
    case '42501':
      return `${at}: ${detail} (the role needs CREATE on the database, for Ocelog's schema)`
    default:
      return `${at} did not answer within ${String(POSTGRES_CONNECT_TIMEOUT_MS)} ms or refused the connection: ${detail}`
  }
}

/**
 * Checks that `pool` can run a query.
 * @throws EngineUnavailableError whose message is postgresStartMessage's one line.
 */
export async function checkPostgres(pool: pg.Pool, shownUrl: string): Promise<void> {
  try {
    await pool.query('SELECT 1')
  } catch (error) {
    throw new EngineUnavailableError(postgresStartMessage(error, shownUrl))
  }
}

/**
 * `pool.connect()`, with an `error` listener on the connection until `release`: pg emits `error` on a
 * checked-out connection that the server drops between two queries (a restart, `pg_ctl stop -m
 * immediate`), which without a listener is an uncaught exception that ends the process; with it, the
 * next query rejects (then 503 and retry) and `release` drops the connection instead of reusing it.
 */
export async function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release: (broken?: boolean) => void }> {
  const client = await pool.connect()
  let lost = false
  const onError = () => {
    lost = true
  }
  client.on('error', onError)
  return {
    client,
    release: (broken = false) => {
      client.removeListener('error', onError)
      client.release(broken || lost)
    },
  }
}

/** Runs `fn` in a transaction on one connection of `pool` (BEGIN … COMMIT, ROLLBACK on any error). */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const { client, release } = await checkOut(pool)
  let broken = false
  try {
    await client.query('BEGIN')
    const out = await fn(client)
    await client.query('COMMIT')
    return out
  } catch (error) {
    try {
      await client.query('ROLLBACK')
    } catch {
      broken = true
    }
    throw error
  } finally {
    // A connection whose ROLLBACK failed, or that the server dropped, is gone or confused: the pool drops it instead of reusing it.
    release(broken)
  }
}
