/**
 * Shared plumbing of CLI commands: configuration, backends, and one way to fail — a message on
 * stderr naming what went wrong and exit code 1 (2 for usage errors, from commander).
 */
import { loadConfig, type Config } from '../app/config.js'
import { openBackends, type Backends } from '../app/composition.js'
import { messageOf, CliError, isOcelogError } from '../core/errors.js'
import { cliMessage } from './text.js'

export { CliError }

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
