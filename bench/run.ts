/**
 * `npm run bench` (docs/performance.md#method): measures ingest, projection and rebuild of the built service on the
 * embedded default against raw baselines measured in the same run, and prints one table with
 * every ratio and the targets (also saved as JSON as bench/results/<date>-<commit>.json; docs/performance.md).
 *
 * Processes: this orchestrator; the service (`ocelog serve`, fresh OCELOG_DATA_DIR, rate limits
 * out of the way); the bare-Fastify baseline (bench/baseline-server.ts); and the load worker
 * (bench/load-worker.ts, autocannon) — so the load generator never shares an event loop with the
 * orchestrator's projection polling. Baseline (b), raw SQLite appends, runs here once the
 * servers are stopped. The freshness scenario has no baseline: each of its paced batch loads runs on
 * a fresh service while the read models' lag in seconds is sampled (docs/performance.md, Method).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command, InvalidArgumentError, Option } from 'commander'
import { DEFAULT_FRESHNESS_LOADS, DEFAULT_FRESHNESS_SPEC, type FreshnessLoad, parseFreshnessLoads } from './freshness-loads.js'
import { positiveInt, wholeInt } from './int-options.js'
import { SCENARIOS, SCENARIO_SHAPES, type Scenario, TYPICAL_FEED_FIRST_CYCLE } from './bodies.js'
import { nearestRank } from './paced-load.js'
import type { LoadJob, LoadResult } from './load-protocol.js'
import { LoadWorker } from './load-client.js'
import {
  CLI,
  ROOT,
  cpuSecondsOf,
  createKey,
  embeddedEnv,
  rssOf,
  runCli,
  startBaseline,
  startProjector,
  startService,
  stopProcess,
  type Running,
} from './processes.js'
import { exportRows, type ExportMeasurement, measureExports } from './export-dataset.js'
import { importRows, measureLargeImport, measureRepeatedImport, type LargeImportResult } from './large-import.js'
import { measureProcessMap, processMapRows, type ProcessMapResult } from './process-map.js'
import { ProjectionWatch, type CatchUp } from './projection-watch.js'
import { check, freeResultName, ms, num, printAndSave, ratio, Table } from './report.js'
import { rawAppendBaseline, type RawAppendResult } from './sqlite-baseline.js'
import { messageOf } from '../src/core/errors.js'

/**
 * The scenarios `--scenarios` selects: the load scenarios of bench/bodies.ts, and `freshness`, paced
 * batch loads, each on a service of its own, while the read models' lag in seconds is sampled.
 */
const BENCH_SCENARIOS = [...SCENARIOS, 'freshness'] as const
type BenchScenario = (typeof BENCH_SCENARIOS)[number]

/** The freshness row's bound: the read models at most this many seconds behind the log… */
const FRESH_SECONDS = 2
/** …in at least this share of the samples. */
const FRESH_SHARE = 0.99
/** How often the read models' lag is sampled during a load, ms. */
const LAG_SAMPLE_MS = 250

interface Options {
  duration: number
  worstDuration: number
  warmup: number
  connections: number
  catchupTimeout: number
  worstCatchupTimeout: number
  scenarios: BenchScenario[]
  /** The freshness scenario's paced loads, in order: the first is graded against the target, the others are reported. */
  freshness: FreshnessLoad[]
  cpuProf?: string
  keep: boolean
  split: boolean
  markdown: boolean
  out: string
  /** Measure the process map row (`--no-process-map` leaves it out). */
  processMap: boolean
  mapRuns: number
  importRuns: number
  /** Events of the generated dataset of the export rows; 0 leaves them out. */
  exportEvents: number
  /** Orders of the large-import row's generated log (0: no row). */
  largeImport: number
  /** Copies of the running example in the repeated-import row's log (0: no row). */
  repeatImport: number
}

const SEEDS: Record<Scenario, number> = { single: 1, batch: 2, objects: 3, worst: 4 }
const FRESHNESS_SEED = 5

