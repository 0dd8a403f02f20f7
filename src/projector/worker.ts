/**
 * The embedded projector's worker thread (`node:worker_threads`; started by embedded.ts,
 * README § Architecture). It opens its own connections to the data dir's files (the log's
 * ocelog.db, read; the read-models files, written), so the API's event loop never runs projection
 * code and another core does the projecting.
 *
 * It also checkpoints the log's WAL unless told not to (`checkpointsLog`; the API thread's connection
 * leaves that to the workers), and runs at a lower CPU priority than the API thread (Linux: nice 10
 * for this thread only).
 *
 * It applies every projection, or one runner's (`workerData.runner`, docs/architecture.md#projection-runners-and-leases:
 * its projections, checkpoints and stops only), so that threads of different runners can share a data
 * dir. The service starts one thread per runner (embedded.ts), each checkpointing the log;
 * bench/runner-threads.ts measures that against one thread of every projection.
 *
 * Messages from the parent: `{type: 'appended', durablePosition}` after each commit of the log
 * (wakes the tail at once; records up to `durablePosition` are on disk, so reading them needs no
 * fdatasync here), `{type: 'stop'}` (finishes the run in hand, closes the files, exits). To the parent:
 * `{type: 'projection-stopped', message}` when the projection stopped on a record it cannot apply
 * (then the worker exits, and is not restarted: see README § Operations); `{type: 'read-models-damaged',
 * message}` when a read-models file turned out damaged (the parent moves the files aside and starts the workers again).
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { EventLog } from '../ports/event-log.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import { messageOf } from '../core/errors.js'
import { projectorOptions, sharedProcessOptions } from './options.js'
import { Projector, warnAndResetIfAhead } from './runner.js'
import type { RunnerName } from './runners.js'

/** What the parent passes as `workerData`. */
export interface ProjectorWorkerData {
  dataDir: string
  logLevel: string
  /** The runner this thread applies (src/projector/runners.ts); absent: every projection, in one Projector. */
  runner?: RunnerName
  /** Whether this thread checkpoints the log's WAL (absent: it does); the service's runner threads all do. */
  checkpointsLog?: boolean
  /**
   * Apply what the log holds now, then say `caught-up` (or `failed`) and exit, instead of following
   * the log (`ocelog project --once`/`--rebuild` on the embedded default, runOnceInThreads): runs as a
   * projector process's (sharedProcessOptions over `sideBySide` threads), at the process's priority.
   */
  once?: { sideBySide: number }
}

/**
 * What the thread projects with, opened by the composition root (openEmbeddedProjectorBackends in
 * src/app/composition.ts): its own connections to the data dir's log and read models.
 */
export interface EmbeddedProjectorBackends {
  /** The log, read only here; `wake` tells its tail of a commit in the API thread (SqliteEventLog.wake). */
  log: EventLog & { wake(durablePosition: number): void }
  readModels: ReadModelStore
  /** Whether an error means the engine is away (see ProjectorOptions.isUnavailable). */
  isUnavailable(error: unknown): boolean
  /** Copies the log's WAL into its file (SQLite's PASSIVE checkpoint): the API thread leaves that to this thread. */
  checkpointLog(): void
  close(): Promise<void>
}

/** How the thread's backends are opened: `readBytesMax` bounds one read of the log, in characters of stored JSON; `onReadModelsDamaged` is called once when the read models' file turns out damaged. */
export interface EmbeddedProjectorOpenOptions {
  readBytesMax: number
  onReadModelsDamaged: (error: unknown) => void
}

/** Opens the thread's backends. */
export type OpenEmbeddedProjectorBackends = (dataDir: string, options: EmbeddedProjectorOpenOptions) => EmbeddedProjectorBackends

/** Messages between the parent and the worker. */
export type ToWorker = { type: 'appended'; durablePosition: number } | { type: 'stop' }
export type FromWorker =
  | { type: 'projection-stopped'; message: string }
  | { type: 'read-models-damaged'; message: string }
  /** `once`: the runner is at the log's head; `records` applied in `seconds`, up to `position`. */
  | { type: 'caught-up'; records: number; seconds: number; position: number | null }
  /** `once`: the catch-up failed (a record it cannot apply, an engine away); the message says why. */
  | { type: 'failed'; message: string }

/**
 * Largest read of the log, in characters of stored JSON (SqliteEventLog's `readBytesMax`): 1,000
 * records of events with 50 objects are about 4 MB, so only reads of large records (up to 512 KiB
 * each, docs/api.md#limits) are cut, and a read of them, decoded, stays well inside this thread's heap
 * ceiling (workerHeapMb in embedded.ts: the API thread's, 1 GiB under `npm start`).
 */
