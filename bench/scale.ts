/**
 * `npm run bench:scale` (docs/bench-scale.md): the read side at a million events. A seeded, generated
 * dataset (bench/generate.ts; no shared data) is appended into a fresh data directory through the
 * SQLite log port in chunks (bench/load-generated.ts; HTTP would only add time), then:
 * - the projector catches up (`ocelog project --once`, the built CLI as its own process, on read
 *   models that already have their query indexes, as after a batch load into a running service);
 * - the process map is timed through the query layer in this process (ProcessReader over the
 *   SQLite read-model query adapter, as `GET /v1/process/map` answers it, without HTTP): all object
 *   types over all time, one object type, and a window of about 100,000 events; medians of runs
 *   after one warm-up run each;
 * - the read models are rebuilt (`ocelog project --rebuild`), medians of runs;
 * - the files are weighed: bytes per event of the log (`ocelog.db`, object upserts included) and
 *   of the read models (`read-models.db`).
 * Prints one table as `npm run bench` does and writes it as JSON to
 * bench/results/<date>-<commit>-scale.json. With `--postgres`, the same on a PostgreSQL server of
 * its own (bench/scale-postgres.ts); the steps both run are in bench/scale-steps.ts.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { anyInt, positiveInt, wholeInt } from './int-options.js'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'
import { ALL_CHECKPOINTS_SQL, openReadModelsDatabase, openReadModelsReadOnly } from '../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { ProcessReader } from '../src/read/process-reader.js'
import { CLI, embeddedEnv, ROOT } from './processes.js'
import { check, commitOf, freeResultName, num, printAndSave, Table } from './report.js'
import { loggedProjectorRun, log, type ProjectorSpawn, runScaleSteps, type ScaleOptions, scaleRows, STARTED } from './scale-steps.js'
import { measurePostgres, summarisePostgres } from './scale-postgres.js'
import { messageOf } from '../src/core/errors.js'

/** The read models' checkpoint in `dataDir` (the lowest of both runners' files: all are caught up to it), read-only; null before the first apply or while the files are made. */
function checkpointOf(dataDir: string): number | null {
  if (!existsSync(join(dataDir, 'read-models.db'))) return null
  try {
    const db = openReadModelsReadOnly(dataDir)
    try {
      const sql = `SELECT min(position) AS p FROM (${ALL_CHECKPOINTS_SQL})`
      return (db.prepare(sql).get() as { p: number | null } | undefined)?.p ?? null
    } finally {
      db.close()
    }
  } catch {
    return null
  }
}

/** Bytes of an SQLite file with its WAL and shared-memory index. */
function fileBytes(path: string): number {
  let bytes = 0
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) bytes += statSync(f).size
  return bytes
}

/** Bytes of the two SQLite files (with their WAL and shared-memory index), and per event. */
interface FileBytes {
  log: number
  readModels: number
  logPerEvent: number
  readModelsPerEvent: number
}

export type ScaleMeasurements = Awaited<ReturnType<typeof runScaleSteps<FileBytes>>>

async function measure(o: ScaleOptions, dataDir: string): Promise<ScaleMeasurements> {
  const projector: ProjectorSpawn = {
    nodeFlags: ['--max-old-space-size=1024'],
    env: embeddedEnv(dataDir, { LOG_LEVEL: 'info' }),
    checkpoint: () => Promise.resolve(checkpointOf(dataDir)),
  }
  // Read models with their query indexes, as a running service has them: the projector at the
  // head of the empty log makes them (otherwise the catch-up would be a bulk load, as a rebuild is).
  await loggedProjectorRun(['project', '--once'], projector, 0, 'read models')
  log('read models: made, with their query indexes (ocelog project --once on the empty log)')
  const withLog = async <T>(fn: (eventLog: SqliteEventLog) => Promise<T>): Promise<T> => {
    const db = openDatabase(dataDir)
    const eventLog = new SqliteEventLog(db)
    try {
      return await fn(eventLog)
    } finally {
      await eventLog.close()
      db.close()
    }
  }
  return runScaleSteps<FileBytes>(o, {
    port: 'the SQLite log port',
    projector,
    rebuildArgs: ['project', '--rebuild'],
    withLog,
    withReader: (fn) =>
      withLog(async (mapLog) => {
        const rmDb = openReadModelsDatabase(dataDir).db
        try {
          return await fn(new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log: mapLog }))
        } finally {
          rmDb.close()
        }
      }),
    weigh: (events) => {
      const logBytes = fileBytes(join(dataDir, 'ocelog.db'))
      const rmBytes = fileBytes(join(dataDir, 'read-models.db')) + fileBytes(join(dataDir, 'read-models-process.db'))
      const bytes = { log: logBytes, readModels: rmBytes, logPerEvent: logBytes / events, readModelsPerEvent: rmBytes / events }
      log(
        `files: ocelog.db ${num(logBytes / 2 ** 20)} MiB (${num(bytes.logPerEvent)} B/event), read models ${num(rmBytes / 2 ** 20)} MiB (${num(bytes.readModelsPerEvent)} B/event)`,
      )
      return Promise.resolve(bytes)
    },
  })
}