const started = Date.now()
function log(line: string): void {
  const s = Math.floor((Date.now() - started) / 1000)
  process.stdout.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`)
}

/** What one service scenario measured besides the load itself. */
/** CPU (µs) the process used per item accepted during a job, warm-up included; for the service, until its read models caught up. */
function cpuPerItem(cpuSeconds: number, load: LoadResult, scenario: Scenario): number {
  const items = load.setupItems + load.requests2xx * SCENARIO_SHAPES[scenario].itemsPerRequest
  return items > 0 ? (cpuSeconds * 1e6) / items : 0
}

interface BaselineRun {
  load: LoadResult
  cpuUsPerItem: number
}

async function baselineRun(worker: LoadWorker, baseline: Running, j: LoadJob): Promise<BaselineRun> {
  const cpu = cpuSecondsOf(baseline.pid)
  const load = await worker.run(j)
  const shape = SCENARIO_SHAPES[j.scenario]
  const cpuUsPerItem = cpuPerItem(cpuSecondsOf(baseline.pid) - cpu, load, j.scenario)
  log(`${describeLoad(j.label, load, shape.item, shape.itemsPerRequest)}; ${num(cpuUsPerItem)} µs CPU per ${shape.item}`)
  return { load, cpuUsPerItem }
}

interface ServiceRun {
  load: LoadResult
  /** CPU of the service per item, from the start of the job until the read models caught up (µs). */
  cpuUsPerItem: number
  /**
   * CPU of the API process's main thread (its event loop: HTTP, validation, the log's appends) per
   * item, over the load alone (µs): the part of cpuUsPerItem that bounds the request rate.
   */
  apiThreadCpuUsPerItem: number
  /** Largest backlog of the read models seen while the load ran (records). */
  maxBehindDuringLoad: number
  /** The read models' lag in seconds, sampled every LAG_SAMPLE_MS while the load ran. */
  lagSeconds: LagSummary
  catchUp: CatchUp
}

/** Samples of the read models' lag in seconds (ProjectionWatch.lagSeconds), summarised. */
interface LagSummary {
  samples: number
  /** Nearest-rank p99 of the samples, s (0 without samples). */
  p99: number
  max: number
  /** Share (0..1) of the samples at most FRESH_SECONDS behind; null without samples. */
  shareWithin: number | null
}

function lagSummary(samples: number[]): LagSummary {
  const sorted = [...samples].sort((a, b) => a - b)
  const within = sorted.filter((s) => s <= FRESH_SECONDS).length
  return {
    samples: sorted.length,
    p99: nearestRank(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? 0,
    shareWithin: sorted.length === 0 ? null : within / sorted.length,
  }
}

/** One run of the freshness scenario: a paced batch load at `rate` events/s for `durationSec` s on a fresh service. */
interface FreshnessRun extends ServiceRun {
  /** Events/s asked. */
  rate: number
  /** Seconds of the load. */
  durationSec: number
  /** Requests/s asked: rate ÷ events per batch body. */
  requestRate: number
  /** Events accepted ÷ the seconds from the start of the load until its last answer. */
  achievedEventsPerSec: number
}

interface Measurements {
  baseline: Partial<Record<Scenario, BaselineRun>>
  service: Partial<Record<Scenario, ServiceRun>>
  halfRate: (ServiceRun & { rate: number }) | null
  halfRateBaseline: (BaselineRun & { rate: number }) | null
  /** The freshness runs in the order of `--freshness` (empty when the scenario did not run). */
  freshness: FreshnessRun[]
  rss: { typical: number | null; worst: number | null }
  rebuild: { records: number; seconds: number; recordsPerSec: number } | null
  rawAppend: RawAppendResult | null
  processMap: ProcessMapResult | null
  exports: ExportMeasurement | null
  largeImport: LargeImportResult | null
  repeatedImport: LargeImportResult | null
}

function describeLoad(label: string, r: LoadResult, item: string, perRequest: number): string {
  const rate = perRequest === 1 ? `${num(r.requestsPerSec)} req/s` : `${num(r.itemsPerSec)} ${item}s/s (${num(r.requestsPerSec)} req/s)`
  const bad = r.non2xx + r.errors > 0 ? `, ${String(r.non2xx)} non-2xx, ${String(r.errors)} errors` : ''
  return `${label}: ${rate}, p50 ${ms(r.latencyP50)}, p99 ${ms(r.latencyP99)}${bad}`
}

function job(label: string, baseUrl: string, scenario: Scenario, token: string, o: Options, extra: Partial<LoadJob> = {}): LoadJob {
  return {
    label,
    baseUrl,
    scenario,
    token,
    connections: o.connections,
    durationSec: scenario === 'worst' ? o.worstDuration : o.duration,
    warmupSec: o.warmup,
    seed: SEEDS[scenario],
    tag: `${label.replace(/[^a-z]+/g, '-')}${Date.now().toString(36)}`,
    ...extra,
  }
}

/** The service under test: `ocelog serve`, plus `ocelog project` in the split layout. */
interface Service {
  url: string
  /** Every process of the service (CPU and RSS are summed over them). */
  pids: number[]
  /** The API process (`ocelog serve`): its main thread, tid = pid, runs the HTTP event loop. */
  apiPid: number
  stop(): Promise<void>
}

const cpuOfService = (service: Service) => service.pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0)
/** Sum of the processes' peaks: an upper bound of their joint peak. */
const peakRssOf = (service: Service) => service.pids.reduce((sum, pid) => sum + rssOf(pid).peak, 0)

/** Runs one scenario against the service while watching the projection, then waits for the catch-up. */
async function serviceRun(worker: LoadWorker, service: Service, dataDir: string, j: LoadJob, o: Options): Promise<ServiceRun> {
  const watch = new ProjectionWatch(dataDir)
  try {
    let maxBehind = 0
    const lags: number[] = []
    const sample = setInterval(() => {
      maxBehind = Math.max(maxBehind, watch.lag().behind)
      lags.push(watch.lagSeconds())
    }, LAG_SAMPLE_MS)
    const cpu = cpuOfService(service)
    const apiCpu = cpuSecondsOf(service.apiPid, service.apiPid)
    let load: LoadResult
    try {
      load = await worker.run(j)
    } finally {
      clearInterval(sample)
    }
    const apiThreadCpuUsPerItem = cpuPerItem(cpuSecondsOf(service.apiPid, service.apiPid) - apiCpu, load, j.scenario)
    const catchUp = await watch.waitCaughtUp(load.endedAt, load.endedAt + load.latencyP99, o.catchupTimeout)
    maxBehind = Math.max(maxBehind, catchUp.behindAtEnd)
    const cpuUsPerItem = cpuPerItem(cpuOfService(service) - cpu, load, j.scenario)
    const shape = SCENARIO_SHAPES[j.scenario]
    log(
      `${describeLoad(j.label, load, shape.item, shape.itemsPerRequest)}; ${num(cpuUsPerItem)} µs CPU per ${shape.item} (ingest and projection; ` +
        `the API thread ${num(apiThreadCpuUsPerItem)} µs during the load)`,
    )
    log(
      `  projection: ${num(maxBehind)} records behind at most; ` +
        (catchUp.seconds === null
          ? `NOT caught up ${String(o.catchupTimeout)} s after the load (${num(catchUp.behindAfter)} behind, ${num(catchUp.recordsPerSec)} records/s)`
          : `caught up ${num(catchUp.seconds)} s after the load (${num(catchUp.behindAtEnd)} records at ${num(catchUp.recordsPerSec)} records/s)`) +
        `; service RSS peak ${num(peakRssOf(service) / 2 ** 20)} MB`,
    )
    const lagSeconds = lagSummary(lags)
    log(
      `  lag: p99 ${num(lagSeconds.p99)} s, max ${num(lagSeconds.max)} s over ${String(lagSeconds.samples)} samples` +
        (lagSeconds.shareWithin === null ? '' : `, ${pct(lagSeconds.shareWithin)} of them ≤ ${String(FRESH_SECONDS)} s`),
    )
    return { load, cpuUsPerItem, apiThreadCpuUsPerItem, maxBehindDuringLoad: maxBehind, lagSeconds, catchUp }
  } finally {
    watch.close()
  }
}

async function startedService(dataDir: string, o: Options, name: string): Promise<{ service: Service; token: string }> {
  const token = await createKey(dataDir)
  const profile = (process: string): string[] => {
    if (o.cpuProf === undefined) return []
    mkdirSync(o.cpuProf, { recursive: true })
    return ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`, `--cpu-prof-name=${process}-${name}-${String(Date.now())}.cpuprofile`]
  }
  const api = await startService(dataDir, token, profile('service'), o.split ? ['--no-projector'] : [])
  const projector = o.split ? startProjector(dataDir, profile('projector')) : null
  log(
    `service (${name}) up at ${api.url}, pid ${String(api.pid)}` +
      (projector === null ? ' (projector in worker threads, one per runner)' : `, projector pid ${String(projector.pid)}`) +
      `, data in ${dataDir}`,
  )
  const service: Service = {
    url: api.url,
    pids: projector === null ? [api.pid] : [api.pid, projector.pid],
    apiPid: api.pid,
    async stop() {
      await stopProcess(api.child)
      if (projector !== null) await stopProcess(projector.child)
    },
  }
  return { service, token }
}

