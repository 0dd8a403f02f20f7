/**
 * Runs an import plan against the service through the client: up to `concurrency` batches at once,
 * each sent only after every batch in its `after` list has been answered (see cutter.ts for why that
 * order is enough), lowest batch index first among those ready. A batch whose items failed still
 * counts as answered: the failures are reported, and what waits for it goes on. A 401/403 or the
 * abort signal stops the run; batches not sent are reported as not sent.
 */
import type { BulkResult, ItemFailure, OcelogClient } from '@ocelog/client'
import type { PlannedBatch, PlannedUpserts } from './plan.js'
import { messageOf } from '../../core/errors.js'
import { joinKey } from '../../core/keys.js'

/** One item the service did not record. */
export interface ImportFailure {
  kind: 'event' | 'object'
  /** The log's event id, or `<object id> @ <time>` for an upsert. */
  source: string
  failure: ItemFailure<unknown>['kind']
  reason: string
  status: number | null
}

/** Progress after each batch (counts so far). */
export interface ImportProgress {
  batchesDone: number
  batches: number
  eventsSent: number
  eventsTotal: number
  upsertsSent: number
  upsertsTotal: number
  failed: number
}

/**
 * Batches in flight at once by default (`ocelog import --concurrency`). Measured with a generated
 * log of 200,000 events on the embedded default (bench/HISTORY.md#round-13-16-batches-in-flight-and-the-projector-split-by-read-model): 16 imported about 7%
 * faster than 4 over the whole file, in three alternating pairs of runs, and 32 no faster than 16.
 */
export const DEFAULT_IMPORT_CONCURRENCY = 16

export interface RunOptions {
  /** Batches in flight at once (default DEFAULT_IMPORT_CONCURRENCY). */
  concurrency?: number
  signal?: AbortSignal
  onProgress?: (progress: ImportProgress) => void
}

export interface RunResult {
  /** `alreadyRecorded`: accepted items the service had recorded before (their idempotency keys were known: a re-run). */
  events: { accepted: number; failed: number; alreadyRecorded: number }
  upserts: { accepted: number; failed: number; alreadyRecorded: number }
  /** Distinct objects (type, id) with at least one accepted upsert. */
  objectsAccepted: number
  /** O2O relationships in accepted upserts. */
  relationshipsAccepted: number
  /** Every item not recorded, in plan order. */
  failures: ImportFailure[]
  /** HTTP requests made, retries included. */
  requests: number
  /** Batches in the plan. */
  batches: number
  /** Why the run stopped early, or null when every batch was sent. */
  aborted: string | null
}

async function sendBatch(client: OcelogClient, batch: PlannedBatch, signal: AbortSignal | undefined): Promise<BulkResult<unknown, unknown>> {
  const options = signal === undefined ? {} : { signal }
  return batch.kind === 'events' ? client.sendEvents(batch.items, options) : client.upsertObjects(batch.items, options)
}

/** Inserts `value` into the ascending array `sorted`. */
function insertSorted(sorted: number[], value: number): void {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((sorted[mid] ?? 0) < value) lo = mid + 1
    else hi = mid
  }
  sorted.splice(lo, 0, value)
}

/**
 * What runPlan sends: the batches in a valid order (an in-memory ImportPlan, or a staged plan's
 * `batches()`), and the totals (read at each progress report, so a plan still being planned may
 * grow them).
 */
export interface RunnablePlan {
  /** A null is a batch not planned yet: runPlan asks again after the event loop's next turn. */
  batches: Iterable<PlannedBatch | null>
  events: number
  upserts: number
  /**
   * Plans what is left at once (StagedPlanner.step to the end): called when the run stopped early, so
   * that every batch it never sent can be listed as not sent.
   */
  complete?: () => void
}

/** Batches read ahead of the oldest one not yet answered (bounds memory; a full window always holds a ready batch, its lowest). */
const WINDOW = 64

/**
 * The batches of a plan read and not yet answered (at most WINDOW), each with the count of its
 * unanswered `after` and the batches waiting for it, and those ready to send (`ready`, ascending).
 */
