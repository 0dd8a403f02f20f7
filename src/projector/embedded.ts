/**
 * The embedded default's projector: one worker thread per projection runner (worker.ts, entered by
 * src/app/projector-thread.ts; runners.ts), beside the API (README § Architecture). Each runner writes
 * a read-models file of its own (read-models-database.ts), so the runners apply side by side, one
 * per core. The API thread tells every worker of each commit of the log with a message, so the read
 * models follow at once without a poll, and it never runs projection code itself. `ocelog project`
 * runs it too, beside `serve --no-projector` in another process: there no commit wakes the workers,
 * and each worker's tail polls the log (SqliteEventLog's `pollMs`).
 *
 * A worker that crashes (an uncaught error, an exit it did not ask for) is logged and started
 * again after a back-off: 100 ms, doubling up to 30 s, back to 100 ms once a worker has run for a
 * minute; the other runners' workers go on. A runner that stopped on a record it cannot apply is not
 * restarted: its worker has logged and recorded the stop (`ocelog status`), the other runners go on,
 * and a restart of the service tries the record again.
 */
import { getHeapStatistics } from 'node:v8'
import { type ResourceLimits, Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import { RUNNER_NAMES, type RunnerName } from './runners.js'
import type { FromWorker, ProjectorWorkerData, ToWorker } from './worker.js'

/**
 * A log that tells of its commits and lets another thread checkpoint its WAL (SqliteEventLog on the
 * embedded default): the capability `Backends.commitFeed` that makes `serve` run this projector.
 */
export interface CommitFeed {
  /** Calls `listener` after each durable group commit; returns the function that removes it. */
  onCommit(listener: () => void): () => void
  /** Every record at or below this position is known to be on disk (0: none known yet). */
  readonly durablePosition: number
  /** Sets this connection's WAL auto-checkpoint, in pages (0: never; another connection checkpoints). */
  walAutocheckpoint(pages: number): void
}

export interface EmbeddedProjectorOptions {
  dataDir: string
  logLevel: string
  logger: Pick<Logger, 'info' | 'warn' | 'error'>
  /**
   * The API thread's log: its commits wake the worker (none in `ocelog project`: the workers poll), and while a worker runs, the log leaves its
   * WAL checkpoints to the worker (`walAutocheckpoint(0)`), so that no request waits for one;
   * SQLite's default (1,000 pages) is back whenever no worker runs.
   */
  log: CommitFeed
  /** The worker thread's entry module (default: the service's, src/app/projector-thread.ts, beside this module's folder). */
  entry?: URL
  /** First back-off after a crash, ms (default 100); it doubles up to `maxRestartDelayMs` (default 30,000). */
  restartDelayMs?: number
  maxRestartDelayMs?: number
  /** A worker found a read-models file damaged and stopped; the callee moves the files aside and calls `resume` (read-models-recovery.ts). */
  onReadModelsDamaged?: (message: string) => void
  /** The runners, one worker thread each (default: every runner, RUNNER_NAMES). */
  runners?: readonly RunnerName[]
  /** A runner stopped on a record it cannot apply (its worker logged the stop and exits; it is not restarted): `message` is the stop's. */
  onRunnerStopped?: (runner: RunnerName, message: string) => void
}

/**
 * The old-generation ceiling of the projector worker, in MiB: the API thread's heap limit (V8's
 * `heap_size_limit`, which `--max-old-space-size` sets, young generation included), so that the
 * worker keeps the footprint the process was started for; V8's default when no flag was given.
 * Under `--max-old-space-size` V8 gives every isolate that ceiling and ignores the worker's own
 * `maxOldGenerationSizeMb` (checked on Node 20: a worker asked for 512 or 2,048 MiB reported a
 * `heap_size_limit` of 1,048 MiB under `--max-old-space-size=1024`), so this value matters only
 * without the flag. The young generation (WORKER_YOUNG_GENERATION_MB) is the worker's own either way.
 */
export function workerHeapMb(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)
}

/**
 * The young generation of the projector worker, in MiB (V8's `maxYoungGenerationSizeMb`; its
 * default beside a 1 GiB old generation is 48). The worker's garbage is a read of records and the
 * run folded from it, dead once the run is applied, so a smaller nursery costs it little and keeps
 * the process's footprint lower: 24 MiB took about 25 MB off the bench's worst-case peak RSS
 * with the projector as fast, where 12 slowed its catch-up in the batch scenario
 * (bench/HISTORY.md#figures-behind-the-codes-settings).
 */
export const WORKER_YOUNG_GENERATION_MB = 24

