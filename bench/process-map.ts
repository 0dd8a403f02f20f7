/**
 * The process map row of `npm run bench` (docs/performance.md#targets): the order-management running example
 * (18,211 events, 35,857 E2O links) is imported with `ocelog import` into a fresh service on the
 * embedded default; once the projector has caught up, the service stops and this process asks the
 * query layer (ProcessReader.processMap over the SQLite adapter, all object types, no window)
 * `runs` times, after one warm-up run. Target: median ≤ 20 ms. The import is measured too:
 * events/s of `ocelog import`, end to end; target ≥ 10,000 events/s. It is the
 * median of `importRuns` imports, each into a fresh service (the first is the one the map reads): one
 * import lasts about 2 s, and on a shared machine one such run ranged from 7,108 to 9,801 events/s.
 */
import Database from 'better-sqlite3'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'
import { ALL_CHECKPOINTS_SQL, openReadModelsDatabase, openReadModelsReadOnly } from '../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { ProcessReader } from '../src/read/process-reader.js'
import { createKey, embeddedEnv, ROOT, runCli, startService, stopProcess } from './processes.js'
import { check, median, ms, num, type Table } from './report.js'

/**
 * The log measured, never copied into the repository: `derived/ocpa__running-example.ocel2.json` in the folder of real OCEL 2.0
 * logs that the tests read too (`OCELOG_TEST_OCEL_DIR`, else `data/ocel/` of the shared folder beside the repository).
 */
const OCEL_DIR = process.env.OCELOG_TEST_OCEL_DIR
export const PROCESS_MAP_LOG = join(
  OCEL_DIR !== undefined && OCEL_DIR !== '' ? OCEL_DIR : join(ROOT, '..', 'shared', 'data', 'ocel'),
  'derived',
  'ocpa__running-example.ocel2.json',
)

export interface ProcessMapResult {
  events: number
  e2o: number
  objectTypes: number
  runs: number
  /** Milliseconds of each run, in order. */
  runMs: number[]
  medianMs: number
  /**
   * The analysis reads over the same dataset and runs (docs/analysis.md; target: median ≤ 100 ms each): performance (all
   * types, all time), variants (of the type with the most objects), type relations, and compare (two halves of the time range).
   */
  analysis: Record<'performance' | 'variants' | 'typeRelations' | 'compare', { medianMs: number; runMs: number[] }>
  /**
   * `ocelog import` of the log, end to end: the first import, except `eventsPerSec`, which is the
   * median of `runsPerSec`, one import into a fresh service each, in order.
   */
  import: ImportRun & { runsPerSec: number[] }
}

/** One `ocelog import` of the log, end to end (its own summary: events sent over its elapsed time). */
interface ImportRun {
  events: number
  seconds: number
  eventsPerSec: number
}

/** Waits until the read models' checkpoint has reached the head of the log (polling the file read-only). */
async function waitProjected(dataDir: string, timeoutMs: number): Promise<void> {
  const db = new Database(join(dataDir, 'ocelog.db'), { readonly: true })
  const rmDb = openReadModelsReadOnly(dataDir)
  try {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const head = (db.prepare('SELECT MAX(position) AS p FROM records').get() as { p: number | null }).p ?? 0
      const at = (rmDb.prepare(`SELECT MIN(position) AS p FROM (${ALL_CHECKPOINTS_SQL})`).get() as { p: number | null }).p ?? 0
      if (at >= head) return
      if (Date.now() > deadline) throw new Error(`the projector did not catch up within ${String(timeoutMs / 1000)} s (${String(at)} of ${String(head)})`)
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    db.close()
    rmDb.close()
  }
}

/**
 * `ocelog import` of PROCESS_MAP_LOG into a fresh service on `dataDir`; once it has answered, the
 * service stops, or first waits for its read models when `thenProject`.
 */
async function importOnce(dataDir: string, thenProject: boolean, log: (line: string) => void): Promise<ImportRun> {
  const token = await createKey(dataDir)
  const service = await startService(dataDir, token)
  try {
    log(`import: ${PROCESS_MAP_LOG} into ${service.url}`)
    const summary = JSON.parse(await runCli(['import', PROCESS_MAP_LOG, '--url', service.url, '--key', token, '--json'], embeddedEnv(dataDir))) as {
      sent: { events: number }
      elapsed_ms: number
      events_per_second: number
    }
    const run = { events: summary.sent.events, seconds: summary.elapsed_ms / 1000, eventsPerSec: summary.events_per_second }
    log(`import: ${String(run.events)} events in ${run.seconds.toFixed(1)} s = ${String(run.eventsPerSec)} events/s (ocelog import, end to end)`)
    if (thenProject) await waitProjected(dataDir, 120_000)
    return run
  } finally {
    await stopProcess(service.child)
  }
}

/**
 * Imports PROCESS_MAP_LOG `importRuns` times, each into a fresh service (the first into `dataDir`,
 * the others into folders beside it, removed after), and times the process map `runs` times over
 * the first.
 * @returns null when the log is not beside the repository (a plain clone).
 */