const PROJECTOR_READ_BYTES_MAX = 64 * 1024 * 1024

/** How often this thread checkpoints the log's WAL into ocelog.db, ms. */
const CHECKPOINT_MS = 1_000

/** The nice value of this thread (Linux): under load, the API thread wins the CPU, and the read models catch up when it is idle. */
const THREAD_NICE = 10

/**
 * Lowers this thread's CPU priority, on Linux, where a thread has its own nice value: its id is
 * /proc/thread-self. Elsewhere, or when the system refuses, it runs at the process's priority.
 */
function lowerThreadPriority(logger: Pick<Logger, 'warn'>): void {
  if (process.platform !== 'linux') return
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, THREAD_NICE)
  } catch (error) {
    logger.warn({ err: error }, 'projector worker: could not lower its CPU priority; it runs at the priority of the process')
  }
}

/** While the read models trail the log by more than this many records, progress is logged every PROGRESS_MS. */
const PROGRESS_BEHIND = 10_000
const PROGRESS_MS = 5_000

/**
 * The body of the worker thread: opens its backends with `open`, catches up and follows the log
 * until the parent says stop (or the projection stops), then closes them. The thread's entry
 * (src/app/projector-thread.ts, the composition root's) calls it.
 * @param open the composition root's opener of this thread's backends.
 * @param createLogger the service's logger factory (a pino level such as `info`).
 * @throws when called outside a worker thread.
 */
export async function runProjectorThread(open: OpenEmbeddedProjectorBackends, createLogger: (level: string) => Logger): Promise<void> {
  const port = parentPort
  if (port === null) throw new Error('the projector thread runs as a worker thread (see src/projector/embedded.ts)')
  const { dataDir, logLevel, runner, checkpointsLog = true, once } = workerData as ProjectorWorkerData
  const logger = createLogger(logLevel).child(runner === undefined ? { thread: 'projector' } : { thread: 'projector', runner })
  const abort = new AbortController()
  // A damaged read-models.db: the API thread moves it aside and starts this worker again on a fresh file; this one stops at once.
  const backends = open(dataDir, {
    readBytesMax: PROJECTOR_READ_BYTES_MAX,
    onReadModelsDamaged: (error) => {
      port.postMessage({ type: 'read-models-damaged', message: (error as Error).message } satisfies FromWorker)
      abort.abort()
    },
  })
  const { log, readModels: store } = backends
  if (once !== undefined) {
    const projector = new Projector(log, store, sharedProcessOptions(once.sideBySide, { logger, isUnavailable: backends.isUnavailable, runner }))
    try {
      const started = performance.now()
      const records = await projector.catchUp()
      const seconds = (performance.now() - started) / 1000
      port.postMessage({ type: 'caught-up', records, seconds, position: projector.position } satisfies FromWorker)
    } catch (error) {
      port.postMessage({ type: 'failed', message: messageOf(error) } satisfies FromWorker)
    } finally {
      await backends.close()
      port.close()
    }
    return
  }
  await warnAndResetIfAhead(log, store, logger)
  const projector = new Projector(log, store, projectorOptions('worker', { logger, isUnavailable: backends.isUnavailable, runner }))
  lowerThreadPriority(logger)

  // The API thread leaves the log's WAL checkpoints to this thread (embedded.ts), so that
  // copying the WAL into ocelog.db and its fsyncs never stall a request. The projector yields
  // between its runs, so the timer fires during a catch-up too.
  const checkpointLog = () => {
    try {
      backends.checkpointLog()
    } catch (error) {
      logger.warn({ err: error }, 'projector worker: checkpoint of the log failed; the next one retries')
    }
  }
  const checkpoints = checkpointsLog ? setInterval(checkpointLog, CHECKPOINT_MS) : undefined
  port.on('message', (message: ToWorker) => {
    if (message.type === 'appended') log.wake(message.durablePosition)
    else abort.abort()
  })

  let lastProgress = Date.now()
  projector.events.on('applied', (position: number) => {
    if (Date.now() - lastProgress < PROGRESS_MS) return
    lastProgress = Date.now()
    void log.lastPosition().then((head) => {
      const behind = (head ?? 0) - position
      if (behind > PROGRESS_BEHIND)
        logger.info({ position, head, behind }, `projector ${projector.name}: catching up with the log: at position ${String(position)} of ${String(head)}`)
    })
  })

  try {
    const stopped = await projector.run(abort.signal)
    if (stopped !== null) port.postMessage({ type: 'projection-stopped', message: stopped.message } satisfies FromWorker)
  } finally {
    clearInterval(checkpoints)
    await backends.close()
    port.close()
  }
}
