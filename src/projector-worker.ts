/**
 * The embedded projector's worker thread (`node:worker_threads`; started by embedded-projector.ts,
 * README § Architecture). It opens its own connections to the data dir's two files (the log's
 * ocelog.db, read; read-models.db, written), so the API's event loop never runs projection code and
 * a second core does the projecting.
 *
 * It also checkpoints the log's WAL (the API thread's connection leaves that to it), and runs at a
 * lower CPU priority than the API thread (Linux: nice 10 for this thread only).
 *
 * Messages from the parent: `{type: 'appended', durablePosition}` after each commit of the log
 * (wakes the tail at once; records up to `durablePosition` are on disk, so reading them needs no
 * fdatasync here), `{type: 'stop'}` (finishes the run in hand, closes the files, exits). To the parent:
 * `{type: 'projection-stopped', message}` when the projection stopped on a record it cannot apply
 * (then the worker exits, and is not restarted: see README § Operations).
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { Logger } from 'pino'
import { openDatabase } from './adapters/sqlite/database.js'
import { openReadModelsDatabase } from './adapters/sqlite/read-models-database.js'
import { isSqliteDamage, watchForDamage } from './adapters/sqlite/read-models-recovery.js'
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.js'
import { SqliteReadModelStore } from './adapters/sqlite/sqlite-read-model-store.js'
import { isSqliteUnavailable } from './adapters/sqlite/unavailable.js'
import { createLogger } from './logger.js'
import { Projector, warnAndResetIfAhead } from './projector.js'

/** What the parent passes as `workerData`. */
export interface ProjectorWorkerData {
  dataDir: string
  logLevel: string
}

/** Messages between the parent and the worker. */
export type ToWorker = { type: 'appended'; durablePosition: number } | { type: 'stop' }
export type FromWorker = { type: 'projection-stopped'; message: string } | { type: 'read-models-damaged'; message: string }

/** Records read from the log at once (see the Projector's `maxBatch`). */
const WORKER_MAX_BATCH = 1000

/**
 * Work applied in one transaction (the Projector's `maxBatchCost`, and here its `headRunCost` too):
 * a whole read of 1,000 records, even of events with 50 objects. This thread shares nothing with
 * the HTTP server but the CPU, and each commit rewrites the pages of every object row the run
 * touched, so fewer, larger runs cost less: catching up on 44,700 events with 50 objects took 28 s
 * in runs of 16,000 and 20 s in runs of 64,000 (README § Performance, measured when the E2O rows by
 * object were still an index kept row by row).
 */
const WORKER_MAX_BATCH_COST = 64_000

/**
 * Largest read of the log, in characters of stored JSON (SqliteEventLog's `readBytesMax`): 1,000
 * records of events with 50 objects are about 4 MB, so only reads of large records (up to 512 KiB
 * each, § Limits) are cut, and a read of them, decoded, stays well inside this thread's heap
 * ceiling (workerHeapMb in embedded-projector.ts: the API thread's, 1 GiB under `npm start`).
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

async function main(): Promise<void> {
  const port = parentPort
  if (port === null) throw new Error('projector-worker.js runs as a worker thread (see embedded-projector.ts)')
  const { dataDir, logLevel } = workerData as ProjectorWorkerData
  const logger = createLogger(logLevel).child({ thread: 'projector' })
  // This connection reads the log in order (and checkpoints it): SQLite's default 2 MiB cache does.
  const db = openDatabase(dataDir, { cacheKiB: 2048 })
  const readModels = openReadModelsDatabase(dataDir)
  const log = new SqliteEventLog(db, { readBytesMax: PROJECTOR_READ_BYTES_MAX })
  const abort = new AbortController()
  // A damaged read-models.db (SQLITE_CORRUPT, …): the API thread moves it aside and starts this
  // worker again on a fresh file (read-models-recovery.ts); this one stops at once.
  const store = watchForDamage(new SqliteReadModelStore(readModels.db), (error) => {
    port.postMessage({ type: 'read-models-damaged', message: (error as Error).message } satisfies FromWorker)
    abort.abort()
  })
  await warnAndResetIfAhead(log, store, logger)
  const projector = new Projector(log, store, {
    logger,
    isUnavailable: (error) => isSqliteUnavailable(error) || isSqliteDamage(error),
    // Reads of 1,000 records (not 2,000): a read of events with 50 objects each is then about
    // 30 MB of decoded records in this thread, whose memory adds to the API's in one process.
    maxBatch: WORKER_MAX_BATCH,
    maxBatchCost: WORKER_MAX_BATCH_COST,
    // At the head too, a whole read per transaction: the small runs that keep an HTTP server on the
    // same thread responsive (the Projector's default) only cost this thread more commits (a catch-up
    // of 304,700 batch records in reads of 1,000: 56-60 µs of CPU per record in whole reads, 64-66 µs
    // in runs of 1,000 cost units).
    headRunCost: WORKER_MAX_BATCH_COST,
  })
  lowerThreadPriority(logger)

  // The API thread leaves the log's WAL checkpoints to this thread (embedded-projector.ts), so that
  // copying the WAL into ocelog.db and its fsyncs never stall a request. The projector yields
  // between its runs, so the timer fires during a catch-up too.
  const checkpointLog = () => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)')
    } catch (error) {
      logger.warn({ err: error }, 'projector worker: checkpoint of the log failed; the next one retries')
    }
  }
  const checkpoints = setInterval(checkpointLog, CHECKPOINT_MS)
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
    await log.close()
    db.close()
    try {
      readModels.db.close()
    } catch {
      // a damaged file may fail to close; the API thread replaces it
    }
    port.close()
  }
}

void main()