/** How long `stop` waits for the worker to finish its run before it terminates it, ms. */
const STOP_TIMEOUT_MS = 10_000
/** SQLite's default WAL auto-checkpoint, in pages. */
const DEFAULT_WAL_AUTOCHECKPOINT = 1000
/** A worker that ran this long resets the back-off. */
const HEALTHY_MS = 60_000

/**
 * One runner's worker thread: started, restarted after a crash with a back-off, paused and stopped
 * by EmbeddedProjector.
 */
class RunnerWorker {
  worker: Worker | null = null
  private startedAt = 0
  private delay: number
  private restartTimer: NodeJS.Timeout | null = null
  private exitedNow: (() => void) | null = null
  /** Workers started (the first one included). */
  starts = 0
  /** The runner's stop message, once it stopped on a record it cannot apply. */
  stoppedWith: string | null = null

  constructor(
    private readonly owner: EmbeddedProjector,
    private readonly options: EmbeddedProjectorOptions,
    readonly runner: RunnerName,
  ) {
    this.delay = options.restartDelayMs ?? 100
  }

  start(): void {
    if (this.owner.stopping || this.owner.paused || this.worker !== null || this.stoppedWith !== null) return
    // Every runner's thread checkpoints the log's WAL (a PASSIVE checkpoint finds little left after
    // another's), so that the WAL stays bounded while any runner runs, one stopped on a bad record or not.
    const data: ProjectorWorkerData = { dataDir: this.options.dataDir, logLevel: this.options.logLevel, runner: this.runner, checkpointsLog: true }
    const worker = new Worker(this.options.entry ?? new URL('../app/projector-thread.js', import.meta.url), {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(), maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    })
    this.worker = worker
    this.starts += 1
    this.startedAt = Date.now()
    this.owner.workerStarted()
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'projection-stopped') {
        this.stoppedWith = message.message
        this.options.onRunnerStopped?.(this.runner, message.message)
      }
      if (message.type === 'read-models-damaged') this.owner.damaged(message.message)
    })
    worker.on('error', (error) => this.options.logger.error({ err: error, runner: this.runner }, `projector worker ${this.runner}: crashed`))
    worker.on('exit', (code) => {
      this.worker = null
      this.owner.workerExited()
      this.exitedNow?.()
      if (this.owner.stopping || this.owner.paused || this.stoppedWith !== null) return
      if (Date.now() - this.startedAt >= HEALTHY_MS) this.delay = this.options.restartDelayMs ?? 100
      this.options.logger.error(`projector worker ${this.runner}: exited with code ${String(code)}; starting it again in ${String(this.delay)} ms`)
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null
        this.start()
      }, this.delay)
      this.delay = Math.min(this.delay * 2, this.options.maxRestartDelayMs ?? 30_000)
    })
  }

  post(message: ToWorker): void {
    this.worker?.postMessage(message)
  }

  /**
   * Asks the worker to finish its run and close its files, and waits for its exit; terminates it
   * after STOP_TIMEOUT_MS. Cancels a pending restart.
   */
  async stop(warn: boolean): Promise<void> {
    if (this.restartTimer !== null) clearTimeout(this.restartTimer)
    this.restartTimer = null
    const worker = this.worker
    if (worker === null) return
    const exited = new Promise<void>((resolve) => (this.exitedNow = resolve))
    worker.postMessage({ type: 'stop' } satisfies ToWorker)
    const timer = setTimeout(() => {
      if (warn) this.options.logger.warn(`projector worker ${this.runner}: did not stop within ${String(STOP_TIMEOUT_MS / 1000)} s; terminating it`)
      void worker.terminate()
    }, STOP_TIMEOUT_MS)
    await exited
    this.exitedNow = null
    clearTimeout(timer)
  }
}

export class EmbeddedProjector {
  /** Set by `stop`: no worker starts again. */
  stopping = false
  /** Paused (damaged read-models files being replaced): no worker starts until `resume`. */
  paused = false
  private wakePending = false
  private running = 0
  private readonly offCommit: () => void
  private readonly workers: RunnerWorker[]

  constructor(private readonly options: EmbeddedProjectorOptions) {
    const runners = options.runners ?? RUNNER_NAMES
    this.workers = runners.map((runner) => new RunnerWorker(this, options, runner))
    // One message per turn of the event loop at most: group commits within it need one wake-up.
    // It carries the log's durable position, so the workers' reads up to it need no fdatasync of their own.
    this.offCommit = options.log.onCommit(() => {
      if (this.wakePending || this.running === 0) return
      this.wakePending = true
      setImmediate(() => {
        this.wakePending = false
        const message: ToWorker = { type: 'appended', durablePosition: options.log.durablePosition }
        for (const w of this.workers) w.post(message)
      })
    })
  }

