/**
 * The projector (the runner of the projections in projections/): keeps the read models from the
 * log (README § Read models). Each projection has its own checkpoint, stored with its version; the
 * projector reads the log from the lowest of them and folds each record only into the projections
 * whose checkpoint is below it, one slice per projection (pure, projections/registry.ts). A run's
 * slices are applied with a compare-and-set of every checkpoint in one step, so a crash or restart
 * resumes where the last applied batch ended, and a record applied twice changes nothing. At start,
 * a projection whose stored version differs from its code's is cleared and rebuilt alone.
 *
 * Several projectors can share the work by dataset: shard i of n takes the datasets whose
 * FNV-1a hash mod n is i, keeps its own checkpoints (`<projection>-<i>-of-<n>`), and skips the rest.
 *
 * Failures (see `run`): an engine that is away is waited for without limit, with capped
 * exponential back-off; a record that cannot be applied (a poison record) is retried a bounded
 * number of times, then that projection stops with a ProjectionStoppedError naming the record,
 * recorded in the store for `ocelog status`. Other projectors (other shards) go on.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { EventLog } from '../ports/event-log.js'
import { messageOf, CheckpointConflictError, EngineUnavailableError, LogUnavailableError, ProjectionStoppedError } from '../core/errors.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import type { StoredRecord } from '../schemas/records.js'
import type { ProjectionState } from '../schemas/projections.js'
import { chunkByWeight } from '../core/chunk.js'
import { foldBatch, PROJECTIONS, type ProjectionCursor } from '../../projections/registry.js'
import { PROJECTION_NAMES, type ProjectionName, sliceOf } from '../core/read-model-changes.js'
import { checkpointName, parseCheckpointName, projectionBase, projectionCheckpoint, READ_MODELS_PROJECTION } from './checkpoints.js'
import { datasetHash, type Shard } from './shards.js'
import { type RunnerName, runnerProjections } from './runners.js'

/** Re-exported for the projector's callers: sharding is part of its options. */
export { datasetHash, type Shard }

export interface ProjectorOptions {
  /**
   * The projector's name (default `read-models`), in logs and stops; a projector of another name
   * keeps checkpoints of its own (`<name>.<projection>`, src/projector/checkpoints.ts).
   */
  name?: string
  /**
   * Most records read from the log at once (default 2000). A read asks for fewer when the records
   * are costly: about `maxBatchCost` units of the records the last read returned (readCount), so
   * that one read of wide events holds about as much in memory as one transaction applies.
   */
  maxBatch?: number
  /**
   * Largest work, in `recordCost` units, applied in one transaction (default 16000: about 4,000
   * events with 3 objects, or 310 events with 50 objects). Bounds the memory of one batch and
   * how long one apply holds the thread, which the API shares with the projector on the embedded
   * default.
   */
  maxBatchCost?: number
  /**
   * Near the head of the log (under live load), runs are cut at this cost instead (default 1000:
   * about 250 events with 3 objects), and the HTTP server gets the thread between them.
   */
  headRunCost?: number
  /**
   * After applying what had reached the head of the log, wait this long (ms, default 50) before
   * reading on, so that the next transaction takes what arrived meanwhile at once: fewer, larger
   * commits under steady load, for at most this much more delay of the read models.
   */
  settleMs?: number
  shard?: Shard
  /**
   * Apply only this runner's projections (src/projector/runners.ts; default: every projection).
   * Its checkpoints and stops are those of its projections, so runners started apart and one
   * projector of every projection keep the same read models.
   */
  runner?: RunnerName
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>
  /** Back-off of `run` after a failure. */
  retry?: RetryOptions
  /** Waits `ms`, or less when `signal` aborts (default: a timer). Tests pass one that records the waits. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /**
   * Whether an error means an engine is away (wait and retry without limit) rather than a record
   * that cannot be applied. Ocelog's LogUnavailableError and EngineUnavailableError always are;
   * this adds the engines' own errors (from the composition root, which knows the engines).
   */
  isUnavailable?: (error: unknown) => boolean
}

export interface RetryOptions {
  /** First wait after a failure, ms (default 100); each further wait doubles. */
  initialDelayMs?: number
  /** Longest wait, ms (default 5000). */
  maxDelayMs?: number
  /** Attempts at one record before its projection stops (default 5: four waits, 100 + 200 + 400 + 800 ms). */
  maxAttempts?: number
}

