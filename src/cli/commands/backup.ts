/**
 * `ocelog backup --out FILE` and `ocelog restore FILE` (README § Operations): an online,
 * consistent copy of the embedded default's log file while the service runs, and a data directory
 * brought back from one (src/adapters/sqlite/log/backup.ts).
 */
import { SingleBar } from 'cli-progress'
import type { Command } from 'commander'
import { backupLog, restoreLog } from '../../adapters/sqlite/log/backup.js'
import { CliError, config, printJson } from '../context.js'

function embeddedDataDir(): string {
  const cfg = config()
  if (cfg.eventstoreUrl !== null) {
    throw new CliError(
      'backup and restore copy the embedded default’s ocelog.db; with EVENTSTORE_URL set, back up EventStoreDB and MongoDB with their own tools (README § Operations)',
    )
  }
  if (cfg.postgresUrl !== null) {
    throw new CliError(
      'backup and restore copy the embedded default’s ocelog.db; with POSTGRES_URL set, back up the database with pg_dump, or with the server’s continuous archiving and point-in-time recovery (docs/operations.md#production-on-postgresql)',
    )
  }
  return cfg.dataDir
}

export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description(
      'Copy the log file (ocelog.db: the log, the keys, the claims) of OCELOG_DATA_DIR to FILE, online and consistent, while the service runs; read models are not copied (they are rebuilt from the log)',
    )
    .requiredOption('--out <file>', 'where to write the copy (must not exist)')
    .option('--json', 'print JSON: {file, bytes, head, records, ms}; no progress bar')
    .action(async (opts: { out: string; json?: boolean }) => {
      const dataDir = embeddedDataDir()
      const bar =
        opts.json === true || !process.stderr.isTTY
          ? null
          : new SingleBar({ format: 'backup [{bar}] {percentage}% {value}/{total} pages', stream: process.stderr })
      let started = false
      const summary = await backupLog(dataDir, opts.out, (done, total) => {
        if (bar === null) return
        if (!started) bar.start(total, done)
        started = true
        bar.setTotal(total)
        bar.update(done)
      }).finally(() => bar?.stop())
      if (opts.json === true) return printJson(summary)
      process.stdout.write(
        `backup ${summary.file}: ${String(summary.bytes)} bytes, ${String(summary.records)} record(s) up to position ${String(summary.head ?? 'none')}, in ${(summary.ms / 1000).toFixed(2)} s\n` +
          `keep it with the digests of its datasets at that position (ocelog digest --dataset ID --position ${String(summary.head ?? 0)})\n`,
      )
    })

  program
    .command('restore')
    .description(
      'Bring the log file of a data directory back from a backup: checks FILE first, refuses a log in use, and an existing one unless --force (kept beside it); the read models are rebuilt from the restored log at the next start',
    )
    .argument('<file>', 'a file written by ocelog backup')
    .option('--data-dir <dir>', 'the data directory to restore into (default: OCELOG_DATA_DIR)')
    .option('--force', 'replace an existing ocelog.db (it is renamed to ocelog.db.before-restore-<time>, never deleted)')
    .option('--json', 'print JSON: {file, head, records, movedAside}')
    .action(async (file: string, opts: { dataDir?: string; force?: boolean; json?: boolean }) => {
      const dataDir = opts.dataDir ?? embeddedDataDir()
      const summary = await restoreLog(file, dataDir, opts.force === true)
      if (opts.json === true) return printJson(summary)
      process.stdout.write(
        `restored ${summary.file}: ${String(summary.records)} record(s) up to position ${String(summary.head ?? 'none')}` +
          `${summary.movedAside === null ? '' : `; the earlier log is at ${summary.movedAside}`}\n`,
      )
    })
}