  /** Workers started (the first ones included), over every runner; for tests and logs. */
  get starts(): number {
    return this.workers.reduce((n, w) => n + w.starts, 0)
  }

  /** The stop messages of the runners that stopped on a record they cannot apply, by runner (empty: none stopped). */
  get stoppedWith(): Partial<Record<RunnerName, string>> {
    return Object.fromEntries(this.workers.filter((w) => w.stoppedWith !== null).map((w) => [w.runner, w.stoppedWith]))
  }

  /** A running worker's V8 limits (worker_threads' `resourceLimits`, in MiB; every worker is given the same), or null while none runs. */
  get workerLimits(): ResourceLimits | null {
    const limits = this.workers.find((w) => w.worker !== null)?.worker?.resourceLimits
    return limits === undefined || Object.keys(limits).length === 0 ? null : limits
  }

  /** Starts every runner's worker (each catches up from its checkpoints, then follows the log). */
  start(): void {
    for (const w of this.workers) w.start()
  }

  /** @internal a worker started: while any runs, the log leaves its WAL checkpoints to them. */
  workerStarted(): void {
    this.running += 1
    if (this.running === 1) this.options.log.walAutocheckpoint(0)
  }

  /** @internal a worker exited: with none left, SQLite's default WAL auto-checkpoint is back. */
  workerExited(): void {
    this.running -= 1
    if (this.running === 0) this.options.log.walAutocheckpoint(DEFAULT_WAL_AUTOCHECKPOINT)
  }

  /** @internal a worker found a read-models file damaged: every worker stops until `resume`. */
  damaged(message: string): void {
    if (this.paused) return
    this.paused = true
    this.options.onReadModelsDamaged?.(message)
  }

  /** Stops every worker without restarting them (the read-models files are being replaced), until `resume`. */
  async pause(): Promise<void> {
    this.paused = true
    await Promise.all(this.workers.map((w) => w.stop(false)))
  }

  /** Starts the workers again after `pause` (on the fresh read-models files, from their checkpoints); a runner's stop is cleared. */
  resume(): void {
    this.paused = false
    for (const w of this.workers) w.stoppedWith = null
    this.start()
  }

  /** Asks every worker to finish its run and close its files; terminates one after STOP_TIMEOUT_MS. */
  async stop(): Promise<void> {
    this.stopping = true
    this.offCommit()
    await Promise.all(this.workers.map((w) => w.stop(true)))
  }
}

/** One runner's catch-up by runOnceInThreads. */
export interface RunnerCatchUp {
  runner: RunnerName
  /** Records the runner applied, in `seconds` (its thread's own time), up to `position` (null: an empty log). */
  records: number
  seconds: number
  position: number | null
}

/**
 * Applies what the log holds now with each of `runners` in a worker thread of its own, side by side
 * (`ocelog project --once`/`--rebuild` on the embedded default, docs/architecture.md#projection-runners-and-leases):
 * each runner writes its own read-models file, so the runners use a core each. Each thread runs
 * the service's thread entry with `once` (worker.ts) and the service's V8 limits.
 * @returns each runner's catch-up, in `runners` order, once every thread is done.
 * @throws Error naming the runner and the cause when one failed (a record it cannot apply, a file it
 *   cannot open) or its thread exited without an answer; the other threads finish first.
 */
export async function runOnceInThreads(options: { dataDir: string; logLevel: string; runners: readonly RunnerName[]; entry?: URL }): Promise<RunnerCatchUp[]> {
  const one = (runner: RunnerName): Promise<RunnerCatchUp> =>
    new Promise((resolve, reject) => {
      const data: ProjectorWorkerData = {
        dataDir: options.dataDir,
        logLevel: options.logLevel,
        runner,
        checkpointsLog: false,
        once: { sideBySide: options.runners.length },
      }
      const worker = new Worker(options.entry ?? new URL('../app/projector-thread.js', import.meta.url), {
        workerData: data,
        resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(), maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      })
      let answer: FromWorker | null = null
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'caught-up' || message.type === 'failed') answer = message
      })
      worker.on('error', (error) => {
        answer ??= { type: 'failed', message: error.message }
      })
      worker.on('exit', (code) => {
        const got = answer as FromWorker | null
        if (got?.type === 'caught-up') resolve({ runner, records: got.records, seconds: got.seconds, position: got.position })
        else if (got?.type === 'failed') reject(new Error(`runner ${runner}: ${got.message}`))
        else reject(new Error(`runner ${runner}: its thread exited with code ${String(code)} before it caught up`))
      })
    })
  const settled = await Promise.allSettled(options.runners.map(one))
  const done: RunnerCatchUp[] = []
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason
    done.push(s.value)
  }
  return done
}
