/**
 * The bench's large-import rows (README § Performance, docs/import.md): `ocelog import` of a generated
 * OCEL 2.0 JSON log (bench/large-ocel.ts; 500,010 events by default), and of the running example
 * repeated 30 times (bench/repeated-ocel.ts; 546,330 events), each into a fresh service with rate
 * limits out of the way, end to end. Reported: events/s over the whole file (the import's own
 * summary: reading, staging, planning and sending) and the importer's peak RSS
 * (process.resourceUsage().maxRSS, printed by the child on exit through a `node --import` hook).
 * Then, from the end of the import, how long the service's read models take to catch up with its
 * log (bench/projection-watch.ts); and where the CPU went: the importer's own (user + system, from
 * the same hook) and the service's during the import, its API thread apart (/proc).
 * Targets: ≥ 10,000 events/s, ≤ 300 MB, read models caught up ≤ 15 s after the import.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeLargeOcelJson } from './large-ocel.js'
import { PROCESS_MAP_LOG } from './process-map.js'
import { writeRepeatedOcelJson } from './repeated-ocel.js'
import { ProjectionWatch } from './projection-watch.js'
import { CLI, cpuSecondsOf, createKey, embeddedEnv, startService, stopProcess } from './processes.js'
import { check, num, type Table } from './report.js'

/** One large import. */
export interface LargeImportResult {
  events: number
  objects: number
  fileMiB: number
  seconds: number
  eventsPerSec: number
  peakRssMiB: number
  /** Seconds from the importer's exit until the read models held every record of the log (null: not within `catchUpTimeoutSec`). */
  caughtUpSeconds: number | null
  /** Records of the log the read models had not applied when the importer exited. */
  behindAtEnd: number
  /** CPU seconds (user + system) of the importer process. */
  importerCpuSec: number
  /** CPU seconds of the service process during the import (every thread), and of its API thread alone. */
  serviceCpuSec: number
  apiThreadCpuSec: number
}