/** Waits `ms`, or until `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** A record of a run could not be applied: `cause` is what applying it alone threw. */
class RecordFailure extends Error {
  override readonly name = 'RecordFailure'
  constructor(
    readonly record: StoredRecord,
    override readonly cause: unknown,
  ) {
    super(messageOf(cause))
  }
}

/**
 * Work units of one record for the read models, linear in its objects: 1 for the record, plus 1 per
 * object of an event (its E2O row and object upsert), so 50 objects cost 51 units and 3 cost 4;
 * an object upsert costs 2.
 */
export function recordCost(record: StoredRecord): number {
  if (record.type !== 'EventRecorded') return 2
  return 1 + record.data.objects.length
}

/**
 * The units per record that a projector's first read assumes (recordCost of an event with 15
 * objects), before it has seen the log's records: its first read is then `maxBatchCost / 16`
 * records at most.
 */
const FIRST_READ_UNITS = 16

/**
 * How many records to ask of the log's next read: about `maxCost` units (recordCost) of records like
 * `last` (the records the last read returned), at least 1 and at most `maxCount`. A read of events
 * with 3 objects then asks for up to `maxCost / 4` of them, and one of events with 50 objects for
 * `maxCost / 51`: the decoded records one read holds in memory stay about one transaction's whatever
 * the events' width (docs/architecture.md#projection-runners-and-leases).
 */
export function readCount(last: readonly StoredRecord[], maxCost: number, maxCount: number): number {
  let units = 0
  for (const record of last) units += recordCost(record)
  const perRecord = last.length === 0 ? FIRST_READ_UNITS : units / last.length
  return Math.max(1, Math.min(maxCount, Math.floor(maxCost / perRecord)))
}

/** Splits records (log order kept) into runs of at most `maxCost` units; a record costlier than that runs alone. */
export function splitByCost(records: readonly StoredRecord[], maxCost: number): StoredRecord[][] {
  return chunkByWeight(records, recordCost, maxCost)
}

/**
 * Read models ahead of their log: projections whose checkpoint is past the log's head. That happens
 * when the log lost its last records and the read models kept what they had applied of them: an
 * older copy of ocelog.db put back beside newer read models, or a disk that acknowledged an
 * fdatasync it did not keep (the log's reads return durable records only, so a power cut alone
 * cannot do it: src/ports/event-log.ts). New appends would then take the lost positions again,
 * and a projector already past them would never apply them. When any projection is ahead, the store is reset (every read model,
 * checkpoint and stop dropped), so the projector rebuilds the read models from the log.
 * @returns the log's head (null for an empty log) and the projections that were ahead (empty when
 *   none was, and nothing was reset).
 */
export async function resetReadModelsAheadOfLog(
  log: Pick<EventLog, 'lastPosition'>,
  store: Pick<ReadModelStore, 'projections' | 'reset'>,
): Promise<{ head: number | null; ahead: ProjectionState[] }> {
  const head = await log.lastPosition()
  const ahead = (await store.projections()).filter((p) => p.position !== null && p.position > (head ?? 0))
  if (ahead.length > 0) await store.reset()
  return { head, ahead }
}

/**
 * Resets read models that are ahead of the log (resetReadModelsAheadOfLog), with a warning naming
 * the checkpoints and the head: the projector then rebuilds them from the log.
 */
export async function warnAndResetIfAhead(
  log: Pick<EventLog, 'lastPosition'>,
  store: Pick<ReadModelStore, 'projections' | 'reset'>,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const { head, ahead } = await resetReadModelsAheadOfLog(log, store)
  if (ahead.length === 0) return
  const names = ahead.map((p) => `${p.projection} at ${String(p.position)}`).join(', ')
  logger.warn(
    { head, ahead },
    `read models are ahead of the log (${names}; the log's head is ${String(head ?? 'empty')}): the log lost its last records, so the read models are rebuilt from it`,
  )
}

