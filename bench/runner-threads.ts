/**
 * The embedded projector's threads, measured (README § Architecture): a fresh data dir gets N
 * records of a scenario (bench/bodies.ts, appended through the SQLite log port as the API records
 * them), then the read models catch up from nothing to the log's head, alternately
 * (a) with one worker thread of every projection and (b) with one worker thread per runner
 * (src/projector/runners.ts), as the service runs them; each runner writes its own file
 * (read-models.db, read-models-process.db) either way. Each catch-up runs the service's own worker
 * body (src/app/projector-thread.ts) with the service's V8 limits, on new read-models files; it
 * ends when every projection's checkpoint is at the head.
 *
 * Prints, per catch-up, records/s, when each runner reached the head, the process's CPU time (every
 * thread) and peak RSS (process.memoryUsage().rss, sampled every 50 ms), then the ratios b/a of each pair. The machine
 * may be shared: compare the layouts within one run, not across runs.
 *
 *   node --max-old-space-size=1024 dist/bench/runner-threads.js [--records 200000] [--rounds 2] [--scenario batch]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { Command, Option } from 'commander'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../src/adapters/sqlite/log/sqlite-event-log.js'
import { ALL_CHECKPOINTS_SQL, openReadModelsDatabase, READ_MODELS_FILE_NAMES } from '../src/adapters/sqlite/read-models/read-models-database.js'
import type { RecordContext } from '../src/core/records.js'
import { PROJECTION_NAMES } from '../src/core/read-model-changes.js'
import { projectionCheckpoint, READ_MODELS_PROJECTION } from '../src/projector/checkpoints.js'
import { WORKER_YOUNG_GENERATION_MB, workerHeapMb } from '../src/projector/embedded.js'
import { RUNNER_NAMES, type RunnerName, runnerProjections } from '../src/projector/runners.js'
import type { ProjectorWorkerData, ToWorker } from '../src/projector/worker.js'
import { planEvents } from '../src/write/ingest.js'
import { bodySource, SCENARIOS, type Scenario } from './bodies.js'
import { positiveInt } from './int-options.js'

const DATASET = 'bench-runner-threads'
/** Bodies (of 100 events each) appended per transaction. */
const BODIES_PER_APPEND = 10
const SAMPLE_MS = 50

type Layout = 'a: one worker' | 'b: worker per runner'

interface CatchUp {
  layout: Layout
  seconds: number
  recordsPerSec: number
  /** Seconds until each runner's projections were all at the head. */
  runnerSeconds: Record<RunnerName, number>
  peakRssMb: number
  startRssMb: number
  /** CPU time of the whole process (every thread, user + system) during the catch-up, s. */
  cpuSeconds: number
  /** The machine's 1-minute load average at the end. */
  load: number
}

/**
 * Appends records of `scenario` to the log in `dataDir` until it holds at least `records`; returns
 * the head. A log that holds that many already (a `--data-dir` of an earlier run) is used as it is:
 * appending the scenario's pool again would send its events late (bench/bodies.ts).
 */
async function load(dataDir: string, scenario: Scenario, records: number): Promise<number> {
  const db = openDatabase(dataDir)
  const log = new SqliteEventLog(db)
  const existing = (await log.lastPosition()) ?? 0
  if (existing >= records) {
    await log.close()
    db.close()
    process.stdout.write(`using the ${String(existing)} records already in ${dataDir} (no load)\n`)
    return existing
  }
  const next = bodySource(scenario, 2, 'x')
  let appended = 0
  let appends = 0
  const started = performance.now()
  while (appended < records) {
    const items: unknown[] = []
    for (let i = 0; i < BODIES_PER_APPEND; i++) items.push(...(JSON.parse(next()) as { events: unknown[] }).events)
    appends += 1
    const ctx: RecordContext = { datasetId: DATASET, keyId: 'bench', requestId: `load-${String(appends)}`, receivedAt: new Date().toISOString() }
    const plan = planEvents(items, ctx)
    if (plan.failures.length > 0) throw new Error(`generated events refused: ${JSON.stringify(plan.failures[0])}`)
    await log.append(DATASET, plan.records, plan.claims)
    appended += plan.records.length
  }
  const head = (await log.lastPosition()) ?? 0
  db.pragma('wal_checkpoint(TRUNCATE)')
  await log.close()
  db.close()
  process.stdout.write(`loaded ${String(appended)} records (${scenario}) in ${((performance.now() - started) / 1000).toFixed(1)} s; head ${String(head)}\n`)
  return head
}

/** Starts the service's projector thread on `dataDir` with `data`'s runner. */
function startWorker(data: ProjectorWorkerData): Worker {
  return new Worker(new URL('../src/app/projector-thread.js', import.meta.url), {
    workerData: data,
    resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(), maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  })
}

