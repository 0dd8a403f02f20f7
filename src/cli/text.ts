/**
 * What the CLI writes for a person, as pure functions of what it shows (no I/O, so that the unit
 * tier tests them; README § Tests): the message of each of Ocelog's errors, text tables, and
 * `ocelog status` as text. The commands that print them are in src/cli/commands.
 */
import { type OcelogError, unreachable } from '../core/errors.js'
import type { Status } from '../schemas/projections.js'

/** What to do about a projection stopped on a record it cannot apply (README § Operations), after the stop's message. */
export const PROJECTION_STOPPED_HINT = 'Fix the cause, then start the projector again: it retries that record'

/**
 * The CLI message for one of Ocelog's errors: the one place that maps the error union to what a
 * person reads after `ocelog: ` (docs/architecture.md#errors). Exhaustive over `kind`.
 */
export function cliMessage(error: OcelogError): string {
  switch (error.kind) {
    case 'cli':
    case 'config':
    case 'admin':
    case 'ocel_read':
    case 'engine_unavailable':
    case 'dataset_exists':
    case 'invalid_parameter':
    case 'not_found':
      return error.message
    case 'log_unavailable':
      return `the log is unavailable: ${error.message}; nothing of this command was recorded, retry when it answers`
    case 'checkpoint_conflict':
      return `another projector moved the checkpoint first (${error.message}); run the command again`
    case 'append_too_large':
      return `an item is too large for one append: ${error.message}`
    case 'read_models_rebuilding':
      return `${error.message}; run the command again when the rebuild is done (ocelog status shows it)`
    case 'projection_stopped':
      return `${error.message}. ${PROJECTION_STOPPED_HINT}`
    default:
      return unreachable(error)
  }
}

/** Left-aligned text table (the CLI's listings, README § CLI); the first row is the header. Columns are two spaces apart, lines without trailing spaces. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? []
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/**
 * `ocelog status` as text (README § Operations): the log head, a table of projections
 * (checkpoint, lag in records, with `≥` when the engine gave a lower bound, and in seconds), then
 * one line per stopped projection. Ends with a line feed.
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
