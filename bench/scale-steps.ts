/**
 * The measuring steps `npm run bench:scale` (docs/bench-scale.md) runs on either storage: the
 * logging, the generated load through a log port, a projector run of the built CLI as its own
 * process, the window of the generated dataset, and the process map's timings through
 * ProcessReader. bench/scale.ts runs them on SQLite, bench/scale-postgres.ts on PostgreSQL.
 */
import { spawn } from 'node:child_process'
import type { EventLog } from '../src/ports/event-log.js'
import type { ProcessMapParams, ProcessReader } from '../src/read/process-reader.js'
import { generatedWindow, generateItems } from './generate.js'
import { type LoadResult, loadGenerated } from './load-generated.js'
import { CLI, exitedChildrenCpuSeconds } from './processes.js'
import { check, median, ms, num, ratio, type Table, type TargetCheck } from './report.js'

/** The options of `bench:scale` (its --help). */
export interface ScaleOptions {
  events: number
  seed: number
  mapRuns: number
  rebuildRuns: number
  chunk: number
  keep: boolean
  markdown: boolean
  postgres: boolean
  out: string
}

/** The dataset's id in the log. */
export const SCALE_DATASET = 'scale'

/** When the bench started (ms since the epoch): the clock of `log` and the date of the result file. */
export const STARTED = Date.now()