/**
 * One run of the freshness scenario: a fresh service, an open-loop paced load of `POST /v1/event/batch`
 * at `load.rate` events/s for `load.seconds` s, the read models' lag in seconds sampled every
 * LAG_SAMPLE_MS meanwhile (docs/performance.md, Method).
 */
async function freshnessRun(worker: LoadWorker, dataDir: string, load: FreshnessLoad, o: Options): Promise<FreshnessRun> {
  const perBody = SCENARIO_SHAPES.batch.itemsPerRequest
  const requestRate = load.rate / perBody
  log(
    `freshness: POST /v1/event/batch paced at ${num(load.rate)} events/s (${num(requestRate)} req/s of ${String(perBody)} events), ` +
      `${String(load.seconds)} s, read models' lag sampled every ${String(LAG_SAMPLE_MS)} ms`,
  )
  const { service, token } = await startedService(dataDir, o, 'freshness')
  try {
    const startedAt = Date.now()
    const j = job('freshness @ service', service.url, 'batch', token, o, {
      pacedRate: requestRate,
      durationSec: load.seconds,
      warmupSec: 0,
      seed: FRESHNESS_SEED,
    })
    const run = await serviceRun(worker, service, dataDir, j, o)
    const seconds = (run.load.endedAt - startedAt) / 1000
    const achievedEventsPerSec = seconds > 0 ? (run.load.requests2xx * perBody) / seconds : 0
    log(`  freshness: ${num(achievedEventsPerSec)} events/s accepted over ${num(seconds)} s from the start of the load to its last answer`)
    return { ...run, rate: load.rate, durationSec: load.seconds, requestRate, achievedEventsPerSec }
  } finally {
    await service.stop()
  }
}

/**
 * The rows measured on files and the CLI, each in a folder of `tmp` removed after it: the process
 * map (with imports of the running example), the exports, the large and the repeated import.
 */