class BatchWindow {
  private readonly source: Iterator<PlannedBatch | null>
  /** Batches read and not yet answered, by index; `waitingOn` counts their unanswered `after`. */
  private readonly open = new Map<number, { batch: PlannedBatch; waitingOn: number; dependents: number[] }>()
  private readonly ready: number[] = []
  /** Batches read so far (the next one's index). */
  read = 0
  /** Whether the plan has no batch left to read. */
  exhausted = false

  constructor(batches: Iterable<PlannedBatch | null>) {
    this.source = batches[Symbol.iterator]()
  }

  /** Reads batches until the window is full, the plan ends, or its next batch is not planned yet. */
  pull(): void {
    while (!this.exhausted && this.open.size < WINDOW) {
      const next = this.source.next()
      if (next.done === true) {
        this.exhausted = true
        break
      }
      // Not planned yet: pump asks again later.
      if (next.value === null) break
      const index = this.read++
      let waitingOn = 0
      for (const a of next.value.after) {
        const dep = this.open.get(a)
        if (dep !== undefined) {
          dep.dependents.push(index)
          waitingOn += 1
        }
      }
      this.open.set(index, { batch: next.value, waitingOn, dependents: [] })
      if (waitingOn === 0) insertSorted(this.ready, index)
    }
  }

  /** Whether a batch is ready to send. */
  hasReady(): boolean {
    return this.ready.length > 0
  }

  /** Takes the lowest ready batch, which stays in the window until `answered`; undefined when none is. */
  take(): { index: number; batch: PlannedBatch } | undefined {
    const index = this.ready.shift()
    const batch = index === undefined ? undefined : this.open.get(index)?.batch
    return index === undefined || batch === undefined ? undefined : { index, batch }
  }

  /** Drops answered batch `index`; the batches that waited only for it become ready. */
  answered(index: number): void {
    const entry = this.open.get(index)
    this.open.delete(index)
    for (const d of entry?.dependents ?? []) {
      const dependent = this.open.get(d)
      if (dependent === undefined) continue
      dependent.waitingOn -= 1
      if (dependent.waitingOn === 0) insertSorted(this.ready, d)
    }
  }

  /**
   * Once the run stopped: what was read but not sent, then what was never read (planned at once by
   * `plan.complete` when the plan is not planned to its end), each with its index.
   */
  *unsent(plan: Pick<RunnablePlan, 'complete'>): Generator<[number, PlannedBatch]> {
    for (const [index, { batch }] of this.open) yield [index, batch]
    let completed = false
    for (let next = this.source.next(); next.done !== true; next = this.source.next()) {
      if (next.value !== null) yield [this.read++, next.value]
      else if (completed || plan.complete === undefined) break
      else {
        plan.complete()
        completed = true
      }
    }
  }
}

/** The answers of a run's batches, counted into a RunResult as they come. */
class Answers {
  readonly result: RunResult = {
    events: { accepted: 0, failed: 0, alreadyRecorded: 0 },
    upserts: { accepted: 0, failed: 0, alreadyRecorded: 0 },
    objectsAccepted: 0,
    relationshipsAccepted: 0,
    failures: [],
    requests: 0,
    batches: 0,
    aborted: null,
  }
  // Objects are counted by their first upsert, and by a later one when every earlier one failed (an
  // object's upserts are answered in order: one batch, or batches that wait for each other), so only
  // the objects whose upserts failed so far are held.
  private objectsAccepted = 0
  private readonly failedSoFar = new Set<string>()
  private readonly failuresByBatch = new Map<number, ImportFailure[]>()

  private upsertFailed(batch: PlannedUpserts, i: number): void {
    const item = batch.items[i]
    if (item !== undefined && batch.firsts[i] === true) this.failedSoFar.add(joinKey(item.type, item.id))
  }