/** Prints `[mm:ss] line`, the time since the bench started. */
export function log(line: string): void {
  const s = Math.floor((Date.now() - STARTED) / 1000)
  process.stdout.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`)
}

/** The events a window map reads (about; 10% of a dataset smaller than 1,000,000 events). */
const WINDOW_EVENTS = 100_000

/** `part` as a whole percentage of `whole`, e.g. `45%`. */
export const pct = (part: number, whole: number): string => `${whole === 0 ? '0' : ((100 * part) / whole).toFixed(0)}%`

/**
 * Appends the generated dataset of `o` (bench/generate.ts) to `eventLog` in chunks of `o.chunk`
 * items (bench/load-generated.ts), logging the progress every 5 s; `port` names the log port in the log lines.
 */
export async function loadScaleDataset(eventLog: EventLog, o: ScaleOptions, port: string): Promise<LoadResult> {
  let lastReport = performance.now()
  log(`load: ${num(o.events)} generated events (seed ${String(o.seed)}) through ${port}, ${num(o.chunk)} items per append`)
  const load = await loadGenerated(eventLog, SCALE_DATASET, generateItems({ events: o.events, seed: o.seed }), {
    chunkItems: o.chunk,
    onProgress: (events, records) => {
      if (performance.now() - lastReport < 5000) return
      lastReport = performance.now()
      log(`load: ${num(events)} of ${num(o.events)} events (${pct(events, o.events)}), ${num(records)} records`)
    },
  })
  log(
    `load: ${num(load.events)} events and ${num(load.objectUpserts)} object upserts = ${num(load.records)} records in ${load.seconds.toFixed(1)} s = ${num(load.recordsPerSec)} records/s`,
  )
  return load
}

/** A closing line of `ocelog project` (LOG_LEVEL=info): a runner's, or with `runners` the whole run's. */
interface ClosingLine {
  records?: number
  seconds?: number
  runners?: number
}

/**
 * The closing line that tells when every read model was caught up: the whole run's line when the
 * runners ran side by side (src/cli/commands/project.ts, logSideBySide: it follows one line per
 * runner, and each runner's line tells only when that runner ended), else the slowest line.
 */
export function closingLine(out: string): { records: number; seconds: number } | undefined {
  const lines: { records: number; seconds: number; runners?: number }[] = []
  for (const l of out.split('\n')) {
    if (!l.startsWith('{')) continue
    try {
      const parsed = JSON.parse(l) as ClosingLine
      if (typeof parsed.records === 'number' && typeof parsed.seconds === 'number') lines.push({ ...parsed, records: parsed.records, seconds: parsed.seconds })
    } catch {
      // Not a log line.
    }
  }
  const whole = lines.find((l) => typeof l.runners === 'number')
  if (whole !== undefined) return whole
  return lines.reduce<{ records: number; seconds: number } | undefined>(
    (slowest, l) => (slowest === undefined || l.seconds > slowest.seconds ? l : slowest),
    undefined,
  )
}

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

/** How a projector process is started, and how its progress is read. */
export interface ProjectorSpawn {
  /** Node flags before the CLI's path, e.g. `--max-old-space-size=1024`. */
  nodeFlags: readonly string[]
  env: NodeJS.ProcessEnv
  /** The read models' checkpoint (a log position), or null before the first apply. */
  checkpoint: () => Promise<number | null>
}

/**
 * Runs `ocelog <args>` (a projector: `project --once` or `project --rebuild`) as its own process,
 * logging its checkpoint against `head` every 5 s, and reads its closing line (records, seconds;
 * the CLI prints it at LOG_LEVEL=info, which `s.env` must set).
 * @throws when it exits non-zero or prints no closing line.
 */
export function runProjector(args: readonly string[], s: ProjectorSpawn, head: number, label: string): Promise<ProjectorRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const cpu0 = exitedChildrenCpuSeconds()
    const child = spawn(process.execPath, [...s.nodeFlags, CLI, ...args], { env: s.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const progress = setInterval(() => {
      void s.checkpoint().then(
        (at) => {
          const seconds = (performance.now() - t0) / 1000
          log(`${label}: at position ${num(at ?? 0)} of ${num(head)} (${pct(at ?? 0, head)}), ${num((at ?? 0) / seconds)} records/s so far`)
        },
        () => {},
      )
    }, 5000)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearInterval(progress)
      const wallSeconds = (performance.now() - t0) / 1000
      if (code !== 0) {
        reject(new Error(`ocelog ${args.join(' ')} exited ${String(code)}: ${err.trim() || out.trim().slice(-2000)}`))
        return
      }
      const line = closingLine(out)
      if (line === undefined) {
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

/** Runs `ocelog <args>` as runProjector does and logs its rate and CPU per record. */
export async function loggedProjectorRun(args: readonly string[], s: ProjectorSpawn, head: number, label: string): Promise<ProjectorRun> {
  log(`${label}: ocelog ${args.join(' ')}`)
  const run = await runProjector(args, s, head, label)
  log(
    `${label}: ${num(run.records)} records in ${run.seconds.toFixed(1)} s = ${num(run.recordsPerSec)} records/s ` +
      `(process: ${run.wallSeconds.toFixed(1)} s, CPU ${run.cpuSeconds.toFixed(1)} s = ${num(run.cpuMicrosPerRecord)} µs per record)`,
  )
  return run
}

/** `runs` full rebuilds (`ocelog <args>`), and the median of their rates. */
export async function timeRebuilds(
  args: readonly string[],
  s: ProjectorSpawn,
  head: number,
  runs: number,
): Promise<{ rebuilds: ProjectorRun[]; rebuild: { recordsPerSec: number; runsPerSec: number[] } }> {
  const rebuilds: ProjectorRun[] = []
  for (let i = 1; i <= runs; i++) rebuilds.push(await loggedProjectorRun(args, s, head, `rebuild ${String(i)} of ${String(runs)}`))
  const runsPerSec = rebuilds.map((r) => r.recordsPerSec)
  return { rebuilds, rebuild: { recordsPerSec: median(runsPerSec), runsPerSec } }
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

/** The three maps of the bench (docs/bench-scale.md#what-is-measured). */
export interface ScaleMaps {
  all: MapTiming
  oneType: MapTiming
  window: MapTiming & { events: number }
}

/**
 * The window of about 100,000 events of the generated dataset of `o` (10% of a smaller one),
 * starting at its 45th percentile of arrivals: a window's cost follows the window, not the dataset.
 */
export function scaleWindow(o: ScaleOptions): ReturnType<typeof generatedWindow> {
  const share = Math.min(0.1, WINDOW_EVENTS / o.events)
  log(`window: reading the generated log twice for a window of about ${num(Math.round(share * o.events))} events`)
  const window = generatedWindow({ events: o.events, seed: o.seed }, 0.45, share)
  log(`window: ${window.from} to ${window.to} holds ${num(window.events)} events`)
  return window
}

/**
 * Checks that the read models behind `reader` hold the `events` loaded, then times the process map
 * as `GET /v1/process/map` answers it without HTTP: all object types over all time, object_type=order,
 * and `window`; each the median of `runs` runs after one warm-up run.
 * @throws when the read models hold another number of events than the log.
 */
export async function timeMaps(reader: ProcessReader, events: number, window: ReturnType<typeof generatedWindow>, runs: number): Promise<ScaleMaps> {
  const summary = await reader.summary(SCALE_DATASET)
  log(`read models: ${num(summary.events)} events, ${num(summary.objects)} objects, ${num(summary.e2o)} E2O, ${String(summary.object_types)} object types`)
  if (summary.events !== events) throw new Error(`the read models hold ${String(summary.events)} events, the log ${String(events)}`)
  const all = await timeMap(reader, 'all object types, all time', {}, runs)
  const oneType = await timeMap(reader, 'object_type=order, all time', { object_type: 'order' }, runs)
  const windowed = await timeMap(reader, `window of ${num(window.events)} events`, { from: window.from, to: window.to }, runs)
  return { all, oneType, window: { ...windowed, events: window.events } }
}

/** `median of N (min–max ms; CPU c ms)` of a map's runs, for a table row. */
const spread = (t: MapTiming): string =>
  `median of ${String(t.runs)} (${num(Math.min(...t.runMs))}–${num(Math.max(...t.runMs))} ms; CPU ${num(t.medianCpuMs)} ms)`

/** Bytes per event of the log and of the read models. */
export interface BytesPerEvent {
  logPerEvent: number
  readModelsPerEvent: number
}

/** What both storages measure: the load, the catch-up, the rebuilds, the maps and the bytes (`Bytes`: the storage's own detail). */
export interface ScaleRun<Bytes extends BytesPerEvent = BytesPerEvent> {
  load: LoadResult
  catchUp: ProjectorRun
  rebuilds: ProjectorRun[]
  rebuild: { recordsPerSec: number; runsPerSec: number[] }
  maps: ScaleMaps
  bytes: Bytes
}

/** How the rows of one storage read (scaleRows). */
export interface ScaleRowsText {
  /** The log port the load went through, e.g. `the SQLite log port`. */
  port: string
  /** After "catch-up after the load", "full rebuild" and "process map": '' on SQLite, ` on PostgreSQL`. */
  on: string
  catchUpTarget: string
  catchUpCheck?: TargetCheck
  rebuildArgs: string
  rebuildTarget: string
  /** The name of the all-time map's check (≤ 100 ms) and of the window map's (≤ 300 ms). */
  allMapCheck: string
  windowMapCheck: string
  /** What the two byte rows weigh, e.g. `log on disk (ocelog.db, …)`, and the read models' target. */
  logBytes: string
  readModelBytes: string
  readModelBytesTarget: string
  readModelBytesCheck?: TargetCheck
}

/**
 * Adds the rows both storages share to `t` (docs/bench-scale.md#what-is-measured): the load's
 * rate, the catch-up's rate and CPU per record, the rebuilds' median rate, and the three maps'
 * medians with their targets (all-time ≤ 100 ms, window ≤ 300 ms), and the bytes per event of
 * the log and of the read models.
 */
export function scaleRows(t: Table, m: ScaleRun, s: ScaleRowsText): void {
  const l = m.load
  t.add(
    `load through ${s.port} (${num(l.events)} events + ${num(l.objectUpserts)} object upserts, generated): records/s`,
    num(l.recordsPerSec),
    '',
    '',
    '(baseline of the rates below)',
  )
  t.add(
    `projector catch-up after the load${s.on} (ocelog project --once, ${num(m.catchUp.records)} records): records/s`,
    num(m.catchUp.recordsPerSec),
    `${num(l.recordsPerSec)} (load)`,
    ratio(m.catchUp.recordsPerSec, l.recordsPerSec),
    s.catchUpTarget,
    s.catchUpCheck,
  )
  t.add(`projector catch-up: CPU per record (the process, its start included)`, `${num(m.catchUp.cpuMicrosPerRecord)} µs`)
  if (m.rebuilds.length > 0) {
    t.add(
      `full rebuild${s.on} (ocelog ${s.rebuildArgs}): records/s, median of ${String(m.rebuilds.length)} (${m.rebuild.runsPerSec.map(num).join(', ')})`,
      num(m.rebuild.recordsPerSec),
      `${num(l.recordsPerSec)} (load)`,
      ratio(m.rebuild.recordsPerSec, l.recordsPerSec),
      s.rebuildTarget,
    )
  }
  const { all, oneType, window } = m.maps
  t.add(
    `process map${s.on}, all object types, all time (${num(all.edges)} edges): ${spread(all)}`,
    ms(all.medianMs),
    '',
    '',
    '≤ 100 ms',
    check(s.allMapCheck, all.medianMs, 'max', 100, 'ms'),
  )
  t.add(`process map${s.on}, object_type=order, all time: ${spread(oneType)}`, ms(oneType.medianMs))
  t.add(
    `process map${s.on}, window of ${num(window.events)} events: ${spread(window)}`,
    ms(window.medianMs),
    '',
    '',
    '≤ 300 ms',
    check(s.windowMapCheck, window.medianMs, 'max', 300, 'ms'),
  )
  const b = m.bytes
  t.add(`${s.logBytes}: bytes per event`, num(b.logPerEvent))
  t.add(
    `${s.readModelBytes}: bytes per event`,
    num(b.readModelsPerEvent),
    `${num(b.logPerEvent)} (log)`,
    ratio(b.readModelsPerEvent, b.logPerEvent),
    s.readModelBytesTarget,
    s.readModelBytesCheck,
  )
}

/** What one storage gives runScaleSteps. */
export interface ScaleStorage<Bytes> {
  /** The log port the load goes through, for the log lines, e.g. `the SQLite log port`. */
  port: string
  projector: ProjectorSpawn
  /** `ocelog` arguments of a rebuild. */
  rebuildArgs: readonly string[]
  /** Runs `fn` with the log port open, and closes it. */
  withLog<T>(fn: (eventLog: EventLog) => Promise<T>): Promise<T>
  /** Runs `fn` with a ProcessReader over the storage's read-model query adapter, and closes it. */
  withReader<T>(fn: (reader: ProcessReader) => Promise<T>): Promise<T>
  /** Weighs the log and the read models after the maps, for `events` events. */
  weigh(events: number): Promise<Bytes>
}

/**
 * The steps of docs/bench-scale.md#what-is-measured on one storage, after its read models are made:
 * the load, the catch-up (`ocelog project --once`), the three maps, the weighing, and
 * `o.rebuildRuns` rebuilds.
 */
export async function runScaleSteps<Bytes extends BytesPerEvent>(
  o: ScaleOptions,
  s: ScaleStorage<Bytes>,
): Promise<ScaleRun<Bytes> & { generate: { events: number; seed: number }; head: number }> {
  const load = await s.withLog((eventLog) => loadScaleDataset(eventLog, o, s.port))
  const head = load.records
  const catchUp = await loggedProjectorRun(['project', '--once'], s.projector, head, 'catch-up')
  const window = scaleWindow(o)
  const maps = await s.withReader((reader) => timeMaps(reader, load.events, window, o.mapRuns))
  const bytes = await s.weigh(load.events)
  const rebuilt = await timeRebuilds(s.rebuildArgs, s.projector, head, o.rebuildRuns)
  return { generate: { events: o.events, seed: o.seed }, load, head, catchUp, maps, ...rebuilt, bytes }
}