async function measureFileRows(m: Measurements, o: Options, tmp: string): Promise<void> {
  if (o.processMap) m.processMap = await measureProcessMap(join(tmp, 'process-map'), o.mapRuns, o.importRuns, log)
  if (o.exportEvents > 0) {
    m.exports = await measureExports(CLI, join(tmp, 'export'), o.exportEvents, log)
    rmSync(join(tmp, 'export'), { recursive: true, force: true })
  }
  if (o.largeImport > 0) {
    m.largeImport = await measureLargeImport(join(tmp, 'large-import'), o.largeImport, log, o.catchupTimeout)
    rmSync(join(tmp, 'large-import'), { recursive: true, force: true })
  }
  if (o.repeatImport > 0) {
    m.repeatedImport = await measureRepeatedImport(join(tmp, 'repeated-import'), o.repeatImport, log, o.catchupTimeout)
    rmSync(join(tmp, 'repeated-import'), { recursive: true, force: true })
  }
}

/**
 * The typical scenarios (`typical`: single, batch, objects) on one service whose data is in `dirA`,
 * each after the same load on the baseline; after the batch, the batch again at half the peak rate
 * on both. Then the service's peak RSS.
 */
async function typicalRuns(
  m: Measurements,
  o: Options,
  worker: LoadWorker,
  baseline: Running,
  dirA: string,
  typical: readonly ('single' | 'batch' | 'objects')[],
): Promise<void> {
  const { service, token } = await startedService(dirA, o, 'typical')
  try {
    for (const s of typical) {
      const shape = SCENARIO_SHAPES[s]
      log(`${s}: ${shape.path}, ${String(o.connections)} connections, ${String(o.duration)} s each (after ${String(o.warmup)} s warm-up)`)
      const feed = s === 'objects' ? {} : { firstCycle: TYPICAL_FEED_FIRST_CYCLE[s] }
      m.baseline[s] = await baselineRun(worker, baseline, job(`${s} @ baseline`, baseline.url, s, token, o, feed))
      m.service[s] = await serviceRun(worker, service, dirA, job(`${s} @ service`, service.url, s, token, o, feed), o)
      if (s === 'batch') await halfRateRuns(m, o, worker, baseline, service, dirA, token)
    }
    m.rss.typical = peakRssOf(service)
  } finally {
    await service.stop()
  }
}

/** The batch at half the peak rate, the service and the baseline each at half its own peak (when the batch ran on both). */
async function halfRateRuns(m: Measurements, o: Options, worker: LoadWorker, baseline: Running, service: Service, dirA: string, token: string): Promise<void> {
  const peak = m.service.batch?.load.requestsPerSec
  const basePeak = m.baseline.batch?.load.requestsPerSec
  if (peak === undefined || peak <= 0 || basePeak === undefined) return
  // Each at half its own peak: the baseline's p99 there shows what the machine allows.
  const rate = Math.max(1, Math.round(peak / 2))
  const baseRate = Math.max(1, Math.round(basePeak / 2))
  log(`batch at half the peak rate: service ${String(rate)} req/s, baseline ${String(baseRate)} req/s, ${String(o.duration)} s each`)
  const paced = { warmupSec: 0, firstCycle: TYPICAL_FEED_FIRST_CYCLE.halfRate }
  const base = await baselineRun(worker, baseline, job('batch @ baseline, half rate', baseline.url, 'batch', token, o, { ...paced, pacedRate: baseRate }))
  m.halfRateBaseline = { ...base, rate: baseRate }
  const run = await serviceRun(worker, service, dirA, job('batch @ service, half rate', service.url, 'batch', token, o, { ...paced, pacedRate: rate }), o)
  m.halfRate = { ...run, rate }
}

/** The worst case on the baseline, then on a service of its own (data in `tmp`/service-worst), and that service's peak RSS. */
async function worstRuns(m: Measurements, o: Options, worker: LoadWorker, baseline: Running, tmp: string): Promise<void> {
  log(`worst case: batches of 100 events × 50 objects, ${String(o.connections)} connections, ${String(o.worstDuration)} s each`)
  m.baseline.worst = await baselineRun(worker, baseline, job('worst @ baseline', baseline.url, 'worst', '', o))
  const dirB = join(tmp, 'service-worst')
  const { service, token } = await startedService(dirB, o, 'worst')
  try {
    m.service.worst = await serviceRun(worker, service, dirB, job('worst @ service', service.url, 'worst', token, o), {
      ...o,
      catchupTimeout: o.worstCatchupTimeout,
    })
    m.rss.worst = peakRssOf(service)
  } finally {
    await service.stop()
  }
}

/**
 * `ocelog project --rebuild` over the log of the typical scenarios in `dirA` (its summary line read
 * back), then baseline (b): raw appends of the same records into SQLite.
 * @throws Error when the rebuild printed no summary.
 */