/** Catches the read models of `dataDir` up from nothing to `head` with `layout`'s threads. */
async function catchUp(dataDir: string, head: number, layout: Layout): Promise<CatchUp> {
  for (const name of Object.values(READ_MODELS_FILE_NAMES)) for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, name + suffix), { force: true })
  // The API thread opens (makes) the file before the workers start, as `serve` does.
  const { db } = openReadModelsDatabase(dataDir)
  const checkpoint = db.prepare<[{ p: string }], number>(`SELECT position FROM (${ALL_CHECKPOINTS_SQL}) WHERE projector = @p`).pluck()
  const atHead = (runner: RunnerName) =>
    runnerProjections(runner).every((p) => (checkpoint.get({ p: projectionCheckpoint(READ_MODELS_PROJECTION, p) }) ?? 0) >= head)
  const startRss = process.memoryUsage().rss
  let peakRss = startRss
  const started = performance.now()
  const cpu = process.cpuUsage()
  const workers =
    layout === 'a: one worker'
      ? [startWorker({ dataDir, logLevel: 'warn' })]
      : RUNNER_NAMES.map((runner, i) => startWorker({ dataDir, logLevel: 'warn', runner, checkpointsLog: i === 0 }))
  const failed = new Promise<never>((_, reject) => {
    for (const w of workers) w.once('error', reject)
  })
  const runnerSeconds: Partial<Record<RunnerName, number>> = {}
  const done = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
      for (const runner of RUNNER_NAMES) if (runnerSeconds[runner] === undefined && atHead(runner)) runnerSeconds[runner] = (performance.now() - started) / 1000
      if (RUNNER_NAMES.every((r) => runnerSeconds[r] !== undefined)) {
        clearInterval(timer)
        resolve()
      }
    }, SAMPLE_MS)
  })
  await Promise.race([done, failed])
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  await Promise.all(
    workers.map(async (w) => {
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()))
      w.postMessage({ type: 'stop' } satisfies ToWorker)
      await exited
    }),
  )
  db.close()
  return {
    layout,
    seconds,
    recordsPerSec: head / seconds,
    runnerSeconds: runnerSeconds as Record<RunnerName, number>,
    peakRssMb: peakRss / 2 ** 20,
    startRssMb: startRss / 2 ** 20,
    cpuSeconds: (used.user + used.system) / 1e6,
    load: loadavg()[0] ?? 0,
  }
}

async function main(): Promise<void> {
  const program = new Command()
    .name('runner-threads')
    .description('catch-up of the embedded read models: one worker thread vs one worker thread per runner')
    .option('--records <n>', 'records to append', positiveInt, 200_000)
    .option('--rounds <n>', 'pairs of catch-ups (a then b)', positiveInt, 2)
    .addOption(new Option('--scenario <name>', 'body scenario (bench/bodies.ts)').choices(SCENARIOS.filter((s) => s !== 'objects')).default('batch'))
    .option('--data-dir <dir>', 'data dir (default: a new one under the system temp dir, removed at the end)')
    .parse()
  const opts = program.opts<{ records: number; rounds: number; scenario: Scenario; dataDir?: string }>()
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'ocelog-runner-threads-'))
  try {
    const head = await load(dataDir, opts.scenario, opts.records)
    process.stdout.write(`projections: ${PROJECTION_NAMES.length}; runners: ${RUNNER_NAMES.join(', ')}\n`)
    const results: CatchUp[] = []
    for (let round = 1; round <= opts.rounds; round++) {
      for (const layout of ['a: one worker', 'b: worker per runner'] as const) {
        const r = await catchUp(dataDir, head, layout)
        results.push(r)
        const runners = RUNNER_NAMES.map((n) => `${n} ${r.runnerSeconds[n].toFixed(1)} s`).join(', ')
        process.stdout.write(
          `round ${String(round)} ${layout}: ${r.seconds.toFixed(1)} s, ${Math.round(r.recordsPerSec).toLocaleString('en')} records/s (${runners}); CPU ${r.cpuSeconds.toFixed(1)} s; RSS ${r.startRssMb.toFixed(0)} -> peak ${r.peakRssMb.toFixed(0)} MB; load ${r.load.toFixed(1)}\n`,
        )
      }
      const [a, b] = results.slice(-2)
      if (a !== undefined && b !== undefined)
        process.stdout.write(
          `round ${String(round)} b/a: ${(b.recordsPerSec / a.recordsPerSec).toFixed(2)}x records/s, ${(b.cpuSeconds / a.cpuSeconds).toFixed(2)}x CPU\n`,
        )
    }
  } finally {
    if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`runner-threads: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
