/**
 * The bench's large-import row (README § Performance, docs/import.md): `ocelog import` of a generated
 * OCEL 2.0 JSON log (bench/large-ocel.ts; 500,010 events by default) into a fresh service with rate
 * limits out of the way, end to end. Reported: events/s over the whole file (the import's own
 * summary: reading, staging, planning and sending) and the importer's peak RSS
 * (process.resourceUsage().maxRSS, printed by the child on exit through a `node --import` hook).
 * Targets: ≥ 10,000 events/s, ≤ 300 MB.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeLargeOcelJson } from './large-ocel.js'
import { CLI, createKey, embeddedEnv, startService, stopProcess } from './processes.js'

/** One large import. */
export interface LargeImportResult {
  events: number
  objects: number
  fileMiB: number
  seconds: number
  eventsPerSec: number
  peakRssMiB: number
}

/** Prints the child's peak RSS (kB) on stderr when it exits. */
const MAX_RSS_HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('max-rss-kb '+process.resourceUsage().maxRSS+'\\n'))`

/**
 * Generates a log of `orders` orders (5 events each on average) in `dir`, and imports it.
 * @throws when the import fails or reports failed items.
 */
export async function measureLargeImport(dir: string, orders: number, log: (line: string) => void): Promise<LargeImportResult> {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'large.json')
  const counts = writeLargeOcelJson(file, orders)
  const fileMiB = statSync(file).size / 2 ** 20
  log(`large import: ${String(counts.events)} events, ${String(counts.objects)} objects, ${fileMiB.toFixed(0)} MiB of JSON`)
  const dataDir = join(dir, 'data')
  const token = await createKey(dataDir)
  const service = await startService(dataDir, token)
  try {
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
    const rss = /max-rss-kb (\d+)/.exec(err)
    if (code !== 0 || rss === null) throw new Error(`ocelog import exited ${String(code)}: ${err.trim()}`)
    const summary = JSON.parse(out) as { sent: { events: number }; elapsed_ms: number; events_per_second: number }
    const result = {
      events: summary.sent.events,
      objects: counts.objects,
      fileMiB,
      seconds: summary.elapsed_ms / 1000,
      eventsPerSec: summary.events_per_second,
      peakRssMiB: Number(rss[1]) / 1024,
    }
    log(
      `large import: ${String(result.events)} events in ${result.seconds.toFixed(1)} s = ${String(result.eventsPerSec)} events/s, peak RSS ${result.peakRssMiB.toFixed(0)} MiB`,
    )
    return result
  } finally {
    await stopProcess(service.child)
  }
}
