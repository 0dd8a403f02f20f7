import type { Command } from 'commander'
import { projectorCheckpoints } from '../../projector/checkpoints.js'
import { readStatus } from '../../projector/status.js'
import { printJson, withBackends } from '../context.js'
import { formatStatus } from '../text.js'

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('Show the log head, each projection checkpoint with its lag in records and in seconds, and any stopped projection with its error')
    .option('--json', 'print JSON: {head, projections: [{projection, position, version, updated_at, stopped, lag_records, lag_records_exact, lag_seconds}]}')
    .action(async (opts: { json?: boolean }) => {
      const status = await withBackends((b) => readStatus(b.log, b.readModels, projectorCheckpoints()))
      if (opts.json === true) return printJson(status)
      process.stdout.write(formatStatus(status))
    })
}
