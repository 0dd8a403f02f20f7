/**
 * Shared plumbing of CLI commands: configuration, backends, and one way to fail — a message on
 * stderr naming what went wrong and exit code 1 (2 for usage errors, from commander).
 */
import { ConfigError, loadConfig, type Config } from '../config.js'
import { EngineUnavailableError, openBackends, type Backends } from '../composition.js'

export class CliError extends Error {
  override readonly name = 'CliError'
}

/** Prints `error` for a person and exits 1. Stack traces only with DEBUG set. */
export function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error)
  const known = error instanceof CliError || error instanceof ConfigError || error instanceof EngineUnavailableError
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
