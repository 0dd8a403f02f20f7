/**
 * The embedded projector's worker thread (`node:worker_threads`; started by embedded-projector.ts,
 * README § Architecture). It opens its own connections to the data dir's two files (the log's
 * ocelog.db, read; read-models.db, written), so the API's event loop never runs projection code and
 * a second core does the projecting.
 *
 * Messages from the parent: `{type: 'appended'}` after each commit of the log (wakes the tail at
 * once), `{type: 'stop'}` (finishes the run in hand, closes the files, exits). To the parent:
 * `{type: 'projection-stopped', message}` when the projection stopped on a record it cannot apply
 * (then the worker exits, and is not restarted: see README § Operations).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openDatabase } from './adapters/sqlite/database.js'
import { openReadModelsDatabase } from './adapters/sqlite/read-models-database.js'
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.js'
import { SqliteReadModelStore } from './adapters/sqlite/sqlite-read-model-store.js'
import { isSqliteUnavailable } from './adapters/sqlite/unavailable.js'
import { createLogger } from './logger.js'
import { Projector } from './projector.js'

/** What the parent passes as `workerData`. */
export interface ProjectorWorkerData {
  dataDir: string
  logLevel: string
}

/** Messages between the parent and the worker. */
export type ToWorker = { type: 'appended' } | { type: 'stop' }
export type FromWorker = { type: 'projection-stopped'; message: string }

/** While the read models trail the log by more than this many records, progress is logged every PROGRESS_MS. */
const PROGRESS_BEHIND = 10_000
const PROGRESS_MS = 5_000

async function main(): Promise<void> {
  const port = parentPort
  if (port === null) throw new Error('projector-worker.js runs as a worker thread (see embedded-projector.ts)')
  const { dataDir, logLevel } = workerData as ProjectorWorkerData
  const logger = createLogger(logLevel).child({ thread: 'projector' })
  const db = openDatabase(dataDir)
  const readModels = openReadModelsDatabase(dataDir)
  const log = new SqliteEventLog(db)
  const projector = new Projector(log, new SqliteReadModelStore(readModels.db), { logger, isUnavailable: isSqliteUnavailable })
  const abort = new AbortController()
  port.on('message', (message: ToWorker) => {
    if (message.type === 'appended') log.wake()
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
    await log.close()
    db.close()
    readModels.db.close()
    port.close()
  }
}

void main()
