/**
 * A generated dataset for measuring `ocelog export` at size (docs/export.md;
 * the bench's export rows and test/e2e/export-memory.test.ts): `events` events written through the
 * ingest core into an embedded data dir (ocelog.db), then projected into read-models.db, with no
 * HTTP in between, so that a dataset of hundreds of thousands of events is made in seconds.
 *
 * Deterministic (no randomness): event i belongs to order `order-<⌊i/4⌋>` and is its i mod 4-th
 * step (Create Order, Pick Items, Pay Order, Ship Order), names item `item-<(7i) mod ⌈events/2⌉>`
 * and, on Create Order, customer `customer-<order mod 1000>`; events are one second apart from
 * 2024-01-01T00:00:00Z and carry an integer, a float and a text property. Each order gets one object
 * upsert with two attributes and an O2O relationship to its customer ("placed by").
 */
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelStore } from '../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { Ingest } from '../src/write/ingest.js'
import { Projector } from '../src/projector/runner.js'
import type { EventInput, ObjectUpsertInput } from '../src/schemas/api.js'
import { cpuSecondsOf, rssOf } from './processes.js'
import { check, num, type Table } from './report.js'

/** What the generated dataset holds, to check an export against. */
export interface ExportDatasetCounts {
  events: number
  objects: number
  /** E2O relationships. */
  e2o: number
  /** O2O relationships. */
  o2o: number
  /** Attribute values of objects (one per attribute per upsert). */
  objectAttributes: number
}

const STEPS = ['Create Order', 'Pick Items', 'Pay Order', 'Ship Order'] as const
const CUSTOMERS = 1000
/** Items per append: the API's batch limit. */
const BATCH = 500
const START_MS = Date.UTC(2024, 0, 1)

/** The expected counts for `events` events (see module comment). */
export function exportDatasetCounts(events: number): ExportDatasetCounts {
  const orders = Math.ceil(events / 4)
  const itemIds = Math.ceil(events / 2)
  const items = Math.min(itemIds, events)
  const customers = Math.min(CUSTOMERS, orders)
  return { events, objects: orders + items + customers, e2o: 2 * events + orders, o2o: orders, objectAttributes: 2 * orders }
}

function eventAt(i: number, events: number): EventInput {
  const order = Math.floor(i / 4)
  const step = STEPS[i % 4] ?? 'Create Order'
  const objects: EventInput['objects'] = [
    { type: 'order', id: `order-${String(order)}`, qualifier: 'order' },
    { type: 'item', id: `item-${String((7 * i) % Math.ceil(events / 2))}`, qualifier: 'item' },
  ]
  if (i % 4 === 0) objects.push({ type: 'customer', id: `customer-${String(order % CUSTOMERS)}`, qualifier: 'customer' })
  return {
    event: step,
    timestamp: new Date(START_MS + i * 1000).toISOString(),
    objects,
    properties: { quantity: i % 17, price: (i % 1000) + 0.5, channel: `c${String(i % 13)}` },
  }
}

function upsertOf(order: number): ObjectUpsertInput {
  return {
    type: 'order',
    id: `order-${String(order)}`,
    timestamp: new Date(START_MS + order * 4000).toISOString(),
    properties: { status: 'created', total: order % 5000 },
    relationships: [{ type: 'customer', id: `customer-${String(order % CUSTOMERS)}`, qualifier: 'placed by' }],
  }
}

/**
 * Writes the dataset `datasetId` of `events` events into the data dir `dataDir` (made when missing)
 * and projects it.
 * @param onProgress called after each append with the events written so far.
 * @returns the counts the dataset holds.
 * @throws Error when an item fails (a bug in the generator), and the adapters' errors.
 */
export async function writeExportDataset(
  dataDir: string,
  datasetId: string,
  events: number,
  onProgress?: (written: number) => void,
): Promise<ExportDatasetCounts> {
  const db = openDatabase(dataDir)
  // A scratch dataset: no fsync per append (a power cut may lose it; it is made again).
  db.pragma('synchronous = OFF')
  const rm = openReadModelsDatabase(dataDir)
  rm.db.pragma('synchronous = OFF')
  const log = new SqliteEventLog(db)
  try {
    await new SqliteKeyStore(db).createDataset({ id: datasetId, name: datasetId, created_at: new Date(START_MS).toISOString() })
    const ingest = new Ingest(log)
    const ctx = { datasetId, keyId: 'bench', requestId: 'export-dataset', receivedAt: new Date(START_MS).toISOString() }
    for (let from = 0; from < events; from += BATCH) {
      const to = Math.min(events, from + BATCH)
      const batch = Array.from({ length: to - from }, (_, k) => eventAt(from + k, events))
      const recorded = await ingest.recordEvents(batch, ctx)
      if (recorded.failures.length > 0) throw new Error(`export dataset: event ${JSON.stringify(recorded.failures[0])}`)
      const orders = [...new Set(batch.map((_, k) => Math.floor((from + k) / 4)))].filter((o) => o * 4 >= from)
      if (orders.length > 0) {
        const upserted = await ingest.upsertObjects(orders.map(upsertOf), ctx)
        if (upserted.failures.length > 0) throw new Error(`export dataset: upsert ${JSON.stringify(upserted.failures[0])}`)
      }
      onProgress?.(to)
    }
    await new Projector(log, new SqliteReadModelStore(rm.db)).catchUp()
  } finally {
    await log.close()
    db.close()
    rm.db.close()
  }
  return exportDatasetCounts(events)
}

