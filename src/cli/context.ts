/**
 * Shared plumbing of CLI commands: configuration, backends, and one way to fail — a message on
 * stderr naming what went wrong and exit code 1 (2 for usage errors, from commander).
 */
import { loadConfig, type Config } from '../app/config.js'
import { openBackends, type Backends } from '../app/composition.js'
import { messageOf, CliError, isOcelogError, type OcelogError, unreachable } from '../core/errors.js'

export { CliError }

/**
 * The CLI message for one of Ocelog's errors: the one place that maps the error union to what a
 * person reads after `ocelog: `. Exhaustive over `kind`.
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
      return `${error.message}. Fix the cause, then start the projector again: it retries that record`
    default:
      return unreachable(error)
  }
}

/** Prints `error` for a person and exits 1. Stack traces only for errors that are not Ocelog's own, with DEBUG set. */
export function fail(error: unknown): never {
  const known = isOcelogError(error)
  const message = known ? cliMessage(error) : messageOf(error)
  process.stderr.write(`ocelog: ${message}\n`)
  if (!known && process.env.DEBUG !== undefined && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`)
  process.exit(1)
}

/** Loads the configuration from the environment. */
export function config(): Config {
  return loadConfig(process.env)
}

/** Opens the configured backends, runs `fn`, and closes them whatever happens. */
export async function withBackends<T>(fn: (backends: Backends, config: Config) => Promise<T>): Promise<T> {
  const cfg = config()
  const backends = await openBackends(cfg)
  try {
    return await fn(backends, cfg)
  } finally {
    await backends.close()
  }
}

/** Writes one JSON document (pretty) or NDJSON line to stdout. */
export function printJson(value: unknown, ndjson = false): void {
  process.stdout.write(`${ndjson ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`)
}

/** Left-aligned text table; the first row is the header. */
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
