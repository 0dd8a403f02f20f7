/**
 * The projector's tunings, in one place (README § Architecture): each place that runs a Projector
 * names its role, and gets the reads and transactions that fit where it runs.
 * - `api`: in the API process beside the HTTP server (a production `serve` asked to project); the
 *   Projector's defaults, whose small runs near the head keep the server's latency low.
 * - `worker`: the embedded default's worker thread (src/projector/worker.ts).
 * - `process`: a process of its own (`ocelog project`, the bench's projector process).
 * - `catch-up`: a CLI command that brings the read models up to date before it reads them.
 */
import type { ProjectorOptions } from './runner.js'

export type ProjectorRole = 'api' | 'worker' | 'process' | 'catch-up'

/** Records the worker thread reads from the log at once (the Projector's `maxBatch`). */
const WORKER_MAX_BATCH = 1000

/**
 * Work the worker thread applies in one transaction (the Projector's `maxBatchCost`, and its
 * `headRunCost` too): a whole read of 1,000 records, even of events with 50 objects. That thread
 * shares nothing with the HTTP server but the CPU, and each commit rewrites the pages of every
 * object row the run touched, so fewer, larger runs cost less: catching up on 44,700 events with
 * 50 objects took 28 s in runs of 16,000 and 20 s in runs of 64,000 (README § Performance, measured
 * when the E2O rows by object were still an index kept row by row).
 */
const WORKER_MAX_BATCH_COST = 64_000

/** Records read from the log at once by a projector process (the Projector's `maxBatch`). */
const PROCESS_MAX_BATCH = 5000

/** Work applied in one transaction by a projector process (the Projector's `maxBatchCost`). */
const PROCESS_MAX_BATCH_COST = 64_000

/**
 * The Projector's options for `role`, with `extra` (logger, shard, isUnavailable, …) over them.
 * @returns options for `new Projector(log, store, options)`; see ProjectorOptions for each field's unit.
 */
export function projectorOptions(role: ProjectorRole, extra: ProjectorOptions = {}): ProjectorOptions {
  switch (role) {
    case 'api':
    case 'catch-up':
      return { ...extra }
    case 'worker':
      // Reads of 1,000 records (not 2,000): a read of events with 50 objects each is then about
      // 30 MB of decoded records in this thread, whose memory adds to the API's in one process.
      // At the head too, a whole read per transaction: the small runs that keep an HTTP server on
      // the same thread responsive (the Projector's default) only cost this thread more commits (a
      // catch-up of 304,700 batch records in reads of 1,000: 56-60 µs of CPU per record in whole
      // reads, 64-66 µs in runs of 1,000 cost units).
      return { maxBatch: WORKER_MAX_BATCH, maxBatchCost: WORKER_MAX_BATCH_COST, headRunCost: WORKER_MAX_BATCH_COST, ...extra }
    case 'process':
      // A process of its own: larger reads and transactions than the shared defaults cost memory
      // only there, and each commit rewrites fewer pages per record (a rebuild of 446,100 records:
      // 21,180 records/s at 2,000/16,000, 23,312 at 5,000/64,000; peak RSS 266 → 300 MB).
      return { maxBatch: PROCESS_MAX_BATCH, maxBatchCost: PROCESS_MAX_BATCH_COST, ...extra }
  }
}