/** One `ocelog export` run, measured from outside. */
export interface ExportRun {
  code: number | null
  stderr: string
  /** Wall-clock seconds from spawn to exit. */
  seconds: number
  /** The highest VmHWM of the process seen in /proc/<pid>/status, in bytes (polled every POLL_MS). */
  peakRssBytes: number
  /**
   * CPU seconds (user + system) of the process, from /proc/<pid>/stat at the last poll before it
   * exited: unlike wall time, it barely moves when other work shares the machine.
   */
  cpuSeconds: number
}

/** How often the exporter's VmHWM is read, ms. VmHWM is a high-water mark, so polling misses only a rise in the last interval. */
const POLL_MS = 20

/**
 * Runs `node <cli> export --dataset <datasetId> --format <form> --out <out>` on the embedded data dir
 * `dataDir` and measures its wall time and peak RSS (VmHWM).
 * @param cli path of the built CLI entry (dist/src/cli/main.js).
 */
export function measureExport(cli: string, dataDir: string, datasetId: string, form: 'json' | 'xml' | 'sqlite', out: string): Promise<ExportRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, OCELOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
  delete env.EVENTSTORE_URL
  delete env.MONGODB_URL
  const started = process.hrtime.bigint()
  const child = spawn(process.execPath, [cli, 'export', '--dataset', datasetId, '--format', form, '--out', out], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  let peak = 0
  let cpu = 0
  const pid = child.pid ?? -1
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid).peak)
    cpu = Math.max(cpu, cpuSecondsOf(pid))
  }, POLL_MS)
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearInterval(timer)
      reject(error)
    })
    child.once('exit', (code) => {
      clearInterval(timer)
      resolve({ code, stderr, seconds: Number(process.hrtime.bigint() - started) / 1e9, peakRssBytes: peak, cpuSeconds: cpu })
    })
  })
}

/** The bench's export rows: the dataset and one measured run per form. */
export interface ExportMeasurement {
  counts: ExportDatasetCounts
  /** Seconds to write the dataset and project it (not an export figure). */
  setupSeconds: number
  forms: Record<'json' | 'xml' | 'sqlite', { seconds: number; cpuSeconds: number; peakRssBytes: number }>
}

/**
 * Makes the generated dataset of `events` events in `dir` and exports it once in each form with
 * the built CLI at `cli`, measuring time and peak RSS; each output file is removed after its run.
 * @throws Error when an export exits non-zero (with its stderr).
 */
export async function measureExports(cli: string, dir: string, events: number, log: (line: string) => void): Promise<ExportMeasurement> {
  const started = Date.now()
  log(`export: writing and projecting a generated dataset of ${String(events)} events`)
  const counts = await writeExportDataset(join(dir, 'data'), 'export', events)
  const setupSeconds = (Date.now() - started) / 1000
  const forms = {} as ExportMeasurement['forms']
  for (const form of ['json', 'xml', 'sqlite'] as const) {
    const out = join(dir, `export.${form}`)
    const run = await measureExport(cli, join(dir, 'data'), 'export', form, out)
    rmSync(out, { force: true })
    if (run.code !== 0) throw new Error(`ocelog export --format ${form} exited ${String(run.code)}: ${run.stderr.trim()}`)
    log(`export ${form}: ${run.seconds.toFixed(1)} s (CPU ${run.cpuSeconds.toFixed(1)} s), peak RSS ${(run.peakRssBytes / 2 ** 20).toFixed(0)} MB`)
    forms[form] = { seconds: run.seconds, cpuSeconds: run.cpuSeconds, peakRssBytes: run.peakRssBytes }
  }
  return { counts, setupSeconds, forms }
}

/** The export rows: each form's time and CPU time (JSON: target ≤ 15 s) and the exporter's peak RSS (target ≤ 300 MB). */
export function exportRows(t: Table, x: ExportMeasurement): void {
  const dataset = `${num(x.counts.events)} events, ${num(x.counts.e2o)} E2O, ${num(x.counts.o2o)} O2O`
  for (const form of ['json', 'xml', 'sqlite'] as const) {
    const f = x.forms[form]
    t.add(
      `ocelog export --format ${form} of a generated dataset (${dataset}): time (its CPU time)`,
      `${f.seconds.toFixed(1)} s (${f.cpuSeconds.toFixed(1)} s)`,
      '',
      '',
      form === 'json' ? '≤ 15 s' : '',
      form === 'json' ? check('export JSON ≤ 15 s', f.seconds, 'max', 15, 's') : undefined,
    )
    t.add(
      `ocelog export --format ${form}: exporter peak RSS (VmHWM)`,
      `${num(f.peakRssBytes / 2 ** 20)} MB`,
      '',
      '',
      '≤ 300 MB',
      check(`export ${form} peak RSS ≤ 300 MB`, f.peakRssBytes / 2 ** 20, 'max', 300, 'MB'),
    )
  }
}
