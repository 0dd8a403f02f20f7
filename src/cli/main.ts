#!/usr/bin/env node
/**
 * `ocelog`: the command-line interface. Each command lives in
 * src/cli/commands/<name>.ts and registers itself on the program.
 */
import { Command } from 'commander'
import { createRequire } from 'node:module'
import { registerAudit } from './commands/audit.js'
import { registerBackup } from './commands/backup.js'
import { registerDatasets } from './commands/datasets.js'
import { registerExport } from './commands/export.js'
import { registerImport } from './commands/import.js'
import { registerKeys } from './commands/keys.js'
import { registerMcp } from './commands/mcp.js'
import { registerProject } from './commands/project.js'
import { registerReplay } from './commands/replay.js'
import { registerServe } from './commands/serve.js'
import { registerStatus } from './commands/status.js'
import { fail } from './context.js'
import { exitWhenStdoutCloses } from './stdout.js'

const pkg = createRequire(import.meta.url)('../../../package.json') as { version: string }

const program = new Command('ocelog')
  .description('Ocelog: ingestion of object-centric process events (OCEL 2.0) into an append-only log with read models')
  .version(pkg.version)
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText(
    'after',
    `
Environment:
  PORT, HOST                      where serve listens (default 8080, 0.0.0.0)
  OCELOG_DATA_DIR                 folder of the embedded SQLite file (default ./data)
  POSTGRES_URL                    use one PostgreSQL database instead of SQLite (log, keys, rate limits)
  OCELOG_POSTGRES_POOL_SIZE       connections of each process to PostgreSQL (default 10)
  EVENTSTORE_URL, MONGODB_URL     use EventStoreDB and MongoDB instead of SQLite (set both)
  REDIS_URL                       share rate limits through Redis
  OCELOG_RATE_LIMIT_PER_MINUTE    requests per minute per API key (default 1200)
  OCELOG_RATE_LIMIT_WINDOW_SECONDS  rate-limit window (default 60; budget scales with it)
  OCELOG_BODY_LIMIT_BYTES         largest request body (default 5242880)
  OCELOG_ALLOWED_HOSTS            host names /mcp answers to (default: loopback, this machine's name and addresses)
  OCELOG_METRICS                  on|off: GET /metrics, Prometheus text, no key (default on)
  LOG_LEVEL                       pino level (default info)`,
  )

registerServe(program)
registerProject(program)
registerKeys(program)
registerDatasets(program)
registerImport(program)
registerExport(program)
registerReplay(program)
registerMcp(program)
registerStatus(program)
registerBackup(program)
registerAudit(program)

exitWhenStdoutCloses()
program.parseAsync(process.argv).catch(fail)
