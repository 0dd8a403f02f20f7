/**
 * Messages between the benchmark orchestrator (bench/run.ts) and its load generator
 * (bench/load-worker.ts), which runs in a child process so the load never shares the
 * orchestrator's event loop.
 */
import type { Scenario } from './bodies.js'

/** One load run: `durationSec` of load against `baseUrl + path`, after `warmupSec` unrecorded. */
export interface LoadJob {
  /** Label for progress lines, e.g. `batch @ service`. */
  label: string
  baseUrl: string
  scenario: Scenario
  /** Bearer token; the baseline ignores it. */
  token: string
  connections: number
  durationSec: number
  warmupSec: number
  /**
   * Requests per second over all connections, each due at its time (open loop, bench/paced-load.ts);
   * unset: autocannon, as fast as the server answers (closed loop).
   */
  pacedRate?: number
  seed: number
  /** The live feed's first cycle (bodySource's `firstCycle`; default 0): a later load of the same data continues in time. */
  firstCycle?: number
  /** Makes the object batch's new ids unique per run. */
  tag: string
}

/** What one load run measured. Latencies in ms; rates per second over the measured duration. */
export interface LoadResult {
  requests2xx: number
  /** Items accepted before the measured run (preflight, objects to merge into, warm-up). */
  setupItems: number
  non2xx: number
  errors: number
  timeouts: number
  durationSec: number
  requestsPerSec: number
  /** Events or objects per second: requestsPerSec × items per request. */
  itemsPerSec: number
  latencyP50: number
  latencyP90: number
  latencyP99: number
  latencyMax: number
  /** Wall clock (ms since the epoch) when the last response of the measured run arrived. */
  endedAt: number
}

export type ToWorker = { type: 'run'; id: number; job: LoadJob } | { type: 'exit' }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; id: number; seconds: number; requests: number }
  | { type: 'result'; id: number; result: LoadResult }
  | { type: 'error'; id: number; message: string }
