/**
 * Runners under leases (docs/architecture.md#projection-runners-and-leases): a projector process
 * offers every runner it was given; for each, it waits for the runner's lease (a standby while
 * another process holds it), runs the runner while it holds the lease, and goes back to waiting
 * when the lease is lost. Any number of processes can offer the same runners: one applies each,
 * the others take over within the lease's retry interval when it dies.
 */
import type { Logger } from 'pino'
import type { ProjectionStoppedError } from '../core/errors.js'
import type { Leases } from '../ports/leases.js'
import type { Projector } from './runner.js'
import { leaseName, type RunnerName } from './runners.js'
import type { Shard } from './shards.js'

export interface LeasedRunnersOptions {
  leases: Leases
  /** The runners this process offers to run. */
  runners: readonly RunnerName[]
  shard?: Shard
  /** A projector of one runner (ProjectorOptions.runner), made each time its lease is taken. */
  projector: (runner: RunnerName) => Projector
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>
  /** Told of each lease taken and let go (tests, metrics). */
  onLease?: (lease: string, held: boolean) => void
}

/**
 * Runs `options.runners` under their leases until `signal` aborts.
 * @returns the stops of runners that stopped on a record (each released its lease; the others went on), empty when none did.
 */
export async function runLeasedRunners(options: LeasedRunnersOptions, signal: AbortSignal): Promise<ProjectionStoppedError[]> {
  const stops = await Promise.all(options.runners.map((runner) => runUnderLease(options, runner, signal)))
  return stops.filter((s): s is ProjectionStoppedError => s !== null)
}

async function runUnderLease(options: LeasedRunnersOptions, runner: RunnerName, signal: AbortSignal): Promise<ProjectionStoppedError | null> {
  const name = leaseName(runner, options.shard)
  const log = options.logger
  let announced = false
  while (!signal.aborted) {
    if (!announced) log?.info({ lease: name }, `runner ${name}: waiting for its lease (a standby while another process holds it)`)
    announced = true
    const lease = await options.leases.acquire(name, signal)
    if (lease === null) return null
    log?.info({ lease: name }, `runner ${name}: lease taken, applying`)
    options.onLease?.(name, true)
    let stopped: ProjectionStoppedError | null = null
    try {
      stopped = await options.projector(runner).run(AbortSignal.any([signal, lease.lost]))
    } finally {
      await lease.release()
      options.onLease?.(name, false)
    }
    if (stopped !== null) return stopped
    if (signal.aborted) return null
    log?.warn({ lease: name, err: lease.lost.reason }, `runner ${name}: lease lost; waiting to take it again`)
    announced = false
  }
  return null
}
