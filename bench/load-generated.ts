/**
 * Loads generated items (bench/generate.ts) into a log through the log port, as the API would
 * record them but without HTTP: each chunk of items is validated and turned into records by the
 * ingest core's pure planners (planObjects, planEvents: the same records, ids and identity claims
 * as `POST /v1/object/batch` and `POST /v1/event/batch`), then appended in one `append` call, one
 * transaction. Only one chunk is held at a time.
 */
import { planEvents, planObjects } from '../src/write/ingest.js'
import type { RecordContext } from '../src/core/records.js'
import type { EventLog } from '../src/ports/event-log.js'
import type { NewRecord } from '../src/schemas/records.js'
import type { GeneratedItem } from './generate.js'

export interface LoadOptions {
  /** Items per append (one transaction), default 5,000. */
  chunkItems?: number
  /** Called after each append with the events and records appended so far. */
  onProgress?: (events: number, records: number) => void
}

export interface LoadResult {
  events: number
  objectUpserts: number
  /** Records appended: events plus object upserts. */
  records: number
  seconds: number
  recordsPerSec: number
}

/**
 * Appends `items` to the stream of `datasetId`, in their order.
 * @throws Error naming the item when the ingest core refuses one (a generator bug), and the log's
 *   own errors (LogUnavailableError).
 */
export async function loadGenerated(log: EventLog, datasetId: string, items: Iterable<GeneratedItem>, options: LoadOptions = {}): Promise<LoadResult> {
  const chunkItems = options.chunkItems ?? 5000
  const started = performance.now()
  const totals = { events: 0, objectUpserts: 0, records: 0 }
  let chunk: GeneratedItem[] = []
  let requests = 0
  const flush = async () => {
    if (chunk.length === 0) return
    requests += 1
    const ctx: RecordContext = { datasetId, keyId: 'bench-scale', requestId: `load-${String(requests)}`, receivedAt: new Date().toISOString() }
    const records: NewRecord[] = []
    const claims: string[] = []
    // Runs of one kind keep the arrival order of objects and events.
    let i = 0
    while (i < chunk.length) {
      const kind = chunk[i]?.kind
      const run: unknown[] = []
      while (i < chunk.length && chunk[i]?.kind === kind) {
        run.push(chunk[i]?.item)
        i += 1
      }
      const plan = kind === 'event' ? planEvents(run, ctx) : planObjects(run, ctx)
      const failure = plan.failures[0]
      if (failure !== undefined) throw new Error(`generated ${String(kind)} refused: ${JSON.stringify(run[failure.index])}: ${JSON.stringify(failure.errors)}`)
      records.push(...plan.records)
      claims.push(...plan.claims)
      if (kind === 'event') totals.events += plan.records.length
      else totals.objectUpserts += plan.records.length
    }
    await log.append(datasetId, records, claims)
    totals.records += records.length
    chunk = []
    options.onProgress?.(totals.events, totals.records)
  }
  for (const item of items) {
    chunk.push(item)
    if (chunk.length >= chunkItems) await flush()
  }
  await flush()
  const seconds = (performance.now() - started) / 1000
  return { ...totals, seconds, recordsPerSec: totals.records / seconds }
}
