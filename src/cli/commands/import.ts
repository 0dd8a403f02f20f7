/**
 * `ocelog import FILE --url URL --key KEY [--timezone TZ] [--concurrency N] [--unknown-object-type TYPE] [--key-prefix TEXT] [--json]`: loads an
 * OCEL 2.0 log (JSON, SQLite or XML) into the key's dataset through the HTTP API, with the client
 * library (clients/typescript, the package @ocelog/client). Reading, planning and sending are src/ocel/import/*; this file is the
 * terminal: a progress bar on a TTY (periodic lines otherwise), the summary, and the exit code
 * (0 when every planned item was recorded, 1 otherwise; skipped items are reported, not failures).
 */
import { SingleBar } from 'cli-progress'
import type { Command } from 'commander'
import { existsSync } from 'node:fs'
import type { OcelogClient, RetryCause, RetryNotice } from '@ocelog/client'
import { describeRetry, retryBrief } from '../retry-notice.js'
import { LIMITS } from '../../core/limits.js'
import { planImport, UNDEFINED_OBJECT_TYPE } from '../../ocel/import/plan.js'
import { runPlan, type ImportProgress } from '../../ocel/import/run.js'
import { formatSummary, summarize } from '../../ocel/import/summary.js'
import { parseTimeZone, type TimeZone } from '../../ocel/import/time.js'
import { CliError, printJson } from '../context.js'

interface ImportOptions {
  url: string
  key: string
  timezone: string
  concurrency: string
  unknownObjectType: string
  keyPrefix: string
  json?: boolean
}

/** Seconds between progress lines when stderr is not a terminal. */
const LINE_EVERY_MS = 10_000

function concurrencyOf(raw: string): number {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1 || n > 64) throw new CliError(`--concurrency ${raw}: must be a whole number from 1 to 64`)
  return n
}

/** The type for objects the log never defines: an object type name of the API (1 to 100 characters, § Limits). */
function unknownTypeOf(raw: string): string {
  const length = [...raw].length
  if (length < 1 || length > LIMITS.objectTypeMax) {
    throw new CliError(`--unknown-object-type: must be an object type name of 1 to ${String(LIMITS.objectTypeMax)} characters (got ${String(length)})`)
  }
  return raw
}

/** `--key-prefix`: keys must stay within 1 to 255 characters (README § Exactly once); the longest derived key adds 80. */
function keyPrefixOf(raw: string): string {
  const max = LIMITS.idempotencyKeyMax - 80
  if ([...raw].length > max) throw new CliError(`--key-prefix: at most ${String(max)} characters (got ${String([...raw].length)})`)
  return raw
}