async function rebuildRuns(m: Measurements, dirA: string, tmp: string): Promise<void> {
  log('rebuild: `ocelog project --rebuild` over the log of the typical scenarios')
  const out = await runCli(['project', '--rebuild'], embeddedEnv(dirA, { LOG_LEVEL: 'info' }))
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue
    const parsed: unknown = JSON.parse(line)
    if (typeof parsed !== 'object' || parsed === null || !('records' in parsed) || !('seconds' in parsed)) continue
    const { records, seconds } = parsed
    if (typeof records === 'number' && typeof seconds === 'number') m.rebuild = { records, seconds, recordsPerSec: records / seconds }
  }
  if (m.rebuild === null) throw new Error(`project --rebuild printed no summary: ${out}`)
  log(`  rebuilt ${num(m.rebuild.records)} records in ${num(m.rebuild.seconds)} s: ${num(m.rebuild.recordsPerSec)} records/s`)
  log('baseline (b): raw appends of the same records into SQLite (WAL, synchronous=FULL, 100 per transaction)')
  m.rawAppend = rawAppendBaseline(dirA, join(tmp, 'raw-append'))
  log(`  ${num(m.rawAppend.appended)} records in ${num(m.rawAppend.seconds)} s: ${num(m.rawAppend.recordsPerSec)} records/s`)
}

/** Every measurement the options ask for, in this order: the file rows, freshness, the typical scenarios, the worst case, the rebuild. */
async function measure(o: Options, tmp: string): Promise<Measurements> {
  const m: Measurements = {
    baseline: {},
    service: {},
    halfRate: null,
    halfRateBaseline: null,
    freshness: [],
    rss: { typical: null, worst: null },
    rebuild: null,
    rawAppend: null,
    processMap: null,
    exports: null,
    largeImport: null,
    repeatedImport: null,
  }
  const want = (s: BenchScenario) => o.scenarios.includes(s)
  await measureFileRows(m, o, tmp)
  if (o.scenarios.length === 0) return m
  const worker = await LoadWorker.start()
  const dirA = join(tmp, 'service')
  const typical = (['single', 'batch', 'objects'] as const).filter(want)
  // The bare-Fastify baseline runs only for the scenarios compared with it.
  let baseline: Running | null = null
  try {
    if (want('freshness')) {
      for (const [i, load] of o.freshness.entries()) {
        const dir = join(tmp, `service-freshness-${String(i + 1)}`)
        m.freshness.push(await freshnessRun(worker, dir, load, o))
        // Each run's log is hundreds of MB at the default loads: free the disk unless asked to keep it.
        if (!o.keep) rmSync(dir, { recursive: true, force: true })
      }
    }
    if (typical.length > 0 || want('worst')) {
      baseline = await startBaseline()
      log(`baseline (a), bare Fastify + the same schemas and validation, up at ${baseline.url}, pid ${String(baseline.pid)}`)
    }
    if (typical.length > 0 && baseline !== null) await typicalRuns(m, o, worker, baseline, dirA, typical)
    if (want('worst') && baseline !== null) await worstRuns(m, o, worker, baseline, tmp)
  } finally {
    if (baseline !== null) await stopProcess(baseline.child)
    await worker.stop()
  }
  if (typical.length > 0 && existsSync(join(dirA, 'ocelog.db'))) await rebuildRuns(m, dirA, tmp)
  return m
}

/** `a ÷ b`, or null when either is missing or b is 0. */
function ratioOf(a?: number | null, b?: number | null): number | null {
  return a === undefined || a === null || b === undefined || b === null || b === 0 ? null : a / b
}

/** A load's latencies, `p50 / p99`, or — without one. */
function latencies(l?: LoadResult): string {
  return l === undefined ? '—' : `${ms(l.latencyP50)} / ${ms(l.latencyP99)}`
}

/** A scenario's two CPU rows, per item: the whole service (projection included), and the API thread during the load, each against the baseline's whole CPU. */
function cpuRows(t: Table, label: string, run?: ServiceRun, base?: BaselineRun): void {
  if (run === undefined) return
  const item = label.includes('object batch') ? 'object' : 'event'
  t.add(
    `${label}: CPU per ${item} (service incl. projection)`,
    `${num(run.cpuUsPerItem)} µs`,
    base === undefined ? '' : `${num(base.cpuUsPerItem)} µs`,
    ratio(run.cpuUsPerItem, base?.cpuUsPerItem),
  )
  // The baseline is one process around one event loop: its whole CPU is the comparison.
  t.add(
    `${label}: CPU per ${item} of the API thread, during the load`,
    `${num(run.apiThreadCpuUsPerItem)} µs`,
    base === undefined ? '' : `${num(base.cpuUsPerItem)} µs`,
    ratio(run.apiThreadCpuUsPerItem, base?.cpuUsPerItem),
  )
}

/** The single-event scenario's rows: req/s against baseline (a) (target ≥ 0.40×), latencies and CPU. */
function singleRows(t: Table, m: Measurements, o: Options): void {
  const single = m.service.single
  const singleBase = m.baseline.single
  if (single !== undefined) {
    const c = check('single-event req/s ≥ 0.4 × baseline (a)', ratioOf(single.load.requestsPerSec, singleBase?.load.requestsPerSec), 'min', 0.4, '×')
    t.add(
      `single event (1 × 3 objects, ${String(o.connections)} conn): req/s`,
      num(single.load.requestsPerSec),
      num(singleBase?.load.requestsPerSec),
      ratio(single.load.requestsPerSec, singleBase?.load.requestsPerSec),
      '≥ 0.40× (a)',
      c,
    )
    t.add('single event: p50 / p99', latencies(single.load), latencies(singleBase?.load))
    cpuRows(t, 'single event', single, singleBase)
  }
}