function summarise(m: ScaleMeasurements): Table {
  const t = new Table()
  scaleRows(t, m, {
    port: 'the SQLite log port',
    on: '',
    catchUpTarget: '≥ 30,000',
    catchUpCheck: check('catch-up ≥ 30,000 records/s', m.catchUp.recordsPerSec, 'min', 30_000, 'records/s'),
    rebuildArgs: 'project --rebuild',
    rebuildTarget: '≥ 0.40× (b) of npm run bench',
    allMapCheck: 'all-time map ≤ 100 ms',
    windowMapCheck: 'window map ≤ 300 ms',
    logBytes: 'log on disk (ocelog.db, object upserts included)',
    readModelBytes: 'read models on disk (read-models.db and read-models-process.db)',
    readModelBytesTarget: '≤ 0.6× the log',
    readModelBytesCheck: check('read models ≤ 0.6× the log bytes', m.bytes.readModels / m.bytes.log, 'max', 0.6, '×'),
  })
  return t
}

async function main(): Promise<void> {
  const program = new Command('bench:scale')
    .description(
      'The read side at scale: generate a seeded dataset of N events (several object types, 1 to 50 objects per event, 30% with end_timestamp, ' +
        '5% out of time order, O2O relationships), append it through the SQLite log port into a fresh data directory, then time the ' +
        'projector catch-up, the process map (all time, one object type, a window of about 100,000 events), the rebuild, and weigh ' +
        'the files. Prints one table and writes it as JSON to bench/results/<date>-<commit>-scale.json.',
    )
    .option('--events <n>', 'events to generate', positiveInt, 1_000_000)
    .option('--seed <n>', 'seed of the generator', anyInt, 26)
    .option('--map-runs <n>', 'timed runs of each process map, after one warm-up (median reported)', positiveInt, 5)
    .option('--rebuild-runs <n>', 'rebuilds of the read models (median reported; 0: none, for a long manual run)', wholeInt, 2)
    .option('--chunk <n>', 'generated items per append (one transaction)', positiveInt, 5000)
    .option('--keep', 'keep the data directory, and with --postgres the stopped server’s folder (their paths are printed)', false)
    .option(
      '--postgres',
      'run it all on a PostgreSQL 15 server of its own (POSTGRES_URL): the load through the PostgreSQL log port, the catch-up and the rebuild by ' +
        'ocelog project with the service’s node flags, the maps over the PostgreSQL read models; weighs the log and read-model tables ' +
        '(pg_total_relation_size) and writes bench/results/<date>-<commit>-scale-postgres.json',
      false,
    )
    .option('--markdown', 'also print the table as Markdown', false)
    .option('--out <dir>', 'folder of the JSON results', join(ROOT, 'bench', 'results'))
    .addHelpText('after', '\nRun `npm run build` first (npm run bench:scale does), then: node dist/bench/scale.js [options]')
  program.parse(process.argv)
  const o = program.opts<ScaleOptions>()
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`)

  const loadAtStart = loadavg()[0] ?? 0
  // The commit of the code that runs, read before a long run during which HEAD may move.
  const commit = commitOf(ROOT)
  const dataDir = mkdtempSync(join(tmpdir(), 'ocelog-scale-'))
  log(
    `Ocelog bench at scale${o.postgres ? ' on PostgreSQL' : ''}: ${num(o.events)} events, seed ${String(o.seed)}, data directory ${dataDir}; load average ${loadAtStart.toFixed(2)}`,
  )
  let result: { table: Table; measurements: unknown }
  try {
    if (o.postgres) {
      const m = await measurePostgres(o, dataDir)
      result = { table: summarisePostgres(m), measurements: m }
    } else {
      const m = await measure(o, dataDir)
      result = { table: summarise(m), measurements: m }
    }
  } finally {
    if (o.keep) log(`data kept in ${dataDir}`)
    else rmSync(dataDir, { recursive: true, force: true })
  }
  // A later run of the same day and commit takes the next free name (-2, -3, …): none is overwritten.
  const name = freeResultName(o.out, `${new Date(STARTED).toISOString().slice(0, 10)}-${commit}-scale${o.postgres ? '-postgres' : ''}`)
  const file = printAndSave(
    result.table.rows,
    result.table.targets,
    { loadAtStart, startedMs: STARTED, markdown: o.markdown, out: o.out, name },
    { commit, options: o, measurements: result.measurements },
  )
  log(`results written to ${file}`)
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale: ${messageOf(error)}\n`)
  process.exit(1)
})
