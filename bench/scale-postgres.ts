/**
 * `npm run bench:scale -- --postgres` (docs/bench-scale.md#on-postgresql): the read side at scale
 * on PostgreSQL (docs/operations.md#production-on-postgresql), on a PostgreSQL 15 server of the
 * bench's own (bench/postgres-server.ts, with bench/postgres.ts's settings). The same seeded dataset
 * as on SQLite is appended through the PostgreSQL log port in chunks, into a fresh database that
 * `migrate` made (its read-model tables come with their query indexes), then:
 * - the projector catches up: `ocelog project --once`, the built CLI as its own process with
 *   POSTGRES_URL and the service's node flags and environment (SERVICE_NODE_FLAGS, SERVICE_ENV);
 * - the process map is timed through ProcessReader over the PostgreSQL read-model query adapter,
 *   the same three maps as on SQLite (bench/scale-steps.ts);
 * - the tables are weighed with `pg_total_relation_size` (indexes and TOAST included): the log's
 *   and the read models', in bytes per event;
 * - the read models are rebuilt: `ocelog project --rebuild --once`, medians of runs.
 */
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/app/runtime.js'
import { openPostgresPool } from '../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelQuery } from '../src/adapters/postgres/postgres-read-model-query.js'
import { READ_MODEL_TABLES } from '../src/adapters/postgres/read-models-schema.js'
import { migrate, SCHEMA } from '../src/adapters/postgres/schema.js'
import { ProcessReader } from '../src/read/process-reader.js'
import { startPostgresServer } from './postgres-server.js'
import { embeddedEnv } from './processes.js'
import { num, Table } from './report.js'
import { log, type ProjectorSpawn, runScaleSteps, type ScaleOptions, scaleRows } from './scale-steps.js'

/** The tables of the log (schema.ts): the records, the head, and the claims taken before it. */
const LOG_TABLES = ['records', 'log_head', 'idempotency_keys', 'object_claims'] as const

/** The server's settings beyond the harness's: bench/postgres.ts's, so that the two benches' figures compare. */
const SERVER_SETTINGS = { shared_buffers: '256MB', max_wal_size: '2GB' }

/** pg_total_relation_size of each table (bytes), and the sums of the log's and the read models' over the events. */
interface TableBytes {
  tables: Record<string, number>
  log: number
  readModels: number
  logPerEvent: number
  readModelsPerEvent: number
}

export type PostgresScaleMeasurements = Awaited<ReturnType<typeof runScaleSteps<TableBytes>>> & {
  /** `SHOW server_version`, and the settings given to the server beyond the harness's. */
  server: { version: string; settings: Record<string, string> }
}

/**
 * Runs the bench on a PostgreSQL server it starts and removes (`--keep`: stops it and keeps its
 * folder); `dataDir` is the CLI's OCELOG_DATA_DIR (nothing is written there on PostgreSQL).
 * @throws when PostgreSQL 15 server binaries are missing (bench/postgres-server.ts says how to get
 *   them), a projector run fails, or the read models hold another number of events than the log.
 */
export async function measurePostgres(o: ScaleOptions, dataDir: string): Promise<PostgresScaleMeasurements> {
  const server = await startPostgresServer(SERVER_SETTINGS)
  log(`PostgreSQL: server on port ${String(server.port)}, folder ${server.dir}`)
  try {
    const url = await server.createDatabase('ocelog_scale')
    const pool = openPostgresPool(url, { max: 2 })
    const eventLog = new PostgresEventLog(pool)
    try {
      await migrate(pool)
      const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown'
      log(`PostgreSQL ${version}: schema ${SCHEMA} made (migrate), the read-model tables with their query indexes`)
      const projector: ProjectorSpawn = {
        nodeFlags: SERVICE_NODE_FLAGS,
        env: embeddedEnv(dataDir, { ...SERVICE_ENV, POSTGRES_URL: url, LOG_LEVEL: 'info' }),
        checkpoint: async () => {
          const r = await pool.query<{ p: string | null }>(`SELECT min(position) AS p FROM ${SCHEMA}.rm_checkpoints`)
          const p = r.rows[0]?.p
          return p === null || p === undefined ? null : Number(p)
        },
      }
      const m = await runScaleSteps<TableBytes>(o, {
        port: 'the PostgreSQL log port',
        projector,
        rebuildArgs: ['project', '--rebuild', '--once'],
        withLog: (fn) => fn(eventLog),
        withReader: (fn) => fn(new ProcessReader({ query: new PostgresReadModelQuery(pool), log: eventLog })),
        weigh: (events) => tableBytes(pool, events),
      })
      return { ...m, server: { version, settings: SERVER_SETTINGS } }
    } finally {
      await eventLog.close()
      await pool.end()
    }
  } finally {
    if (o.keep) {
      server.stop()
      log(`PostgreSQL: server stopped, its folder kept in ${server.dir}`)
    } else server.remove()
  }
}

/** pg_total_relation_size of the log's and the read models' tables, logged; per event over `events`. */
async function tableBytes(pool: ReturnType<typeof openPostgresPool>, events: number): Promise<TableBytes> {
  const names = [...LOG_TABLES, ...READ_MODEL_TABLES]
  const r = await pool.query<{ name: string; bytes: string }>(
    `SELECT name, pg_total_relation_size(format('%I.%I', $1::text, name)::regclass) AS bytes FROM unnest($2::text[]) AS name`,
    [SCHEMA, names],
  )
  const tables = Object.fromEntries(r.rows.map((row) => [row.name, Number(row.bytes)]))
  const sum = (list: readonly string[]) => list.reduce((n, t) => n + (tables[t] ?? 0), 0)
  const logBytes = sum(LOG_TABLES)
  const rmBytes = sum(READ_MODEL_TABLES)
  const bytes = { tables, log: logBytes, readModels: rmBytes, logPerEvent: logBytes / events, readModelsPerEvent: rmBytes / events }
  log(
    `tables: the log ${num(logBytes / 2 ** 20)} MiB (${num(bytes.logPerEvent)} B/event), the read models ${num(rmBytes / 2 ** 20)} MiB (${num(bytes.readModelsPerEvent)} B/event)`,
  )
  const largest = Object.entries(tables)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
  log(`tables: largest ${largest.map(([t, b]) => `${t} ${num(b / 2 ** 20)} MiB`).join(', ')}`)
  return bytes
}

/** The table of a PostgreSQL run, and its targets (docs/performance.md#targets). */
export function summarisePostgres(m: PostgresScaleMeasurements): Table {
  const t = new Table()
  const events = m.load.events
  scaleRows(t, m, {
    port: 'the PostgreSQL log port',
    on: ' on PostgreSQL',
    catchUpTarget: 'reported',
    rebuildArgs: 'project --rebuild --once',
    rebuildTarget: 'reported',
    allMapCheck: `all-time map at ${events === 1_000_000 ? '1M' : num(events)} events on PostgreSQL ≤ 100 ms`,
    windowMapCheck: 'window map on PostgreSQL ≤ 300 ms',
    logBytes: `log tables (${LOG_TABLES.join(', ')}; pg_total_relation_size)`,
    readModelBytes: 'read-model tables (rm_*; pg_total_relation_size)',
    readModelBytesTarget: 'reported',
  })
  return t
}