/** The batch scenario's rows: events/s against baseline (a) (target ≥ 0.25×), latencies and CPU. */
function batchRows(t: Table, m: Measurements, o: Options): void {
  const batch = m.service.batch
  const batchBase = m.baseline.batch
  if (batch !== undefined) {
    const c = check('batch events/s ≥ 0.25 × baseline (a)', ratioOf(batch.load.itemsPerSec, batchBase?.load.itemsPerSec), 'min', 0.25, '×')
    t.add(
      `batch (100 events × 3 objects, ${String(o.connections)} conn): events/s`,
      num(batch.load.itemsPerSec),
      num(batchBase?.load.itemsPerSec),
      ratio(batch.load.itemsPerSec, batchBase?.load.itemsPerSec),
      '≥ 0.25× (a)',
      c,
    )
    t.add('batch: p50 / p99', latencies(batch.load), latencies(batchBase?.load))
    cpuRows(t, 'batch', batch, batchBase)
  }
}

/** The batch at half the peak rate: its p99 (target ≤ 50 ms) beside the baseline's at half its own peak. */
function halfRateRows(t: Table, m: Measurements): void {
  if (m.halfRate !== null) {
    const c = check('batch p99 ≤ 50 ms at half the peak rate', m.halfRate.load.latencyP99, 'max', 50, 'ms')
    const base = m.halfRateBaseline
    t.add(
      `batch at half peak (${String(m.halfRate.rate)} req/s; (a) at ${base === null ? '—' : String(base.rate)}): p99`,
      ms(m.halfRate.load.latencyP99),
      ms(base?.load.latencyP99),
      '',
      '≤ 50 ms',
      c,
    )
  }
}

/**
 * The freshness scenario's rows, per run and labelled with its load: events/s accepted, latencies,
 * the read models' lag, and the share of samples within FRESH_SECONDS; that share is checked against
 * the target in the first run only, and the others are reported (docs/performance.md#targets).
 */
function freshnessRows(t: Table, m: Measurements): void {
  for (const [i, f] of m.freshness.entries()) {
    const lag = f.lagSeconds
    const load = `${num(f.rate)} events/s for ${String(f.durationSec)} s`
    const prefix = `freshness, batch at ${load}:`
    t.add(`${prefix} events/s accepted`, num(f.achievedEventsPerSec), '', '', `${num(f.rate)} asked`)
    t.add(`${prefix} p50 / p99`, latencies(f.load))
    t.add(
      `${prefix} read models' lag, p99 / max of ${String(lag.samples)} samples (every ${String(LAG_SAMPLE_MS)} ms)`,
      `${num(lag.p99)} s / ${num(lag.max)} s`,
    )
    const figure = `${prefix} samples with the read models ≤ ${String(FRESH_SECONDS)} s behind`
    const share = lag.shareWithin === null ? '—' : pct(lag.shareWithin)
    if (i > 0) {
      t.add(figure, share, '', '', 'reported')
      continue
    }
    const c = check(
      `read models ≤ ${String(FRESH_SECONDS)} s behind in ${String(FRESH_SHARE * 100)}% of samples (${load})`,
      lag.shareWithin === null ? null : lag.shareWithin * 100,
      'min',
      FRESH_SHARE * 100,
      '%',
    )
    t.add(figure, share, '', '', `≥ ${String(FRESH_SHARE * 100)}%`, c)
  }
}

/** The object-batch scenario's rows: objects/s against baseline (a), latencies and CPU. */
function objectRows(t: Table, m: Measurements): void {
  const objects = m.service.objects
  const objectsBase = m.baseline.objects
  if (objects !== undefined) {
    t.add(
      'object batch (100 upserts, ½ new ½ merged): objects/s',
      num(objects.load.itemsPerSec),
      num(objectsBase?.load.itemsPerSec),
      ratio(objects.load.itemsPerSec, objectsBase?.load.itemsPerSec),
    )
    t.add('object batch: p50 / p99', latencies(objects.load), latencies(objectsBase?.load))
    cpuRows(t, 'object batch', objects, objectsBase)
  }
}

/** The worst case's rows: events/s, latencies, the read models' backlog and their catch-up after the load (target ≤ 10 s). */
function worstRows(t: Table, m: Measurements, o: Options): void {
  const worst = m.service.worst
  const worstBase = m.baseline.worst
  if (worst !== undefined) {
    t.add(
      'worst case (100 events × 50 objects): events/s',
      num(worst.load.itemsPerSec),
      num(worstBase?.load.itemsPerSec),
      ratio(worst.load.itemsPerSec, worstBase?.load.itemsPerSec),
    )
    t.add('worst case: p50 / p99', latencies(worst.load), latencies(worstBase?.load))
    t.add('worst case: read models behind at the end of the load', `${num(worst.catchUp.behindAtEnd)} records`)
    const left = worst.catchUp.behindAfter
    const rate = worst.catchUp.recordsPerSec
    t.add(
      'worst case: caught up after the load',
      worst.catchUp.seconds === null
        ? `> ${String(o.worstCatchupTimeout)} s (${num(left)} left${rate > 0 ? `, ~${num(left / rate)} s more` : ''})`
        : `${num(worst.catchUp.seconds)} s`,
      '',
      '',
      '≤ 10 s',
      check('read models caught up ≤ 10 s after the worst-case load', worst.catchUp.seconds, 'max', 10, 's'),
    )
    t.add('worst case: projector during catch-up, records/s', num(rate))
  }
}

