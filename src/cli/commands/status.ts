import type { Command } from 'commander'
import { projectorCheckpoints } from '../../projector/checkpoints.js'
import type { Status } from '../../schemas/projections.js'
import { readStatus } from '../../projector/status.js'
import { printJson, table, withBackends } from '../context.js'
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

/**
 * `ocelog status` as text: the log head, a table of projections (checkpoint, lag in records, with
 * `≥` when the engine gave a lower bound, and in seconds), then one line per stopped projection.
 */
export function formatStatus(status: Status): string {
  const lines = [`log head: ${status.head === null ? 'none (the log is empty)' : String(status.head)}`]
  const rows = [['PROJECTION', 'CHECKPOINT', 'LAG (RECORDS)', 'LAG (S)', 'STATE', 'UPDATED']]
  for (const p of status.projections) {
    const lag = p.lag_records_exact ? String(p.lag_records) : `≥ ${String(p.lag_records)}`
    rows.push([
      p.projection,
      p.position === null ? 'none' : String(p.position),
      lag,
      p.lag_seconds.toFixed(3),
      p.stopped === null ? 'ok' : 'STOPPED',
      p.updated_at ?? '-',
    ])
  }
  lines.push(table(rows))
  if (status.leases !== undefined) {
    if (status.leases.length === 0) lines.push('leases: none held (no projector runs)')
    for (const l of status.leases) lines.push(`lease ${l.lease}: held by ${l.holder} (server pid ${String(l.pid)}) since ${l.since}`)
  }
  for (const p of status.projections) {
    const s = p.stopped
    if (s === null) continue
    const at = s.position === null ? 'a record it could not read' : `position ${String(s.position)}${s.stream === null ? '' : ` (${s.stream})`}`
    lines.push(`stopped: ${p.projection} at ${at} after ${String(s.attempts)} attempt(s), ${s.stopped_at}: ${s.cause}`)
  }
  return `${lines.join('\n')}\n`
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