  /** Counts the answer `r` to batch `index`, or the client's `error` when `r` is null. */
  record(index: number, batch: PlannedBatch, r: BulkResult<unknown, unknown> | null, error?: unknown): void {
    const result = this.result
    const kind = batch.kind === 'events' ? 'event' : 'object'
    const counts = batch.kind === 'events' ? result.events : result.upserts
    if (r === null) {
      // The client reports item failures in its result; an exception here is a bug, reported as one.
      const reason = `client error: ${messageOf(error)}`
      counts.failed += batch.items.length
      this.failuresByBatch.set(
        index,
        batch.sources.map((source) => ({ kind, source, failure: 'protocol', reason, status: null })),
      )
      if (batch.kind === 'objects') {
        for (let i = 0; i < batch.items.length; i++) this.upsertFailed(batch, i)
      }
      return
    }
    counts.accepted += r.accepted.length
    counts.alreadyRecorded += r.duplicates
    counts.failed += r.failures.length
    result.requests += r.requests
    if (r.failures.length > 0) {
      this.failuresByBatch.set(
        index,
        r.failures.map((f) => ({
          kind,
          source: batch.sources[f.index] ?? `#${String(f.index)}`,
          failure: f.kind,
          reason: f.reason,
          status: f.status,
        })),
      )
    }
    if (r.aborted !== null) result.aborted ??= r.aborted
    if (batch.kind === 'objects') {
      for (const f of r.failures) this.upsertFailed(batch, f.index)
      for (const a of r.accepted) {
        const item = batch.items[a.index]
        if (item === undefined) continue
        const key = joinKey(item.type, item.id)
        if (batch.firsts[a.index] === true || this.failedSoFar.delete(key)) this.objectsAccepted += 1
        result.relationshipsAccepted += item.relationships?.length ?? 0
      }
    }
  }

  /** Counts batch `index` as not sent (the run stopped before it). */
  notSent(index: number, batch: PlannedBatch): void {
    const result = this.result
    const kind = batch.kind === 'events' ? 'event' : 'object'
    const counts = batch.kind === 'events' ? result.events : result.upserts
    counts.failed += batch.items.length
    this.failuresByBatch.set(
      index,
      batch.sources.map((source) => ({ kind, source, failure: 'aborted', reason: `not sent: ${result.aborted ?? 'the run stopped'}`, status: null })),
    )
  }

  /** The result of a run of `batches` batches. */
  finish(batches: number): RunResult {
    const result = this.result
    result.failures = [...this.failuresByBatch.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, f]) => f)
    result.objectsAccepted = this.objectsAccepted
    result.batches = batches
    return result
  }
}

/**
 * Sends `plan` with `client`, reading its batches as it goes (at most WINDOW ahead of the oldest
 * unanswered one).
 * @returns what was accepted and what failed; never throws for a failed item or request.
 */
export async function runPlan(plan: RunnablePlan, client: OcelogClient, options: RunOptions = {}): Promise<RunResult> {
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_IMPORT_CONCURRENCY)
  const window = new BatchWindow(plan.batches)
  const answers = new Answers()
  const result = answers.result
  let done = 0
  const progress = (): ImportProgress => ({
    batchesDone: done,
    batches: window.read,
    eventsSent: result.events.accepted,
    eventsTotal: plan.events,
    upsertsSent: result.upserts.accepted,
    upsertsTotal: plan.upserts,
    failed: result.events.failed + result.upserts.failed,
  })

  await new Promise<void>((resolve) => {
    let inFlight = 0
    const pump = () => {
      if (options.signal?.aborted === true) result.aborted ??= 'aborted by the caller'
      if (result.aborted === null) window.pull()
      while (result.aborted === null && inFlight < concurrency && window.hasReady()) {
        const next = window.take()
        if (next === undefined) break
        const { index, batch } = next
        inFlight += 1
        void sendBatch(client, batch, options.signal).then(
          (r) => finish(index, batch, r),
          (error: unknown) => finish(index, batch, null, error),
        )
      }
      if (inFlight > 0) return
      // Nothing in flight: done, stopped, or waiting for the plan (asked again after the event loop's next turn, when planning has gone on).
      if (window.exhausted || result.aborted !== null) resolve()
      else setImmediate(pump)
    }
    const finish = (index: number, batch: PlannedBatch, r: BulkResult<unknown, unknown> | null, error?: unknown) => {
      inFlight -= 1
      done += 1
      answers.record(index, batch, r, error)
      window.answered(index)
      options.onProgress?.(progress())
      pump()
    }
    pump()
  })

  // What was read but not sent, then what was never read, is reported as not sent.
  for (const [index, batch] of window.unsent(plan)) answers.notSent(index, batch)
  return answers.finish(window.read)
}
