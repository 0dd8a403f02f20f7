/**
 * `npm run bench:postgres`: ingest on PostgreSQL (docs/operations.md#production-on-postgresql)
 * against the embedded default measured in the same run (docs/performance.md#method). On a
 * PostgreSQL 15 server of its own (bench/postgres-server.ts, fsync and synchronous_commit on):
 * - the batch scenario (100 events × 3 objects per request) on the embedded default, as `npm start` runs it;
 * - the same on one API process (`serve --no-projector`) on PostgreSQL, then on two, each loaded by
 *   a load generator of its own with half the connections;
 * - the p99 latency of the two processes at half their peak, paced (open loop);
 * - the catch-up of one projector process (`ocelog project`, both runners) started after those loads,
 *   from no checkpoint to the log's head: the records it applied per second; then a standby's
 *   takeover of its leases after a `kill -9` of it;
 * - the peak RSS of each Ocelog process.
 * Prints one table with the targets and writes it as JSON to bench/results/<date>-<commit>-postgres.json.
 * - the all-time process map of the dataset those loads made, through the query layer.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import pg from 'pg'
import { PROJECTION_NAMES } from '../src/core/read-model-changes.js'
import { openPostgresPool } from '../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../src/adapters/postgres/postgres-event-log.js'
import { leaseHolders } from '../src/adapters/postgres/postgres-lease.js'
import { RUNNER_NAMES, runnerProjections } from '../src/projector/runners.js'
import { PostgresReadModelQuery } from '../src/adapters/postgres/postgres-read-model-query.js'
import { ProcessReader } from '../src/read/process-reader.js'
import { SCENARIO_SHAPES } from './bodies.js'
import { positiveInt } from './int-options.js'
import { LoadWorker } from './load-client.js'
import type { LoadJob, LoadResult } from './load-protocol.js'
import { startPostgresServer } from './postgres-server.js'
import { CLI, createKey, ROOT, type Running, rssOf, startService, stopProcess } from './processes.js'
import { check, commitOf, freeResultName, markOf, ms, num, printAndSave, ratio, type Row, type TargetCheck } from './report.js'
import { messageOf } from '../src/core/errors.js'
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/app/runtime.js'

interface Options {
  duration: number
  warmup: number
  connections: number
  out: string
}

const started = Date.now()
function log(line: string): void {
  const s = Math.floor((Date.now() - started) / 1000)
  process.stdout.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`)
}

/**
 * Where a load sends in the batch scenario's live feed: its seed (the orders are the seed's own; the
 * customers and items are every seed's) and its first cycle (bodySource's `firstCycle`). The loads into
 * one database each take a seed of their own and start a hundred cycles (years) after the previous one,
 * so the log is one feed whose clock moves on, as the batch scenario describes (docs/performance.md#method),
 * rather than three rewinds of the same events; two loads at once are two senders with their own clocks.
 */
interface FeedPart {
  seed: number
  firstCycle: number
}

/** The batch job against `baseUrl` at `feed`: closed loop, or paced at `pacedRate` requests/s. */
function batchJob(label: string, baseUrl: string, token: string, connections: number, o: Options, feed: FeedPart, pacedRate?: number): LoadJob {
  return {
    label,
    baseUrl,
    scenario: 'batch',
    token,
    connections,
    durationSec: o.duration,
    warmupSec: o.warmup,
    seed: feed.seed,
    firstCycle: feed.firstCycle,
    tag: `${label.replace(/[^a-z0-9]+/g, '-')}${Date.now().toString(36)}`,
    ...(pacedRate === undefined ? {} : { pacedRate }),
  }
}

/** Loads of several processes at once, one load generator each: their sum, and the worst p99. */
interface JointLoad {
  eventsPerSec: number
  p99: number
  non2xx: number
  errors: number
}