/** The read models' catch-up after each typical load (target ≤ 2 s). */
function catchUpRows(t: Table, m: Measurements, o: Options): void {
  for (const s of ['single', 'batch', 'objects'] as const) {
    const run = m.service[s]
    if (run === undefined) continue
    const c = check(`read models caught up ≤ 2 s after the ${s} load`, run.catchUp.seconds, 'max', 2, 's')
    t.add(
      `${s}: read models caught up after the load`,
      run.catchUp.seconds === null ? `> ${String(o.catchupTimeout)} s` : `${num(run.catchUp.seconds)} s (${num(run.catchUp.behindAtEnd)} behind)`,
      '',
      '',
      '≤ 2 s',
      c,
    )
  }
}

/** The projector against baseline (b), raw SQLite appends: its catch-up after the batch load, the full rebuild (target ≥ 0.40×), and (b) against (a). */
function storageRows(t: Table, m: Measurements): void {
  const batch = m.service.batch
  const batchBase = m.baseline.batch
  const raw = m.rawAppend?.recordsPerSec
  if (batch !== undefined && batch.catchUp.behindAtEnd >= 1000) {
    t.add('projector records/s, catch-up after the batch load', num(batch.catchUp.recordsPerSec), num(raw), ratio(batch.catchUp.recordsPerSec, raw))
  }
  if (m.rebuild !== null) {
    const c = check('full rebuild records/s ≥ 0.40 × baseline (b)', ratioOf(m.rebuild.recordsPerSec, raw), 'min', 0.4, '×')
    t.add(
      `projector, full rebuild (${num(m.rebuild.records)} records): records/s`,
      num(m.rebuild.recordsPerSec),
      num(raw),
      ratio(m.rebuild.recordsPerSec, raw),
      '≥ 0.40× (b)',
      c,
    )
  }
  if (raw !== undefined && batchBase !== undefined) {
    t.add(
      'bound: raw SQLite appends (b) vs bare Fastify (a), per event',
      `${num(raw)} records/s`,
      `${num(batchBase.load.itemsPerSec)} events/s`,
      ratio(raw, batchBase.load.itemsPerSec),
      '(storage alone)',
    )
  }
}

/** The import rows: the generated large log, and the running example repeated. */
function importsRows(t: Table, m: Measurements, o: Options): void {
  if (m.largeImport !== null) {
    const l = m.largeImport
    importRows(
      t,
      l,
      `a generated log (${num(l.events)} events, ${num(l.objects)} objects, ${num(l.fileMiB)} MiB JSON; bench/large-ocel.ts)`,
      'large import',
      o.catchupTimeout,
    )
  }
  if (m.repeatedImport !== null) {
    const l = m.repeatedImport
    importRows(
      t,
      l,
      `the running example repeated ${String(o.repeatImport)} times (${num(l.events)} events, ${num(l.objects)} objects, ${num(l.fileMiB)} MiB JSON; bench/repeated-ocel.ts)`,
      'repeated import',
      o.catchupTimeout,
    )
  }
}

/** The service's peak RSS, typical scenarios and worst case (target ≤ 300 MB, the larger of both). */
function rssRows(t: Table, m: Measurements, o: Options): void {
  const who = o.split ? 'API + projector processes' : 'service'
  const peaks = [m.rss.typical, m.rss.worst].filter((p): p is number => p !== null)
  const c = check('peak RSS of the service ≤ 300 MB', peaks.length === 0 ? null : Math.max(...peaks) / 2 ** 20, 'max', 300, 'MB')
  const both = peaks.length === 2
  if (m.rss.typical !== null)
    t.add(`${who} peak RSS (VmHWM), typical scenarios`, `${num(m.rss.typical / 2 ** 20)} MB`, '', '', both ? '' : '≤ 300 MB', both ? undefined : c)
  if (m.rss.worst !== null)
    t.add(`${who} peak RSS (VmHWM), worst case`, `${num(m.rss.worst / 2 ** 20)} MB`, '', '', both ? '≤ 300 MB (max of both)' : '≤ 300 MB', c)
}

/**
 * The table's sections, in its order (docs/performance.md#method): each scenario adds its rows and
 * its targets when it was measured.
 */
const SECTIONS: ((t: Table, m: Measurements, o: Options) => void)[] = [
  singleRows,
  batchRows,
  halfRateRows,
  freshnessRows,
  objectRows,
  worstRows,
  catchUpRows,
  storageRows,
  (t, m) => {
    if (m.processMap !== null) processMapRows(t, m.processMap)
  },
  (t, m) => {
    if (m.exports !== null) exportRows(t, m.exports)
  },
  importsRows,
  rssRows,
]

/** A share 0..1 as a percentage with one decimal, e.g. 99.6%. */
function pct(share: number): string {
  return `${(Math.round(share * 1000) / 10).toFixed(1)}%`
}