export class Projector {
  /** The projector's name, with its shard's suffix: in logs and stops. */
  readonly name: string
  private readonly projectorName: string
  private readonly maxBatch: number
  private readonly maxBatchCost: number
  private readonly headRunCost: number
  private readonly settleMs: number
  private readonly shard: Shard | undefined
  /** Emits `applied` (position: number) after every applied batch. */
  readonly events = new EventEmitter()
  /** Each projection's checkpoint name, for this projector and shard. */
  private readonly checkpoints: ReadonlyMap<ProjectionName, string>
  /** Each projection's last applied position, as this projector last read or moved it (null: none). */
  private readonly applied = new Map<ProjectionName, number | null>()
  /** Whether the stored versions were compared with the code's (once per Projector: at its start). */
  private versionsChecked = false
  private appliedRecords = 0
  private stoppedWith: ProjectionStoppedError | null = null
  private readonly retry: Required<RetryOptions>
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadModelStore,
    private readonly options: ProjectorOptions = {},
  ) {
    this.shard = options.shard
    const projector = options.name ?? READ_MODELS_PROJECTION
    this.name = checkpointName(options.runner === undefined ? projector : `${projector}/${options.runner}`, this.shard)
    this.projectorName = projector
    const projections = options.runner === undefined ? PROJECTION_NAMES : runnerProjections(options.runner)
    this.checkpoints = new Map(projections.map((p) => [p, projectionCheckpoint(projector, p, this.shard)]))
    this.maxBatch = options.maxBatch ?? 2000
    this.maxBatchCost = options.maxBatchCost ?? 16000
    this.headRunCost = options.headRunCost ?? 1000
    this.settleMs = options.settleMs ?? 50
    this.retry = { initialDelayMs: 100, maxDelayMs: 5000, maxAttempts: 5, ...options.retry }
    this.sleep = options.sleep ?? sleepUnlessAborted
    this.events.setMaxListeners(0)
  }

  /** Why `run` stopped this projection, or null while it has not. */
  get stopped(): ProjectionStoppedError | null {
    return this.stoppedWith
  }

  private unavailable(error: unknown): boolean {
    return error instanceof LogUnavailableError || error instanceof EngineUnavailableError || this.options.isUnavailable?.(error) === true
  }

  /** The lowest checkpoint of its projections: every projection has applied the log up to here (null: one has applied nothing). */
  get position(): number | null {
    let lowest: number | null = null
    for (const name of this.checkpoints.keys()) {
      const at = this.applied.get(name) ?? null
      if (at === null) return null
      if (lowest === null || at < lowest) lowest = at
    }
    return lowest
  }

  /** The checkpoint name of each projection this projector keeps. */
  get checkpointNames(): string[] {
    return [...this.checkpoints.values()]
  }

  /**
   * Reads every projection's checkpoint. The first time (the projector's start), a projection
   * whose stored version differs from its code's is cleared, its checkpoints on every shard
   * dropped (ReadModelStore.clearProjection), so that it alone is rebuilt from the log.
   */
  private async loadCheckpoints(): Promise<void> {
    let states = await this.store.projections()
    if (!this.versionsChecked) {
      let cleared = false
      for (const [projection, checkpoint] of this.checkpoints) {
        const { version } = PROJECTIONS[projection]
        const stored = states.find((s) => s.projection === checkpoint)?.version ?? null
        if (stored === null || stored === version) continue
        const base = projectionBase(this.projectorName, projection)
        const names = states.map((s) => s.projection).filter((n) => parseCheckpointName(n).base === base)
        this.options.logger?.warn(
          { projection, storedVersion: stored, version, checkpoints: names },
          `projection ${projection}: the read models hold version ${String(stored)} and this build writes version ${String(version)}; rebuilding ${projection} alone from the log`,
        )
        await this.store.clearProjection(projection, names)
        cleared = true
      }
      this.versionsChecked = true
      if (cleared) states = await this.store.projections()
    }
    for (const [projection, checkpoint] of this.checkpoints) this.applied.set(projection, states.find((s) => s.projection === checkpoint)?.position ?? null)
  }

  /** Records applied since this Projector was made. */
  get recordsApplied(): number {
    return this.appliedRecords
  }

  private mine(record: StoredRecord): boolean {
    return this.shard === undefined || this.shard.count === 1 || datasetHash(record.datasetId) % this.shard.count === this.shard.index
  }

  private async applyRun(run: readonly StoredRecord[]): Promise<void> {
    const last = run[run.length - 1]
    if (last === undefined) return
    const cursors: { [K in ProjectionName]?: ProjectionCursor } = {}
    for (const [projection, checkpoint] of this.checkpoints) cursors[projection] = { checkpoint, expected: this.applied.get(projection) ?? null }
    const batch = foldBatch(
      run.filter((r) => this.mine(r)),
      cursors,
      last.position,
    )
    const moved = PROJECTION_NAMES.filter((p) => sliceOf(batch.slices, p) !== undefined)
    if (moved.length === 0) return
    await this.store.apply(batch)
    for (const p of moved) this.applied.set(p, last.position)
    this.appliedRecords += batch.recordCount
    this.events.emit('applied', last.position)
  }

  /**
   * Applies a run; when it fails for a reason other than an away engine or a moved checkpoint,
   * applies its records one by one, so the records before the failing one are kept and the
   * failure names that record (RecordFailure).
   */
  private async applyIsolating(run: readonly StoredRecord[]): Promise<void> {
    try {
      await this.applyRun(run)
      return
    } catch (error) {
      if (error instanceof CheckpointConflictError || this.unavailable(error)) throw error
      const [only] = run
      if (run.length === 1 && only !== undefined) throw new RecordFailure(only, error)
    }
    for (const record of run) {
      try {
        await this.applyRun([record])
      } catch (error) {
        if (error instanceof CheckpointConflictError || this.unavailable(error)) throw error
        throw new RecordFailure(record, error)
      }
    }
  }

  /**
   * Applies a batch read from the log in runs of at most `runCost`, one transaction each. With
   * `yieldBetween`, other work on this thread (the HTTP server) runs after each run.
   */
  private async applyBatch(batch: readonly StoredRecord[], runCost: number, yieldBetween: boolean): Promise<void> {
    for (const run of splitByCost(batch, runCost)) {
      await this.applyIsolating(run)
      // An embedded log and store answer without I/O, so this would run on microtasks alone and
      // starve the HTTP server in the same process until it caught up.
      if (yieldBetween) await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }

  /**
   * Applies everything the log holds now, then returns the number of records applied. A recorded
   * stop of this projection is cleared once the checkpoint has passed its record.
   * @throws ProjectionStoppedError (attempts 1, not recorded in the store) naming a record it cannot apply.
   */
  async catchUp(): Promise<number> {
    await this.loadCheckpoints()
    const before = this.appliedRecords
    let count = readCount([], this.maxBatchCost, this.maxBatch)
    for (;;) {
      const batch = await this.log.readAll(this.position, count)
      if (batch.length === 0) {
        await this.store.atHead?.()
        for (const state of await this.store.projections()) {
          const stop = state.stopped
          if (stop === null || !this.stopNames().includes(state.projection)) continue
          if (stop.position === null || (this.position ?? 0) >= stop.position) await this.store.clearStop(state.projection)
        }
        return this.appliedRecords - before
      }
      try {
        await this.applyBatch(batch, this.maxBatchCost, false)
      } catch (error) {
        if (error instanceof RecordFailure) throw this.stopError(error.record, error.cause, 1)
        throw error
      }
      count = readCount(batch, this.maxBatchCost, this.maxBatch)
    }
  }

  private stopError(record: StoredRecord | null, cause: unknown, attempts: number): ProjectionStoppedError {
    return new ProjectionStoppedError({
      projection: this.name,
      position: record?.position ?? null,
      stream: record?.stream ?? null,
      cause: messageOf(cause),
      attempts,
      stopped_at: new Date().toISOString(),
    })
  }

  /**
   * Drops the read models and applies the whole log again. Returns the number of records applied.
   * A runner (ProjectorOptions.runner) drops only its own projections, with their checkpoints and
   * stops on every shard: the other runners' read models and checkpoints stay.
   */
  async rebuild(): Promise<number> {
    if (this.checkpoints.size === PROJECTION_NAMES.length) await this.store.reset()
    else {
      const states = await this.store.projections()
      for (const projection of this.checkpoints.keys()) {
        const base = projectionBase(this.projectorName, projection)
        await this.store.clearProjection(
          projection,
          states.map((s) => s.projection).filter((n) => parseCheckpointName(n).base === base),
        )
      }
    }
    this.versionsChecked = true
    return this.catchUp()
  }

  /**
   * Follows the log until `signal` aborts (then resolves null), or until this projection stops
   * (then resolves the ProjectionStoppedError, also in `stopped`, logged and recorded in the store).
   * Starting clears an earlier stop of this name: a restart tries the record again.
   *
   * After a failure it waits `initialDelayMs`, doubling each time up to `maxDelayMs`, and resumes
   * from the stored checkpoint:
   * - a moved checkpoint (another worker) resumes at once;
   * - an engine away (LogUnavailableError, EngineUnavailableError, `isUnavailable`) is retried
   *   without limit;
   * - any other failure is pinned to the record that causes it (the records before it are applied)
   *   and retried; after `maxAttempts` attempts at that record, the projection stops.
   */
  async run(signal: AbortSignal): Promise<ProjectionStoppedError | null> {
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.retry
    let delay = initialDelayMs
    let cleared = false
    /** The record that keeps failing (null: it failed before it was read) and the attempts at it; 0 attempts: none fails. */
    const failing: { record: StoredRecord | null; attempts: number } = { record: null, attempts: 0 }
    while (!signal.aborted) {
      try {
        if (!cleared) {
          for (const name of this.stopNames()) await this.store.clearStop(name)
          cleared = true
        }
        await this.loadCheckpoints()
        // Already at the head (nothing to tail yet): the store's deferred work is due now.
        if (this.store.atHead !== undefined && ((await this.log.lastPosition()) ?? 0) <= (this.position ?? 0)) await this.store.atHead()
        // The tail reads `maxBatch` before each read (TailOptions): each read asks for readCount.
        const reads = { signal, maxBatch: readCount([], this.maxBatchCost, this.maxBatch) }
        for await (const batch of this.log.tail(this.position, reads)) {
          // Near the head (a short batch), small runs keep the HTTP server's latency low, then settle.
          // Behind (a full batch), large runs, with the HTTP server between them: for events with a few
          // objects one run takes a whole batch, about what ingest appends in a turn, so the two keep
          // pace on the thread they share; events with many objects cost far more to project than to
          // append, and then the read models fall behind rather than the API stalling.
          const behind = batch.length >= reads.maxBatch
          reads.maxBatch = readCount(batch, this.maxBatchCost, this.maxBatch)
          await this.applyBatch(batch, behind ? this.maxBatchCost : this.headRunCost, true)
          // Back to the first delay once past the failing record (records before it are applied between attempts).
          if (failing.record === null || (this.position ?? 0) >= failing.record.position) failing.attempts = 0
          if (failing.attempts === 0) delay = initialDelayMs
          if (!behind) await this.store.atHead?.()
          if (!behind && this.settleMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, this.settleMs))
        }
      } catch (error) {
        if (signal.aborted) return null
        if (error instanceof CheckpointConflictError) {
          this.options.logger?.warn({ err: error }, `projector ${this.name}: checkpoint moved; resuming from it`)
          continue
        }
        if (this.unavailable(error)) {
          this.options.logger?.error({ err: error }, `projector ${this.name}: an engine is unavailable; retrying in ${String(delay)} ms`)
        } else {
          const record = error instanceof RecordFailure ? error.record : null
          const cause = error instanceof RecordFailure ? error.cause : error
          const again = failing.attempts > 0 && (failing.record?.position ?? null) === (record?.position ?? null)
          failing.attempts = again ? failing.attempts + 1 : 1
          failing.record = record
          if (failing.attempts >= maxAttempts) return this.stop(this.stopError(record, cause, failing.attempts))
          const at = record === null ? 'reading the log' : `the record at position ${String(record.position)} of stream ${record.stream}`
          this.options.logger?.error(
            { err: cause, position: record?.position ?? null, stream: record?.stream ?? null, attempt: failing.attempts },
            `projector ${this.name}: ${at} failed (attempt ${String(failing.attempts)} of ${String(maxAttempts)}); retrying in ${String(delay)} ms`,
          )
        }
        await this.sleep(delay, signal)
        delay = Math.min(delay * 2, maxDelayMs)
      }
    }
    return null
  }

  /** The names under which this projector's stops are kept: each projection's checkpoint, and its own name (stops of earlier versions). */
  private stopNames(): string[] {
    return [...this.checkpoints.values(), this.name]
  }

  /** Stops this projector's projections: logs the error and records it in the store under each projection's checkpoint (best effort: the log has it either way). */
  private async stop(error: ProjectionStoppedError): Promise<ProjectionStoppedError> {
    this.stoppedWith = error
    this.options.logger?.error({ err: error, ...error.stop }, error.message)
    try {
      for (const projection of this.checkpoints.values()) await this.store.recordStop({ ...error.stop, projection })
    } catch (recordError) {
      this.options.logger?.error({ err: recordError }, `projector ${this.name}: the stop could not be recorded in the read-model store`)
    }
    return error
  }
}