function joint(results: readonly LoadResult[]): JointLoad {
  return {
    eventsPerSec: results.reduce((sum, r) => sum + r.itemsPerSec, 0),
    p99: Math.max(...results.map((r) => r.latencyP99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  }
}

function describe(label: string, l: JointLoad): string {
  const bad = l.non2xx + l.errors > 0 ? `, ${String(l.non2xx)} non-2xx, ${String(l.errors)} errors` : ''
  return `${label}: ${num(l.eventsPerSec)} events/s, p99 ${ms(l.p99)}${bad}`
}

interface Measurements {
  embedded: JointLoad
  onePg: JointLoad
  twoPg: JointLoad
  halfPeak: JointLoad & { rate: number }
  peakRssMb: { embedded: number; pgApi: number[]; projector: number }
  catchUp: CatchUp
  map: MapTiming
}

interface CatchUp {
  records: number
  seconds: number
  recordsPerSec: number
  peakRssMb: number
  /** Seconds from a kill -9 of the projector to a standby holding every lease. */
  takeoverSeconds: number
  /** Seconds from the projector's start until each runner's checkpoints were all at the head. */
  runnerSeconds: Record<string, number>
  /** The catch-up's statements that took the most server time (pg_stat_statements), for where the time goes. */
  statements: { calls: number; ms: number; rows: number; query: string }[]
  /** Directly-follows steps the catch-up inserted, and stored steps it relinked (an event late for its object goes between two). */
  steps: { inserted: number; relinked: number }
  /**
   * The server's write-ahead log over the catch-up (pg_stat_wal, the whole server: the projector's
   * transactions and autovacuum), per log record applied: its WAL records (a row's heap tuple and each
   * of its index entries is one) and bytes, and the full-page images among them.
   */
  wal: { recordsPerRecord: number; bytesPerRecord: number; fullPageImages: number }
}

/** The server's WAL totals so far (pg_stat_wal, PostgreSQL 14 and later). */
async function walTotals(pool: pg.Pool): Promise<{ records: number; bytes: number; fpi: number }> {
  const r = await pool.query<{ records: string; bytes: string; fpi: string }>(
    'SELECT wal_records AS records, wal_bytes AS bytes, wal_fpi AS fpi FROM pg_stat_wal',
  )
  const row = r.rows[0]
  return { records: Number(row?.records ?? 0), bytes: Number(row?.bytes ?? 0), fpi: Number(row?.fpi ?? 0) }
}

interface MapTiming {
  events: number
  edges: number
  runMs: number[]
  medianMs: number
}

/**
 * Times the all-time process map of the loaded dataset, as `GET /v1/process/map` answers it
 * without HTTP (ProcessReader over the PostgreSQL query adapter): the median of `runs` runs after
 * one warm-up run.
 */
async function timeMap(url: string, runs: number): Promise<MapTiming> {
  const pool = openPostgresPool(url, { max: 2 })
  const log = new PostgresEventLog(pool)
  try {
    const datasetId = (await pool.query<{ id: string }>('SELECT id FROM ocelog.datasets LIMIT 1')).rows[0]?.id ?? ''
    const reader = new ProcessReader({ query: new PostgresReadModelQuery(pool), log })
    const events = (await reader.summary(datasetId)).events
    const warm = await reader.processMap(datasetId, {})
    const runMs: number[] = []
    for (let i = 0; i < runs; i++) {
      const t = performance.now()
      await reader.processMap(datasetId, {})
      runMs.push(performance.now() - t)
    }
    const sorted = [...runMs].sort((a, b) => a - b)
    const medianMs = sorted[Math.floor(sorted.length / 2)] ?? 0
    return { events, edges: warm.object_types.reduce((n, t) => n + t.edges.length, 0), runMs, medianMs }
  } finally {
    await log.close()
    await pool.end()
  }
}

/**
 * An `ocelog project` process on `url`, with the node flags and environment the service's processes
 * are given (SERVICE_NODE_FLAGS, SERVICE_ENV), as docker-compose.yml gives its projectors.
 */
function startProjector(url: string, dataDir: string): ChildProcess {
  return spawn(process.execPath, [...SERVICE_NODE_FLAGS, CLI, 'project'], {
    env: { ...process.env, ...SERVICE_ENV, POSTGRES_URL: url, OCELOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

/**
 * With `holder` running and holding every runner's lease: starts a second `ocelog project` (a
 * standby), lets it wait 2 s, kills the holder with SIGKILL, and times until the standby holds
 * every lease (pg_locks, polled every 50 ms). Stops the standby.
 * @returns seconds from the kill to the takeover.
 */
async function standbyTakeover(url: string, dataDir: string, holder: ChildProcess): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  const standby = startProjector(url, dataDir)
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const killedAt = performance.now()
    holder.kill('SIGKILL')
    for (;;) {
      const held = await leaseHolders(pool, RUNNER_NAMES)
      if (held.length === RUNNER_NAMES.length && held.every((h) => h.holder.endsWith(` pid ${String(standby.pid)}`)))
        return (performance.now() - killedAt) / 1000
      if (performance.now() - killedAt > 60_000) throw new Error('the standby did not take the leases over within 60 s')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    await stopProcess(standby)
    await pool.end()
  }
}

/**
 * Starts one `ocelog project` process on `url` and times it from its start until every checkpoint
 * of every projection is at the log's head (polled every 100 ms on the database); then times a
 * standby's takeover after a `kill -9` of it (standbyTakeover).
 */
async function projectorCatchUp(url: string, dataDir: string): Promise<CatchUp> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    const head = Number((await pool.query<{ position: string }>('SELECT position FROM ocelog.log_head')).rows[0]?.position ?? 0)
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    await pool.query('SELECT pg_stat_statements_reset()')
    const walBefore = await walTotals(pool)
    const startedAt = performance.now()
    const child = startProjector(url, dataDir)
    let peak = 0
    let takeoverSeconds = 0
    const runnerSeconds: Record<string, number> = {}
    try {
      for (;;) {
        peak = Math.max(peak, rssOf(child.pid ?? -1).peak)
        const r = await pool.query<{ projector: string; position: string }>('SELECT projector, position FROM ocelog.rm_checkpoints')
        for (const runner of RUNNER_NAMES) {
          const own = runnerProjections(runner)
          const done = own.every((p) => r.rows.some((c) => c.projector === p && Number(c.position) >= head))
          if (done && runnerSeconds[runner] === undefined) runnerSeconds[runner] = (performance.now() - startedAt) / 1000
        }
        if (r.rows.length === PROJECTION_NAMES.length && r.rows.every((c) => Number(c.position) >= head)) break
        if (child.exitCode !== null) throw new Error(`ocelog project exited ${String(child.exitCode)} before catching up`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } catch (error) {
      await stopProcess(child)
      throw error
    }
    const seconds = (performance.now() - startedAt) / 1000
    const top = await pool.query<{ calls: string; ms: string; rows: string; query: string }>(
      `SELECT calls, round(total_exec_time) AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY total_exec_time DESC LIMIT 12`,
    )
    const statements = top.rows.map((t) => ({ calls: Number(t.calls), ms: Number(t.ms), rows: Number(t.rows), query: t.query }))
    const stepRows = await pool.query<{ inserted: string | null; relinked: string | null }>(
      `SELECT sum(rows) FILTER (WHERE query LIKE 'INSERT INTO ocelog.rm_df_steps%') AS inserted,
              sum(rows) FILTER (WHERE query LIKE 'UPDATE ocelog.rm_df_steps%') AS relinked
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    )
    const steps = { inserted: Number(stepRows.rows[0]?.inserted ?? 0), relinked: Number(stepRows.rows[0]?.relinked ?? 0) }
    const walAfter = await walTotals(pool)
    const wal = {
      recordsPerRecord: (walAfter.records - walBefore.records) / head,
      bytesPerRecord: (walAfter.bytes - walBefore.bytes) / head,
      fullPageImages: walAfter.fpi - walBefore.fpi,
    }
    takeoverSeconds = await standbyTakeover(url, dataDir, child)
    await stopProcess(child)
    return { records: head, seconds, recordsPerSec: head / seconds, peakRssMb: peak / 2 ** 20, takeoverSeconds, runnerSeconds, statements, steps, wal }
  } finally {
    await pool.end()
  }
}

async function measure(o: Options, tmp: string): Promise<Measurements> {
  const workers = [await LoadWorker.start(), await LoadWorker.start()]
  const services: Running[] = []
  // pg_stat_statements: where the projector's catch-up spends the server's time (CatchUp.statements).
  const server = await startPostgresServer({ shared_buffers: '256MB', max_wal_size: '2GB', shared_preload_libraries: 'pg_stat_statements' })
  try {
    // The embedded default, as `npm start` runs it (its projector in worker threads, one per runner).
    const embeddedDir = join(tmp, 'embedded')
    const embeddedToken = await createKey(embeddedDir)
    const embedded = await startService(embeddedDir, embeddedToken)
    services.push(embedded)
    const embeddedLoad = joint(
      [await workers[0]?.run(batchJob('batch @ embedded', embedded.url, embeddedToken, o.connections, o, { seed: 2, firstCycle: 0 }))].filter(isResult),
    )
    log(describe('batch, embedded default', embeddedLoad))
    const embeddedRss = rssOf(embedded.pid).peak
    await stopProcess(embedded.child)

    const url = await server.createDatabase('ocelog_bench')
    const pgEnv = { POSTGRES_URL: url }
    const pgDir = join(tmp, 'postgres')
    const token = await createKey(pgDir, pgEnv)
    const a = await startService(pgDir, token, [], ['--no-projector'], pgEnv)
    services.push(a)
    const one = joint([await workers[0]?.run(batchJob('batch @ postgres, 1 API', a.url, token, o.connections, o, { seed: 2, firstCycle: 0 }))].filter(isResult))
    log(describe('batch, PostgreSQL, one API process', one))

    const b = await startService(pgDir, token, [], ['--no-projector'], pgEnv)
    services.push(b)
    const half = Math.max(1, Math.floor(o.connections / 2))
    const both = joint(
      await Promise.all([
        workers[0]?.run(batchJob('batch @ postgres, API 1 of 2', a.url, token, half, o, { seed: 3, firstCycle: 100 })),
        workers[1]?.run(batchJob('batch @ postgres, API 2 of 2', b.url, token, half, o, { seed: 4, firstCycle: 100 })),
      ]).then((r) => r.filter(isResult)),
    )
    log(describe('batch, PostgreSQL, two API processes', both))

    // Half the two processes' peak, paced: requests/s per process = events/s ÷ 100 events ÷ 2.
    const rate = both.eventsPerSec / 2
    const perProcess = rate / SCENARIO_SHAPES.batch.itemsPerRequest / 2
    const paced = joint(
      await Promise.all([
        workers[0]?.run(batchJob('paced @ postgres, API 1 of 2', a.url, token, half, o, { seed: 5, firstCycle: 200 }, perProcess)),
        workers[1]?.run(batchJob('paced @ postgres, API 2 of 2', b.url, token, half, o, { seed: 6, firstCycle: 200 }, perProcess)),
      ]).then((r) => r.filter(isResult)),
    )
    log(describe(`batch paced at ${num(rate)} events/s, two API processes`, paced))
    const catchUp = await projectorCatchUp(url, pgDir)
    log(`projector catch-up: ${num(catchUp.records)} records in ${catchUp.seconds.toFixed(1)} s, ${num(catchUp.recordsPerSec)} records/s`)
    log(
      `runners at the head after: ${Object.entries(catchUp.runnerSeconds)
        .map(([r, t]) => `${r} ${t.toFixed(1)} s`)
        .join(', ')}`,
    )
    log(`directly-follows steps: ${num(catchUp.steps.inserted)} inserted, ${num(catchUp.steps.relinked)} relinked`)
    log(
      `WAL per record applied: ${catchUp.wal.recordsPerRecord.toFixed(1)} WAL records, ${num(catchUp.wal.bytesPerRecord)} bytes (${num(catchUp.wal.fullPageImages)} full-page images in all)`,
    )
    for (const t of catchUp.statements.slice(0, 8)) log(`  ${num(t.ms)} ms, ${num(t.calls)} calls, ${num(t.rows)} rows: ${t.query.slice(0, 100)}`)
    const map = await timeMap(url, 5)
    log(`all-time map at ${num(map.events)} events: median ${ms(map.medianMs)} of ${map.runMs.map((r) => r.toFixed(1)).join(', ')} ms`)
    return {
      embedded: embeddedLoad,
      onePg: one,
      twoPg: both,
      halfPeak: { ...paced, rate },
      peakRssMb: { embedded: embeddedRss / 2 ** 20, pgApi: [a, b].map((s) => rssOf(s.pid).peak / 2 ** 20), projector: catchUp.peakRssMb },
      catchUp,
      map,
    }
  } finally {
    for (const s of services) await stopProcess(s.child)
    for (const w of workers) await w.stop()
    server.remove()
  }
}

function isResult(r: LoadResult | undefined): r is LoadResult {
  return r !== undefined
}

function summarise(m: Measurements): { rows: Row[]; targets: TargetCheck[] } {
  const twoMin = check('batch, two API processes ≥ 15,000 events/s', m.twoPg.eventsPerSec, 'min', 15_000, 'events/s')
  const twoRatio = check('batch, two API processes ≥ 0.35× the embedded default', m.twoPg.eventsPerSec / m.embedded.eventsPerSec, 'min', 0.35, '×')
  const p99 = check('batch p99 at half the peak ≤ 100 ms', m.halfPeak.p99, 'max', 100, 'ms')
  const rss = check('peak RSS of each Ocelog process ≤ 300 MB', Math.max(...m.peakRssMb.pgApi, m.peakRssMb.projector), 'max', 300, 'MB')
  const catchUp = check('projector catch-up after the batch load ≥ 15,000 records/s', m.catchUp.recordsPerSec, 'min', 15_000, 'records/s')
  const map = check('all-time map ≤ 100 ms', m.map.medianMs, 'max', 100, 'ms')
  const takeover = check('standby takeover after kill -9 ≤ 10 s', m.catchUp.takeoverSeconds, 'max', 10, 's')
  const targets = [twoMin, twoRatio, p99, catchUp, map, takeover, rss]
  const rows: Row[] = [
    {
      figure: 'batch (100 × 3 objects), one API process',
      value: `${num(m.onePg.eventsPerSec)} events/s`,
      baseline: `${num(m.embedded.eventsPerSec)} events/s (embedded)`,
      ratio: ratio(m.onePg.eventsPerSec, m.embedded.eventsPerSec),
      target: 'reported',
      mark: '',
    },
    {
      figure: 'batch, two API processes',
      value: `${num(m.twoPg.eventsPerSec)} events/s`,
      baseline: `${num(m.embedded.eventsPerSec)} events/s (embedded)`,
      ratio: ratio(m.twoPg.eventsPerSec, m.embedded.eventsPerSec),
      target: '≥ 15,000 events/s and ≥ 0.35×',
      mark: twoMin.pass && twoRatio.pass ? 'pass' : 'miss',
    },
    {
      figure: `batch p99 at half the peak (${num(m.halfPeak.rate)} events/s)`,
      value: ms(m.halfPeak.p99),
      baseline: '',
      ratio: '',
      target: '≤ 100 ms',
      mark: markOf(p99),
    },
    {
      figure: `projector catch-up after the loads, one process (${num(m.catchUp.records)} records)`,
      value: `${num(m.catchUp.recordsPerSec)} records/s`,
      baseline: '',
      ratio: '',
      target: '≥ 15,000 records/s',
      mark: markOf(catchUp),
    },
    {
      figure: 'standby takeover after kill -9 of the projector',
      value: `${m.catchUp.takeoverSeconds.toFixed(2)} s`,
      baseline: '',
      ratio: '',
      target: '≤ 10 s',
      mark: markOf(takeover),
    },
    {
      figure: `all-time map at ${num(m.map.events)} events (${String(m.map.edges)} edges), median of ${String(m.map.runMs.length)}`,
      value: ms(m.map.medianMs),
      baseline: '',
      ratio: '',
      target: '≤ 100 ms (at 1M events)',
      mark: markOf(map),
    },
    {
      figure: 'peak RSS of each process on PostgreSQL (API, API, projector)',
      value: [...m.peakRssMb.pgApi, m.peakRssMb.projector].map((mb) => `${num(mb)} MB`).join(', '),
      baseline: `${num(m.peakRssMb.embedded)} MB (embedded, API and projector)`,
      ratio: '',
      target: '≤ 300 MB',
      mark: markOf(rss),
    },
  ]
  return { rows, targets }
}

async function main(): Promise<void> {
  const program = new Command('bench:postgres')
    .description(
      'Benchmark ingest on PostgreSQL (one and two API processes on a server of its own) against the embedded default in the same run; ' +
        'prints one table and writes it as JSON to bench/results/<date>-<commit>-postgres.json',
    )
    .option('--duration <s>', 'seconds of load per run', positiveInt, 15)
    .option('--warmup <s>', 'unrecorded seconds of load before each run', positiveInt, 2)
    .option('--connections <n>', 'concurrent connections in all (split between the API processes)', positiveInt, 16)
    .option('--out <dir>', 'folder of the JSON results', join(ROOT, 'bench', 'results'))
    .addHelpText('after', '\nNeeds PostgreSQL 15 server binaries (apt-get install postgresql-15); run `npm run build` first (npm run bench:postgres does).')
  program.parse(process.argv)
  const o = program.opts<Options>()
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`)
  const loadAtStart = loadavg()[0] ?? 0
  log(`Ocelog on PostgreSQL: batch, ${String(o.duration)} s per run, ${String(o.connections)} connections; load average ${loadAtStart.toFixed(2)}`)
  const tmp = mkdtempSync(join(tmpdir(), 'ocelog-bench-pg-'))
  let m: Measurements
  try {
    m = await measure(o, tmp)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  const { rows, targets } = summarise(m)
  const file = freeResultName(o.out, `${new Date(started).toISOString().slice(0, 10)}-${commitOf(ROOT)}-postgres`)
  const saved = printAndSave(rows, targets, { loadAtStart, startedMs: started, markdown: true, out: o.out, name: file }, { options: o, measurements: m })
  log(`results written to ${saved}`)
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:postgres: ${messageOf(error)}\n`)
  process.exit(1)
})