function seconds(name: string) {
  return (v: string): number => {
    const n = Number(v)
    if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a number of seconds ≥ 0`)
    return n
  }
}

function scenarioList(v: string): BenchScenario[] {
  const out: BenchScenario[] = []
  for (const part of v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const found = BENCH_SCENARIOS.find((s) => s === part)
    if (found === undefined) throw new InvalidArgumentError(`unknown scenario "${part}" (known: ${BENCH_SCENARIOS.join(', ')})`)
    out.push(found)
  }
  return out
}

async function main(): Promise<void> {
  const program = new Command('bench')
    .description(
      'Benchmark the built Ocelog service on the embedded default against raw baselines in the same run: ' +
        '(a) bare Fastify with the same schemas and validation, (b) raw SQLite appends of the same records. ' +
        'Prints one table and writes it as JSON to bench/results/<date>-<commit>.json.',
    )
    .option('--duration <s>', 'seconds of load per scenario and target', seconds('--duration'), 10)
    .option('--worst-duration <s>', 'seconds of load for the worst case', seconds('--worst-duration'), 8)
    .option('--warmup <s>', 'unrecorded seconds of load before each measured run', seconds('--warmup'), 1)
    .option('--connections <n>', 'concurrent connections of the load generator', positiveInt, 16)
    .option('--catchup-timeout <s>', 'longest wait for the read models after a load', seconds('--catchup-timeout'), 60)
    .option(
      '--worst-catchup-timeout <s>',
      'longest wait for the read models after the worst case (then the rest is estimated)',
      seconds('--worst-catchup-timeout'),
      20,
    )
    .option('--scenarios <list>', `comma-separated subset of ${BENCH_SCENARIOS.join(',')}`, scenarioList, [...BENCH_SCENARIOS])
    .addOption(
      new Option(
        '--freshness <list>',
        "the freshness scenario's paced batch loads, each on a fresh service: comma-separated rate@seconds (events/s @ seconds; " +
          'requests/s = rate ÷ 100 events per batch); the first is graded against the target, the others are reported',
      )
        .argParser(parseFreshnessLoads)
        .default([...DEFAULT_FRESHNESS_LOADS], DEFAULT_FRESHNESS_SPEC),
    )
    .option('--cpu-prof <dir>', 'run the service with node --cpu-prof, writing .cpuprofile files to <dir>')
    .option(
      '--split',
      'run the projector as its own process (`ocelog serve --no-projector` + a projector process) instead of in worker threads of the API process',
      false,
    )
    .option('--keep', 'keep the temporary data folders (their paths are printed)', false)
    .option('--markdown', 'also print the table as Markdown', false)
    .option('--out <dir>', 'folder of the JSON results', join(ROOT, 'bench', 'results'))
    .option('--no-process-map', 'leave out the process map row (import of the running example, then the map timed)')
    .option('--map-runs <n>', 'runs of the process map (median reported)', positiveInt, 20)
    .option('--export-events <n>', 'events of the generated dataset exported in each form (time and peak RSS); 0 leaves the export rows out', wholeInt, 500_000)
    .option('--import-runs <n>', 'imports of the running example, each into a fresh service (median reported)', positiveInt, 3)
    .option('--large-import <orders>', "orders of the large-import row's generated log, 5 events each (0 leaves the row out)", wholeInt, 100_002)
    .option(
      '--repeat-import <copies>',
      "copies of the running example in the repeated-import row's log, ids suffixed and times shifted (0 leaves the row out; skipped without the real logs)",
      wholeInt,
      30,
    )
    .addHelpText('after', '\nRun `npm run build` first (npm run bench does), then: node dist/bench/run.js [options]')
  program.parse(process.argv)
  const o = program.opts<Options>()
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`)

  const loadAtStart = loadavg()[0] ?? 0
  const tmp = mkdtempSync(join(tmpdir(), 'ocelog-bench-'))
  log(
    `Ocelog benchmark: scenarios ${o.scenarios.join(', ')}; projector ${o.split ? 'in its own process (split layout)' : 'in worker threads of the API process, one per runner (embedded default)'}; ` +
      `load average ${loadAtStart.toFixed(2)}`,
  )
  let m: Measurements
  try {
    m = await measure(o, tmp)
  } finally {
    if (o.keep) log(`data kept in ${tmp}`)
    else rmSync(tmp, { recursive: true, force: true })
  }
  const table = new Table()
  for (const section of SECTIONS) section(table, m, o)
  const commit = gitCommit()
  const name = freeResultName(o.out, `${new Date(started).toISOString().slice(0, 10)}-${commit.id}`)
  const file = printAndSave(
    table.rows,
    table.targets,
    { loadAtStart, startedMs: started, markdown: o.markdown, out: o.out, name },
    { options: o, commit, measurements: m },
  )
  log(`results written to ${file}`)
}

/** The checked-out commit (short id, `unknown` outside a git checkout) and whether the work tree differed from it. */
function gitCommit(): { id: string; dirty: boolean } {
  try {
    const id = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' })
    return { id, dirty: status.trim() !== '' }
  } catch {
    return { id: 'unknown', dirty: false }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${messageOf(error)}\n`)
  process.exit(1)
})