/** Prints the child's peak RSS (kB) and its CPU time (µs, user + system) on stderr when it exits. */
const MAX_RSS_HOOK = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('max-rss-kb '+u.maxRSS+' cpu-us '+(u.userCPUTime+u.systemCPUTime)+'\\n')})`

/**
 * Generates a log of `orders` orders (5 events each on average) in `dir`, and imports it (measureImport).
 * @throws when the import fails or reports failed items.
 */
export async function measureLargeImport(dir: string, orders: number, log: (line: string) => void, catchUpTimeoutSec = 120): Promise<LargeImportResult> {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'large.json')
  const counts = writeLargeOcelJson(file, orders)
  return measureImport(dir, file, counts.objects, 'large import', log, catchUpTimeoutSec)
}

/**
 * The running example (PROCESS_MAP_LOG) repeated `copies` times (bench/repeated-ocel.ts) in `dir`,
 * imported (measureImport). At 30 copies it is the dataset of 546,330 events that Ocelog was first
 * tried at scale with.
 * @returns null when the running example is not beside the repository (a plain clone); the reason is logged.
 * @throws when the import fails or reports failed items.
 */
export async function measureRepeatedImport(
  dir: string,
  copies: number,
  log: (line: string) => void,
  catchUpTimeoutSec = 120,
): Promise<LargeImportResult | null> {
  if (!existsSync(PROCESS_MAP_LOG)) {
    log(`repeated import: skipped, ${PROCESS_MAP_LOG} is missing (set OCELOG_TEST_OCEL_DIR to the folder of real OCEL 2.0 logs)`)
    return null
  }
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'repeated.json')
  const counts = writeRepeatedOcelJson(PROCESS_MAP_LOG, file, copies)
  return measureImport(dir, file, counts.objects, `running example ×${String(copies)}`, log, catchUpTimeoutSec)
}

/**
 * Imports the OCEL 2.0 log `file` (with `objects` objects) into a fresh service in `dir` with
 * `ocelog import`, and measures it (see module comment). `label` starts each line logged.
 * @throws when the import fails or reports failed items.
 */
async function measureImport(
  dir: string,
  file: string,
  objects: number,
  label: string,
  log: (line: string) => void,
  catchUpTimeoutSec: number,
): Promise<LargeImportResult> {
  const fileMiB = statSync(file).size / 2 ** 20
  const dataDir = join(dir, 'data')
  const token = await createKey(dataDir)
  const service = await startService(dataDir, token)
  try {
    const serviceCpu = cpuSecondsOf(service.pid)
    const apiCpu = cpuSecondsOf(service.pid, service.pid)
    const child = spawn(
      process.execPath,
      ['--import', MAX_RSS_HOOK, CLI, 'import', file, '--url', service.url, '--key', token, '--json', '--staging-dir', dir],
      {
        env: embeddedEnv(dataDir),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    const endedAt = Date.now()
    const serviceCpuSec = cpuSecondsOf(service.pid) - serviceCpu
    const apiThreadCpuSec = cpuSecondsOf(service.pid, service.pid) - apiCpu
    const rss = /max-rss-kb (\d+) cpu-us (\d+)/.exec(err)
    if (code !== 0 || rss === null) throw new Error(`ocelog import exited ${String(code)}: ${err.trim()}`)
    // Every request was answered before the importer exited: nothing appends after `endedAt`.
    const watch = new ProjectionWatch(dataDir)
    const catchUp = await watch.waitCaughtUp(endedAt, endedAt, catchUpTimeoutSec).finally(() => watch.close())
    const summary = JSON.parse(out) as { sent: { events: number }; elapsed_ms: number; events_per_second: number }
    const result = {
      events: summary.sent.events,
      objects,
      fileMiB,
      seconds: summary.elapsed_ms / 1000,
      eventsPerSec: summary.events_per_second,
      peakRssMiB: Number(rss[1]) / 1024,
      caughtUpSeconds: catchUp.seconds,
      behindAtEnd: catchUp.behindAtEnd,
      importerCpuSec: Number(rss[2]) / 1e6,
      serviceCpuSec,
      apiThreadCpuSec,
    }
    log(
      `${label}: ${String(result.events)} events (${fileMiB.toFixed(0)} MiB of JSON) in ${result.seconds.toFixed(1)} s = ${String(result.eventsPerSec)} events/s, peak RSS ${result.peakRssMiB.toFixed(0)} MiB; CPU: importer ${result.importerCpuSec.toFixed(1)} s, service ${serviceCpuSec.toFixed(1)} s (API thread ${apiThreadCpuSec.toFixed(1)} s)`,
    )
    log(
      result.caughtUpSeconds === null
        ? `${label}: read models NOT caught up ${String(catchUpTimeoutSec)} s after the import (${String(catchUp.behindAfter)} records behind)`
        : `${label}: read models caught up ${result.caughtUpSeconds.toFixed(1)} s after the import (${String(result.behindAtEnd)} records behind at its end)`,
    )
    return result
  } finally {
    await stopProcess(service.child)
  }
}

/**
 * The rows of one import of a large log (`what` names it, `target` names its checks): events/s
 * (target ≥ 10,000), the read models' catch-up after it (target ≤ 15 s; `catchupTimeout` s the
 * longest wait), CPU per event, and the importer's peak RSS (target ≤ 300 MB).
 */
export function importRows(t: Table, l: LargeImportResult, what: string, target: string, catchupTimeout: number): void {
  t.add(
    `ocelog import of ${what}, end to end: events/s over the whole file`,
    num(l.eventsPerSec),
    '',
    '',
    '≥ 10,000',
    check(`${target} ≥ 10,000 events/s`, l.eventsPerSec, 'min', 10_000, 'events/s'),
  )
  t.add(
    `ocelog import of that log: read models caught up after the import ended (${num(l.behindAtEnd)} records behind at its end)`,
    l.caughtUpSeconds === null ? `not within ${String(catchupTimeout)} s` : `${l.caughtUpSeconds.toFixed(1)} s`,
    '',
    '',
    '≤ 15 s',
    check(`read models caught up ≤ 15 s after the ${target}`, l.caughtUpSeconds ?? Number.POSITIVE_INFINITY, 'max', 15, 's'),
  )
  const perEvent = (sec: number) => `${((sec * 1e6) / l.events).toFixed(1)} µs`
  t.add(
    'ocelog import of that log: CPU per event of the importer / of the service (its API thread + its other threads: projector, GC)',
    `${perEvent(l.importerCpuSec)} / ${perEvent(l.serviceCpuSec)} (${perEvent(l.apiThreadCpuSec)} + ${perEvent(l.serviceCpuSec - l.apiThreadCpuSec)})`,
  )
  t.add(
    "ocelog import of that log: the importer's peak RSS",
    `${num(l.peakRssMiB)} MB`,
    '',
    '',
    '≤ 300 MB',
    check(`${target}: importer peak RSS ≤ 300 MB`, l.peakRssMiB, 'max', 300, 'MB'),
  )
}
