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

/**
 * Most records the worker thread reads from the log at once (the Projector's `maxBatch`): a whole
 * transaction (WORKER_MAX_BATCH_COST) of events with 3 objects. Reads of wide events ask for fewer
 * (the Projector's readCount: about 310 events with 50 objects).
 */
const WORKER_MAX_BATCH = 4000

/**
 * Work the worker thread applies in one transaction (the Projector's `maxBatchCost`, and its
 * `headRunCost` too), in `recordCost` units: 4,000 events with 3 objects (a whole read of them),
 * about 310 events with 50 objects. That thread shares nothing with the HTTP server but the CPU, so
 * the bound is the memory of one run: 16,000 keeps most of the peak RSS that smaller runs save in
 * the bench's worst case, for a small share of its catch-up (bench/HISTORY.md#round-16-sending-while-planning-and-the-workers-transactions).
 */
const WORKER_MAX_BATCH_COST = 16_000

/** Records read from the log at once by a projector process (the Projector's `maxBatch`). */
const PROCESS_MAX_BATCH = 5000

/** Work applied in one transaction by a projector process (the Projector's `maxBatchCost`). */
const PROCESS_MAX_BATCH_COST = 64_000

/**
 * The options of one of `runners` runners that share a projector process (`ocelog project` under
 * leases): the process's reads and transactions split between them, so that its memory bound stays
 * that of one projector of every projection.
 */
export function sharedProcessOptions(runners: number, extra: ProjectorOptions = {}): ProjectorOptions {
  const n = Math.max(1, runners)
  return { maxBatch: Math.ceil(PROCESS_MAX_BATCH / n), maxBatchCost: Math.ceil(PROCESS_MAX_BATCH_COST / n), ...extra }
}

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
      // Reads of about one transaction's units (the Projector's readCount): a read of events with 50
      // objects is then about 10 MB of decoded records in this thread, whose memory adds to the API's
      // in one process, and 4,000 events with 3 objects are one read and one commit (reads of 1,000
      // records made them four: bench/HISTORY.md#reads-of-about-one-transaction-and-the-workers-reads-of-up-to-4000-records-on-1703cba).
      // At the head too, runs of WORKER_MAX_BATCH_COST: the small runs that keep an HTTP server on
      // the same thread responsive (the Projector's default) only cost this thread more commits
      // (bench/HISTORY.md#figures-behind-the-codes-settings).
      return { maxBatch: WORKER_MAX_BATCH, maxBatchCost: WORKER_MAX_BATCH_COST, headRunCost: WORKER_MAX_BATCH_COST, ...extra }
    case 'process':
      // A process of its own: larger reads and transactions than the shared defaults cost memory
      // only there, and each commit rewrites fewer pages per record (bench/HISTORY.md#figures-behind-the-codes-settings).
      return { maxBatch: PROCESS_MAX_BATCH, maxBatchCost: PROCESS_MAX_BATCH_COST, ...extra }
  }
}
