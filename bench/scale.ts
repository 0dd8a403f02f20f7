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
 * bench/results/<date>-<commit>-scale.json.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Command } from 'commander'
import { anyInt, positiveInt, wholeInt } from './int-options.js'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { ProcessReader, type ProcessMapParams } from '../src/read/process-reader.js'
import { generatedWindow, generateItems, type GenerateOptions } from './generate.js'
import { type LoadResult, loadGenerated } from './load-generated.js'
import { CLI, embeddedEnv, exitedChildrenCpuSeconds, ROOT } from './processes.js'
import { check, commitOf, markOf, ms, num, printAndSave, ratio, type Row, type TargetCheck } from './report.js'
import { messageOf } from '../src/core/errors.js'

interface Options {
  events: number
  seed: number
  mapRuns: number
  rebuildRuns: number
  chunk: number
  keep: boolean
  markdown: boolean
  out: string
}

/** The dataset's id in the log. */
export const SCALE_DATASET = 'scale'

const started = Date.now()
function log(line: string): void {
  const s = Math.floor((Date.now() - started) / 1000)
  process.stdout.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`)
}

/** The events a window map reads (about; 10% of a dataset smaller than 1,000,000 events). */
const WINDOW_EVENTS = 100_000

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = (s.length - 1) / 2
  return ((s[Math.floor(mid)] ?? 0) + (s[Math.ceil(mid)] ?? 0)) / 2
}

const pct = (part: number, whole: number) => `${whole === 0 ? '0' : ((100 * part) / whole).toFixed(0)}%`

/** One run of `ocelog project` as the projector reported it (its own clock, without the process start). */
export interface ProjectorRun {
  records: number
  seconds: number
  recordsPerSec: number
  /** From spawning the process to its exit. */
  wallSeconds: number
  /** CPU time of the process (user + system), its start included: steadier than rates when other work shares the machine. */
  cpuSeconds: number
  /** cpuSeconds per record applied, in µs. */
  cpuMicrosPerRecord: number
}

/** The read models' checkpoint in `dataDir`, read-only; null before the first apply or while the file is made. */
function checkpointOf(dataDir: string): number | null {
  const file = join(dataDir, 'read-models.db')
  if (!existsSync(file)) return null
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true })
    try {
      return (db.prepare('SELECT max(position) AS p FROM rm_checkpoints').get() as { p: number | null } | undefined)?.p ?? null
    } finally {
      db.close()
    }
  } catch {
    return null
  }
}

/**
 * Runs `ocelog <args>` (a projector: `project --once` or `project --rebuild`) on `dataDir`, logging
 * its checkpoint against `head` every 5 s, and reads its closing line (records, seconds).
 * @throws when it exits non-zero or prints no closing line.
 */
function runProjector(args: readonly string[], dataDir: string, head: number, label: string): Promise<ProjectorRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const cpu0 = exitedChildrenCpuSeconds()
    const child = spawn(process.execPath, ['--max-old-space-size=1024', CLI, ...args], {
      env: embeddedEnv(dataDir, { LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const progress = setInterval(() => {
      const at = checkpointOf(dataDir) ?? 0
      const seconds = (performance.now() - t0) / 1000
      log(`${label}: at position ${num(at)} of ${num(head)} (${pct(at, head)}), ${num(at / seconds)} records/s so far`)
    }, 5000)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearInterval(progress)
      const wallSeconds = (performance.now() - t0) / 1000
      if (code !== 0) {
        reject(new Error(`ocelog ${args.join(' ')} exited ${String(code)}: ${err.trim() || out.trim().slice(-2000)}`))
        return
      }
      const line = out
        .split('\n')
        .map((l) => {
          try {
            return JSON.parse(l) as { records?: number; seconds?: number }
          } catch {
            return {}
          }
        })
        .find((l) => typeof l.records === 'number' && typeof l.seconds === 'number')
      if (line?.records === undefined || line.seconds === undefined) {
        reject(new Error(`ocelog ${args.join(' ')} printed no closing line: ${out.slice(-2000)}`))
        return
      }
      const cpuSeconds = exitedChildrenCpuSeconds() - cpu0
      resolve({
        records: line.records,
        seconds: line.seconds,
        recordsPerSec: line.records / line.seconds,
        wallSeconds,
        cpuSeconds,
        cpuMicrosPerRecord: line.records === 0 ? 0 : (cpuSeconds * 1e6) / line.records,
      })
    })
  })
}

/** Bytes of an SQLite file with its WAL and shared-memory index. */
function fileBytes(path: string): number {
  let bytes = 0
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) bytes += statSync(f).size
  return bytes
}

export interface MapTiming {
  label: string
  params: ProcessMapParams
  runs: number
  runMs: number[]
  medianMs: number
  /** CPU time of each run in this process (user + system, ms), and their median. */
  cpuMs: number[]
  medianCpuMs: number
  /** Edges and activities in the answer (all object types summed): the map's size. */
  edges: number
  activities: number
}

async function timeMap(reader: ProcessReader, label: string, params: ProcessMapParams, runs: number): Promise<MapTiming> {
  const t0 = performance.now()
  const warm = await reader.processMap(SCALE_DATASET, params)
  log(`map ${label}: warm-up ${(performance.now() - t0).toFixed(0)} ms`)
  const runMs: number[] = []
  const cpuMs: number[] = []
  for (let i = 1; i <= runs; i++) {
    const t = performance.now()
    const cpu = process.cpuUsage()
    await reader.processMap(SCALE_DATASET, params)
    const used = process.cpuUsage(cpu)
    runMs.push(performance.now() - t)
    cpuMs.push((used.user + used.system) / 1000)
    log(
      `map ${label}: run ${String(i)} of ${String(runs)}: ${(runMs[runMs.length - 1] ?? 0).toFixed(0)} ms (CPU ${(cpuMs[cpuMs.length - 1] ?? 0).toFixed(0)} ms)`,
    )
  }
  const edges = warm.object_types.reduce((n, t) => n + t.edges.length, 0)
  const activities = warm.object_types.reduce((n, t) => n + t.activities.length, 0)
  return { label, params, runs, runMs, medianMs: median(runMs), cpuMs, medianCpuMs: median(cpuMs), edges, activities }
}

export interface ScaleMeasurements {
  generate: GenerateOptions
  load: LoadResult
  head: number
  catchUp: ProjectorRun
  maps: { all: MapTiming; oneType: MapTiming; window: MapTiming & { events: number } }
  rebuilds: ProjectorRun[]
  rebuild: { recordsPerSec: number; runsPerSec: number[] }
  bytes: { log: number; readModels: number; logPerEvent: number; readModelsPerEvent: number }
}

async function measure(o: Options, dataDir: string): Promise<ScaleMeasurements> {
  const generate: GenerateOptions = { events: o.events, seed: o.seed }
  // Read models with their query indexes, as a running service has them: the projector at the
  // head of the empty log makes them (otherwise the catch-up would be a bulk load, as a rebuild is).
  await runProjector(['project', '--once'], dataDir, 0, 'read models')
  log('read models: made, with their query indexes (ocelog project --once on the empty log)')

  const db = openDatabase(dataDir)
  const eventLog = new SqliteEventLog(db)
  let load: LoadResult
  let lastReport = performance.now()
  try {
    log(`load: ${num(o.events)} generated events (seed ${String(o.seed)}) through the SQLite log port, ${num(o.chunk)} items per append`)
    load = await loadGenerated(eventLog, SCALE_DATASET, generateItems(generate), {
      chunkItems: o.chunk,
      onProgress: (events, records) => {
        if (performance.now() - lastReport < 5000) return
        lastReport = performance.now()
        log(`load: ${num(events)} of ${num(o.events)} events (${pct(events, o.events)}), ${num(records)} records`)
      },
    })
  } finally {
    await eventLog.close()
    db.close()
  }
  const head = load.records
  log(
    `load: ${num(load.events)} events and ${num(load.objectUpserts)} object upserts = ${num(load.records)} records in ${load.seconds.toFixed(1)} s = ${num(load.recordsPerSec)} records/s`,
  )

  log('catch-up: ocelog project --once')
  const catchUp = await runProjector(['project', '--once'], dataDir, head, 'catch-up')
  log(
    `catch-up: ${num(catchUp.records)} records in ${catchUp.seconds.toFixed(1)} s = ${num(catchUp.recordsPerSec)} records/s ` +
      `(process: ${catchUp.wallSeconds.toFixed(1)} s, CPU ${catchUp.cpuSeconds.toFixed(1)} s = ${num(catchUp.cpuMicrosPerRecord)} µs per record)`,
  )

  // About 100,000 events whatever the dataset's size (10% of a smaller one): a window's cost follows the window.
  const share = Math.min(0.1, WINDOW_EVENTS / o.events)
  log(`window: reading the generated log twice for a window of about ${num(Math.round(share * o.events))} events`)
  const window = generatedWindow(generate, 0.45, share)
  log(`window: ${window.from} to ${window.to} holds ${num(window.events)} events`)

  const rmDb = openReadModelsDatabase(dataDir).db
  const mapDb = openDatabase(dataDir)
  const mapLog = new SqliteEventLog(mapDb)
  let maps: ScaleMeasurements['maps']
  try {
    const reader = new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log: mapLog })
    const summary = await reader.summary(SCALE_DATASET)
    log(`read models: ${num(summary.events)} events, ${num(summary.objects)} objects, ${num(summary.e2o)} E2O, ${String(summary.object_types)} object types`)
    if (summary.events !== load.events) throw new Error(`the read models hold ${String(summary.events)} events, the log ${String(load.events)}`)
    const all = await timeMap(reader, 'all object types, all time', {}, o.mapRuns)
    const oneType = await timeMap(reader, 'object_type=order, all time', { object_type: 'order' }, o.mapRuns)
    const windowed = await timeMap(reader, `window of ${num(window.events)} events`, { from: window.from, to: window.to }, o.mapRuns)
    maps = { all, oneType, window: { ...windowed, events: window.events } }
  } finally {
    await mapLog.close()
    mapDb.close()
    rmDb.close()
  }

  const logBytes = fileBytes(join(dataDir, 'ocelog.db'))
  const rmBytes = fileBytes(join(dataDir, 'read-models.db'))
  const bytes = { log: logBytes, readModels: rmBytes, logPerEvent: logBytes / load.events, readModelsPerEvent: rmBytes / load.events }
  log(
    `files: ocelog.db ${num(logBytes / 2 ** 20)} MiB (${num(bytes.logPerEvent)} B/event), read-models.db ${num(rmBytes / 2 ** 20)} MiB (${num(bytes.readModelsPerEvent)} B/event)`,
  )

  const rebuilds: ProjectorRun[] = []
  for (let i = 1; i <= o.rebuildRuns; i++) {
    log(`rebuild ${String(i)} of ${String(o.rebuildRuns)}: ocelog project --rebuild`)
    const run = await runProjector(['project', '--rebuild'], dataDir, head, `rebuild ${String(i)}`)
    rebuilds.push(run)
    log(
      `rebuild ${String(i)}: ${num(run.records)} records in ${run.seconds.toFixed(1)} s = ${num(run.recordsPerSec)} records/s ` +
        `(CPU ${run.cpuSeconds.toFixed(1)} s = ${num(run.cpuMicrosPerRecord)} µs per record)`,
    )
  }
  const runsPerSec = rebuilds.map((r) => r.recordsPerSec)
  return { generate, load, head, catchUp, maps, rebuilds, rebuild: { recordsPerSec: median(runsPerSec), runsPerSec }, bytes }
}

function summarise(m: ScaleMeasurements): { rows: Row[]; targets: TargetCheck[] } {
  const rows: Row[] = []
  const targets: TargetCheck[] = []
  const add = (figure: string, value: string, baseline: string, r: string, target: string, c?: TargetCheck) => {
    if (c !== undefined) targets.push(c)
    rows.push({ figure, value, baseline, ratio: r, target, mark: c === undefined ? '' : markOf(c) })
  }
  const l = m.load
  add(
    `load through the SQLite log port (${num(l.events)} events + ${num(l.objectUpserts)} object upserts, generated): records/s`,
    num(l.recordsPerSec),
    '',
    '',
    '(baseline of the rates below)',
  )
  add(
    `projector catch-up after the load (ocelog project --once, ${num(m.catchUp.records)} records): records/s`,
    num(m.catchUp.recordsPerSec),
    `${num(l.recordsPerSec)} (load)`,
    ratio(m.catchUp.recordsPerSec, l.recordsPerSec),
    '≥ 30,000',
    check('catch-up ≥ 30,000 records/s', m.catchUp.recordsPerSec, 'min', 30_000, 'records/s'),
  )
  add(`projector catch-up: CPU per record (the process, its start included)`, `${num(m.catchUp.cpuMicrosPerRecord)} µs`, '', '', '')
  if (m.rebuilds.length > 0) {
    add(
      `full rebuild (ocelog project --rebuild): records/s, median of ${String(m.rebuilds.length)} (${m.rebuild.runsPerSec.map(num).join(', ')})`,
      num(m.rebuild.recordsPerSec),
      `${num(l.recordsPerSec)} (load)`,
      ratio(m.rebuild.recordsPerSec, l.recordsPerSec),
      '≥ 0.40× (b) of npm run bench',
    )
  }
  const spread = (t: MapTiming) => `median of ${String(t.runs)} (${num(Math.min(...t.runMs))}–${num(Math.max(...t.runMs))} ms; CPU ${num(t.medianCpuMs)} ms)`
  add(
    `process map, all object types, all time (${num(m.maps.all.edges)} edges): ${spread(m.maps.all)}`,
    ms(m.maps.all.medianMs),
    '',
    '',
    '≤ 100 ms',
    check('all-time map ≤ 100 ms', m.maps.all.medianMs, 'max', 100, 'ms'),
  )
  add(`process map, object_type=order, all time: ${spread(m.maps.oneType)}`, ms(m.maps.oneType.medianMs), '', '', '')
  add(
    `process map, window of ${num(m.maps.window.events)} events: ${spread(m.maps.window)}`,
    ms(m.maps.window.medianMs),
    '',
    '',
    '≤ 300 ms',
    check('window map ≤ 300 ms', m.maps.window.medianMs, 'max', 300, 'ms'),
  )
  add('log on disk (ocelog.db, object upserts included): bytes per event', num(m.bytes.logPerEvent), '', '', '')
  add(
    'read models on disk (read-models.db): bytes per event',
    num(m.bytes.readModelsPerEvent),
    `${num(m.bytes.logPerEvent)} (log)`,
    ratio(m.bytes.readModelsPerEvent, m.bytes.logPerEvent),
    '≤ 0.6× the log',
    check('read models ≤ 0.6× the log bytes', m.bytes.readModels / m.bytes.log, 'max', 0.6, '×'),
  )
  return { rows, targets }
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
    .option('--keep', 'keep the data directory (its path is printed)', false)
    .option('--markdown', 'also print the table as Markdown', false)
    .option('--out <dir>', 'folder of the JSON results', join(ROOT, 'bench', 'results'))
    .addHelpText('after', '\nRun `npm run build` first (npm run bench:scale does), then: node dist/bench/scale.js [options]')
  program.parse(process.argv)
  const o = program.opts<Options>()
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`)

  const loadAtStart = loadavg()[0] ?? 0
  // The commit of the code that runs, read before a long run during which HEAD may move.
  const commit = commitOf(ROOT)
  const dataDir = mkdtempSync(join(tmpdir(), 'ocelog-scale-'))
  log(`Ocelog bench at scale: ${num(o.events)} events, seed ${String(o.seed)}, data directory ${dataDir}; load average ${loadAtStart.toFixed(2)}`)
  let m: ScaleMeasurements
  try {
    m = await measure(o, dataDir)
  } finally {
    if (o.keep) log(`data kept in ${dataDir}`)
    else rmSync(dataDir, { recursive: true, force: true })
  }
  const { rows, targets } = summarise(m)
  const name = `${new Date(started).toISOString().slice(0, 10)}-${commit}-scale`
  const file = printAndSave(rows, targets, { loadAtStart, startedMs: started, markdown: o.markdown, out: o.out, name }, { commit, options: o, measurements: m })
  log(`results written to ${file}`)
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale: ${messageOf(error)}\n`)
  process.exit(1)
})
