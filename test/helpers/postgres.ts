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

/** Makes a fresh database on the run's server and returns its URL. */
export async function freshPostgresDatabase(adminUrl: string, what: string): Promise<string> {
  const name = testDatabaseName(what)
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}