function zoneOf(raw: string): TimeZone {
  try {
    return parseTimeZone(raw)
  } catch (error) {
    throw new CliError(`--timezone: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** Progress display: a bar on a terminal, a line every 10 s otherwise, nothing with --json off a terminal. */
function progressDisplay(total: number, quiet: boolean) {
  const started = Date.now()
  const rate = (p: ImportProgress) => Math.round(p.eventsSent / Math.max(0.001, (Date.now() - started) / 1000))
  let retries = 0
  if (process.stderr.isTTY) {
    const bar = new SingleBar({
      stream: process.stderr,
      format:
        'importing |{bar}| {percentage}% {value}/{total} items | {events} events | {rate} events/s | retries {retries}{last} | failed {failed} | ETA {eta_formatted}',
      barCompleteChar: '█',
      barIncompleteChar: '░',
      hideCursor: true,
      etaBuffer: 50,
    })
    bar.start(total, 0, { events: 0, rate: 0, retries: 0, last: '', failed: 0 })
    return {
      progress: (p: ImportProgress) => bar.update(p.eventsSent + p.upsertsSent + p.failed, { events: p.eventsSent, rate: rate(p), retries, failed: p.failed }),
      retry: (notice: RetryNotice) => {
        retries += 1
        bar.update({ retries, last: ` (last: ${retryBrief(notice)})` })
      },
      stop: () => bar.stop(),
    }
  }
  let last = started
  const lastRetryLine: Partial<Record<RetryCause, number>> = {}
  return {
    progress: (p: ImportProgress) => {
      if (quiet || Date.now() - last < LINE_EVERY_MS) return
      last = Date.now()
      const items = p.eventsSent + p.upsertsSent + p.failed
      process.stderr.write(
        `importing: ${String(items)}/${String(total)} items (${String(Math.floor((items / Math.max(1, total)) * 100))}%), ${String(p.eventsSent)} events, ${String(rate(p))} events/s, ${String(retries)} retries, ${String(p.failed)} failed\n`,
      )
    },
    retry: (notice: RetryNotice) => {
      retries += 1
      // The first retry of each cause, then one line per cause every LINE_EVERY_MS.
      if (quiet || Date.now() - (lastRetryLine[notice.cause] ?? 0) < LINE_EVERY_MS) return
      lastRetryLine[notice.cause] = Date.now()
      process.stderr.write(`retrying: ${describeRetry(notice)}\n`)
    },
    stop: () => {},
  }
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('Load an OCEL 2.0 log (JSON .json/.jsonocel, SQLite .sqlite, XML .xml/.xmlocel) into the dataset of an API key, through the HTTP API')
    .argument('<file>', 'the OCEL 2.0 log')
    .requiredOption('--url <url>', 'base URL of the Ocelog service, e.g. http://localhost:8080')
    .requiredOption('--key <key>', 'API key of the target dataset (see: ocelog keys create)')
    .option('--timezone <zone>', 'zone of timestamps that have none: UTC, an offset like +02:00, or an IANA name like Europe/Berlin', 'UTC')
    .option('--concurrency <n>', 'batches in flight at once', '4')
    .option('--unknown-object-type <type>', 'object type for objects the log references but never defines (their events are kept)', UNDEFINED_OBJECT_TYPE)
    .option(
      '--key-prefix <text>',
      'put into every idempotency key (keys derive from the log: event ids, object values and times, so running an import again records nothing twice); give two logs that reuse event ids in one dataset different prefixes',
      '',
    )
    .option('--json', 'print the summary as JSON on stdout')
    .action(async (file: string, opts: ImportOptions) => {
      const zone = zoneOf(opts.timezone)
      const concurrency = concurrencyOf(opts.concurrency)
      const unknownObjectType = unknownTypeOf(opts.unknownObjectType)
      const keyPrefix = keyPrefixOf(opts.keyPrefix)
      if (!existsSync(file)) throw new CliError(`${file}: no such file`)
      // Loaded here, not at start, so that other commands (`serve` above all) do not carry the client and the readers.
      const [{ OcelogClient, OcelogRequestError }, { readOcelFile }] = await Promise.all([import('@ocelog/client'), import('../../ocel/import/read.js')])
      const started = Date.now()
      const retries: Record<RetryCause, number> = { 'rate-limited': 0, network: 0, timeout: 0, 'server-error': 0 }
      let onRetry: (notice: RetryNotice) => void = () => {}
      let client: OcelogClient
      try {
        client = new OcelogClient({ baseUrl: opts.url, apiKey: opts.key, concurrency, onRetry: (notice) => onRetry(notice) })
      } catch (error) {
        throw new CliError(error instanceof Error ? error.message : String(error))
      }

      let datasetId: string
      try {
        // A mistyped URL or key should fail at once, not after the import's full retry policy.
        const probe = new OcelogClient({ baseUrl: opts.url, apiKey: opts.key, retry: { maxAttempts: 3, maxRateLimitWaits: 3 } })
        datasetId = (await probe.health()).dataset_id
      } catch (error) {
        if (error instanceof OcelogRequestError) throw new CliError(`cannot import into ${opts.url}: ${error.message}`)
        throw error
      }

      // An OcelReadError reaches `fail`, which prints its message.
      const log = readOcelFile(file, zone)
      const plan = planImport(log, { unknownObjectType, keyPrefix })

      const display = progressDisplay(plan.events + plan.upserts, opts.json === true)
      onRetry = (notice) => {
        retries[notice.cause] += 1
        display.retry(notice)
      }
      const abort = new AbortController()
      const onSigint = () => {
        process.stderr.write('\nocelog: stopping after the requests in flight (Ctrl-C again to quit at once)\n')
        abort.abort()
        process.once('SIGINT', () => process.exit(130))
      }
      process.once('SIGINT', onSigint)
      let run: Awaited<ReturnType<typeof runPlan>>
      try {
        run = await runPlan(plan, client, { concurrency, signal: abort.signal, onProgress: display.progress })
      } finally {
        display.stop()
        process.removeListener('SIGINT', onSigint)
      }

      const summary = summarize({ file, datasetId, log, plan, run, retries, elapsedMs: Date.now() - started })
      if (opts.json === true) printJson(summary)
      else process.stdout.write(formatSummary(summary))
      if (summary.failed.events + summary.failed.object_upserts > 0 || summary.aborted !== null) process.exitCode = 1
    })
}
