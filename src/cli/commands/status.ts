import type { Command } from 'commander'
import { projectorCheckpoints } from '../../projector/checkpoints.js'
import { readStatus } from '../../projector/status.js'
import type { Status } from '../../schemas/projections.js'
import { printJson, withBackends } from '../context.js'
import { formatStatus } from '../text.js'
import type { Leases } from '../../ports/leases.js'
import { parseCheckpointName } from '../../projector/checkpoints.js'
import { leaseName, RUNNER_NAMES } from '../../projector/runners.js'

/**
 * The leases held: each runner unsharded, and on every shard count that a checkpoint shows
 * (`<projection>-<i>-of-<n>`), asked of the engine.
 */
async function leaseStates(leases: Leases, status: Status): Promise<NonNullable<Status['leases']>> {
  const counts = new Set<number>()
  for (const p of status.projections) {
    const shard = parseCheckpointName(p.projection).shard
    if (shard !== undefined) counts.add(shard.count)
  }
  const names = RUNNER_NAMES.flatMap((runner) => [
    leaseName(runner),
    ...[...counts].flatMap((count) => Array.from({ length: count }, (_, index) => leaseName(runner, { index, count }))),
  ])
  return (await leases.holders(names)).map((h) => ({ lease: h.name, holder: h.holder, pid: h.pid, since: h.since }))
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('Show the log head, each projection checkpoint with its lag in records and in seconds, and any stopped projection with its error')
    .option(
      '--json',
      'print JSON: {head, projections: [{projection, position, version, updated_at, stopped, lag_records, lag_records_exact, lag_seconds}], leases (PostgreSQL): [{lease, holder, pid, since}]}',
    )
    .action(async (opts: { json?: boolean }) => {
      const status = await withBackends(async (b) => {
        const read = await readStatus(b.log, b.readModels, projectorCheckpoints())
        return b.leases === undefined ? read : { ...read, leases: await leaseStates(b.leases, read) }
      })
      if (opts.json === true) return printJson(status)
      process.stdout.write(formatStatus(status))
    })
}
