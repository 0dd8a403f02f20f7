/**
 * PostgreSQL for a test file: a database of its own on the run's server
 * (test/helpers/postgres-global-setup.ts), or a printed reason to skip where no server could start.
 */
import pg from 'pg'
import { inject } from 'vitest'
import { testDatabaseName } from './postgres-server.js'

/** The run's server URL (superuser), or null; prints why once when null. */
export function postgresAdminUrl(): string | null {
  const url = inject('postgresAdminUrl')
  if (url === null) console.warn(`skipped: the PostgreSQL suites need a server: ${inject('postgresSkipReason')}`)
  return url
}

/** Runs one statement as the server's superuser (CREATE and DROP DATABASE run outside a transaction). */
async function asAdmin(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** The database a URL names. */
const databaseOf = (url: string): string => new URL(url).pathname.slice(1)

/**
 * Makes a fresh database on the run's server and returns its URL.
 * @param options.template the URL of a database to copy (CREATE DATABASE … TEMPLATE: a migrated
 *   schema in milliseconds); it must have no open connection meanwhile. Absent: an empty database.
 * @param options.with more of CREATE DATABASE's options, as SQL (e.g. a locale provider).
 */
export async function freshPostgresDatabase(adminUrl: string, what: string, options: { template?: string; with?: string } = {}): Promise<string> {
  const name = testDatabaseName(what)
  const template = options.template === undefined ? '' : ` TEMPLATE ${databaseOf(options.template)}`
  await asAdmin(adminUrl, `CREATE DATABASE ${name}${template}${options.with === undefined ? '' : ` ${options.with}`}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Drops the database at `url` (its connections closed first). */
export async function dropPostgresDatabase(adminUrl: string, url: string): Promise<void> {
  await asAdmin(adminUrl, `DROP DATABASE ${databaseOf(url)} WITH (FORCE)`)
}
