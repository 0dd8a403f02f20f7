/**
 * Vitest global setup: one PostgreSQL server per test run (test/helpers/postgres-server.ts), its
 * superuser URL handed to the test files as `inject('postgresAdminUrl')`; each test file makes its
 * own database (test/helpers/postgres.ts). Where the server cannot start here, the URL is null and
 * the PostgreSQL suites skip with the reason; under CI (`CI=true`) that is a failure instead, since
 * .ci/run installs postgresql-15.
 */
import type { TestProject } from 'vitest/node'
import { type PostgresServer, postgresUnavailableReason, startPostgresServer } from './postgres-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's PostgreSQL superuser URL, or null when none could start (then `postgresSkipReason` says why). */
    postgresAdminUrl: string | null
    postgresSkipReason: string
  }
}

let server: Promise<PostgresServer | null> | null = null
let users = 0

async function started(): Promise<PostgresServer | null> {
  const reason = postgresUnavailableReason()
  if (reason !== null) {
    if (process.env.CI === 'true') throw new Error(`PostgreSQL is needed in CI: ${reason}`)
    return null
  }
  return startPostgresServer()
}

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The projects that list this file share one server: the first starts it, the last stops it.
  server ??= started()
  users += 1
  const s = await server
  project.provide('postgresAdminUrl', s === null ? null : s.url())
  project.provide('postgresSkipReason', s === null ? (postgresUnavailableReason() ?? '') : '')
  return async () => {
    users -= 1
    if (users > 0) return
    s?.remove()
    server = null
  }
}