export async function measureProcessMap(dataDir: string, runs: number, importRuns: number, log: (line: string) => void): Promise<ProcessMapResult | null> {
  if (!existsSync(PROCESS_MAP_LOG)) {
    log(`process map: skipped, ${PROCESS_MAP_LOG} is missing (set OCELOG_TEST_OCEL_DIR to the folder of real OCEL 2.0 logs)`)
    return null
  }
  const first = await importOnce(dataDir, true, log)
  const runsPerSec = [first.eventsPerSec]
  for (let i = 2; i <= importRuns; i++) {
    const dir = `${dataDir}-import-${String(i)}`
    try {
      runsPerSec.push((await importOnce(dir, false, log)).eventsPerSec)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const imported: ProcessMapResult['import'] = { ...first, eventsPerSec: median(runsPerSec), runsPerSec }
  if (importRuns > 1) log(`import: median ${String(imported.eventsPerSec)} events/s of ${String(importRuns)} runs (${runsPerSec.join(', ')})`)
  const db = openDatabase(dataDir)
  const rmDb = openReadModelsDatabase(dataDir).db
  const eventLog = new SqliteEventLog(db)
  try {
    const datasetId = (rmDb.prepare('SELECT dataset_id FROM rm_datasets LIMIT 1').get() as { dataset_id: string }).dataset_id
    const reader = new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log: eventLog })
    const summary = await reader.summary(datasetId)
    const warmUp = await reader.processMap(datasetId, {})
    const runMs: number[] = []
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      await reader.processMap(datasetId, {})
      runMs.push(performance.now() - t0)
    }
    const analysis = await measureAnalysis(reader, datasetId, runs, summary, warmUp.object_types)
    const result = {
      events: summary.events,
      e2o: summary.e2o,
      objectTypes: warmUp.object_types.length,
      runs,
      runMs,
      medianMs: median(runMs),
      analysis,
      import: imported,
    }
    log(
      `process map: ${String(result.events)} events, ${String(result.e2o)} E2O, ${String(result.objectTypes)} object types; ` +
        `median ${result.medianMs.toFixed(1)} ms over ${String(runs)} runs (min ${Math.min(...runMs).toFixed(1)}, max ${Math.max(...runMs).toFixed(1)})`,
    )
    for (const [name, a] of Object.entries(analysis)) log(`${name}: median ${a.medianMs.toFixed(1)} ms over ${String(runs)} runs`)
    return result
  } finally {
    await eventLog.close()
    db.close()
    rmDb.close()
  }
}

/** Times each analysis read `runs` times after one warm-up run (see ProcessMapResult.analysis). */
async function measureAnalysis(
  reader: ProcessReader,
  datasetId: string,
  runs: number,
  summary: { first_event_time: string | null; last_event_time: string | null },
  maps: readonly { object_type: string; objects: number }[],
): Promise<ProcessMapResult['analysis']> {
  const biggest = [...maps].sort((a, b) => b.objects - a.objects)[0]?.object_type ?? ''
  const first = Date.parse(summary.first_event_time ?? '1970-01-01T00:00:00Z')
  const last = Date.parse(summary.last_event_time ?? '1970-01-01T00:00:00Z')
  const middle = new Date(Math.floor((first + last) / 2)).toISOString()
  const reads: Record<keyof ProcessMapResult['analysis'], () => Promise<unknown>> = {
    performance: () => reader.performance(datasetId, {}),
    variants: () => reader.variants(datasetId, { object_type: biggest }),
    typeRelations: () => reader.typeRelations(datasetId, {}),
    compare: () => reader.compare(datasetId, { a_to: middle, b_from: middle }),
  }
  const out: Partial<ProcessMapResult['analysis']> = {}
  for (const [name, read] of Object.entries(reads) as [keyof ProcessMapResult['analysis'], () => Promise<unknown>][]) {
    await read()
    const runMs: number[] = []
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      await read()
      runMs.push(performance.now() - t0)
    }
    out[name] = { medianMs: median(runMs), runMs }
  }
  return out as ProcessMapResult['analysis']
}

/** The process map's rows: its median over the running example (target ≤ 20 ms), and the import's events/s (target ≥ 10,000). */
export function processMapRows(t: Table, p: ProcessMapResult): void {
  t.add(
    `process map, running example (${num(p.events)} events, ${num(p.e2o)} E2O, ${String(p.objectTypes)} object types): median of ${String(p.runs)} runs`,
    ms(p.medianMs),
    '',
    '',
    '≤ 20 ms',
    check('process map median ≤ 20 ms', p.medianMs, 'max', 20, 'ms'),
  )
  t.add(
    `ocelog import of the running example (${num(p.import.events)} events, end to end): events/s` +
      (p.import.runsPerSec.length > 1 ? `, median of ${String(p.import.runsPerSec.length)} (${p.import.runsPerSec.map(num).join(', ')})` : ''),
    num(p.import.eventsPerSec),
    '',
    '',
    '≥ 10,000',
    check('ocelog import ≥ 10,000 events/s', p.import.eventsPerSec, 'min', 10_000, 'events/s'),
  )
}
