/**
 * The bench's large-import row (README § Performance, docs/import.md): `ocelog import` of a generated
 * OCEL 2.0 JSON log (bench/large-ocel.ts; 500,010 events by default) into a fresh service with rate
 * limits out of the way, end to end. Reported: events/s over the whole file (the import's own
 * summary: reading, staging, planning and sending) and the importer's peak RSS
 * (process.resourceUsage().maxRSS, printed by the child on exit through a `node --import` hook).
 * Then, from the end of the import, how long the service's read models take to catch up with its
 * log (bench/projection-watch.ts); and where the CPU went: the importer's own (user + system, from
 * the same hook) and the service's during the import, its API thread apart (/proc).
 * Targets: ≥ 10,000 events/s, ≤ 300 MB, read models caught up ≤ 15 s after the import.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeLargeOcelJson } from './large-ocel.js'
import { ProjectionWatch } from './projection-watch.js'
import { CLI, cpuSecondsOf, createKey, embeddedEnv, startService, stopProcess } from './processes.js'

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
 * Generates a log of `orders` orders (5 events each on average) in `dir`, and imports it.
 * @throws when the import fails or reports failed items.
 */
export async function measureLargeImport(dir: string, orders: number, log: (line: string) => void, catchUpTimeoutSec = 120): Promise<LargeImportResult> {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'large.json')
  const counts = writeLargeOcelJson(file, orders)
  const fileMiB = statSync(file).size / 2 ** 20
  log(`large import: ${String(counts.events)} events, ${String(counts.objects)} objects, ${fileMiB.toFixed(0)} MiB of JSON`)
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
      objects: counts.objects,
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
      `large import: ${String(result.events)} events in ${result.seconds.toFixed(1)} s = ${String(result.eventsPerSec)} events/s, peak RSS ${result.peakRssMiB.toFixed(0)} MiB; CPU: importer ${result.importerCpuSec.toFixed(1)} s, service ${serviceCpuSec.toFixed(1)} s (API thread ${apiThreadCpuSec.toFixed(1)} s)`,
    )
    log(
      result.caughtUpSeconds === null
        ? `large import: read models NOT caught up ${String(catchUpTimeoutSec)} s after the import (${String(catchUp.behindAfter)} records behind)`
        : `large import: read models caught up ${result.caughtUpSeconds.toFixed(1)} s after the import (${String(result.behindAtEnd)} records behind at its end)`,
    )
    return result
  } finally {
    await stopProcess(service.child)
  }
}
