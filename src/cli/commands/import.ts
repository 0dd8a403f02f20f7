/**
 * `ocelog import FILE --url URL --key KEY [--timezone TZ] [--concurrency N] [--unknown-object-type TYPE] [--key-prefix TEXT] [--json]`: loads an
 * OCEL 2.0 log (JSON, SQLite or XML) into the key's dataset through the HTTP API, with the client
 * library (clients/typescript, the package @ocelog/client). Reading, planning and sending are src/ocel/import/*; this file is the
 * terminal: a progress bar on a TTY (periodic lines otherwise; src/cli/import-progress.ts), the summary, and the exit code
 * (0 when every planned item was recorded, 1 otherwise; skipped items are reported, not failures).
 */
import type { Command } from 'commander'
import { existsSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { OcelogClient, OcelogRequestError, RetryCause, RetryNotice } from '@ocelog/client'
import { ImportProgressDisplay, sentOf } from '../import-progress.js'
import { LIMITS } from '../../core/limits.js'
import { UNDEFINED_OBJECT_TYPE } from '../../ocel/import/plan.js'
import type { ReadEnd } from '../../ocel/import/model.js'
import type { streamOcelFile } from '../../ocel/import/read.js'
import { type DeclarationOutcome, declarationRequests, sendDeclarations } from '../../ocel/import/declarations.js'
import { DEFAULT_IMPORT_CONCURRENCY, runPlan, type RunResult } from '../../ocel/import/run.js'
import type { Staging } from '../../ocel/import/stage.js'
import type { StagedPlan, StagedPlanner } from '../../ocel/import/staged-plan.js'
import { formatSummary, type LogCounts, summarize } from '../../ocel/import/summary.js'
import { parseTimeZone, type TimeZone } from '../../ocel/import/time.js'
import { CliError, printJson } from '../context.js'
import { messageOf } from '../../core/errors.js'

interface ImportOptions {
  url: string
  key: string
  timezone: string
  concurrency: string
  unknownObjectType: string
  keyPrefix: string
  stagingDir?: string
  json?: boolean
}

const MB = 1024 * 1024
/** Files under this size are counted in KB while they are read, so that a small file does not show `1/1 MB`. */
const COUNT_IN_KB_BELOW = 10 * MB

function concurrencyOf(raw: string): number {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1 || n > 64) throw new CliError(`--concurrency ${raw}: must be a whole number from 1 to 64`)
  return n
}

/** The type for objects the log never defines: an object type name of the API (1 to 100 characters, docs/api.md#limits). */
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
    throw new CliError(`--timezone: ${messageOf(error)}`)
  }
}

/** Milliseconds between two full garbage collections while importing. */
const COLLECT_EVERY_MS = 500

/**
 * A full garbage collection of V8, at most once every COLLECT_EVERY_MS (a no-op where V8 does not give
 * one). The import makes short-lived garbage at a high rate (pages parsed, planned and sent), and V8
 * lets its heap grow to about 4 times the live data before collecting (docs/import.md § Memory).
 * Collecting twice a second keeps the heap near what is live, for a few tens of ms each time.
 */
function fullCollector(): () => void {
  setFlagsFromString('--expose-gc')
  const gc: unknown = runInNewContext('gc')
  let last = Date.now()
  return () => {
    if (typeof gc !== 'function' || Date.now() - last < COLLECT_EVERY_MS) return
    gc()
    last = Date.now()
  }
}

/** The modules an import loads when it runs (not at start, so that other commands, `serve` above all, do not carry them). */
interface Loaded {
  OcelogClient: typeof OcelogClient
  OcelogRequestError: typeof OcelogRequestError
  streamOcelFile: typeof streamOcelFile
  Staging: typeof Staging
  StagedPlanner: typeof StagedPlanner
}

/** What reading, planning and sending work with, once the options are checked and the service answered. */
interface Session {
  file: string
  zone: TimeZone
  concurrency: number
  unknownObjectType: string
  keyPrefix: string
  stagingDir: string
  client: OcelogClient
  modules: Loaded
  display: ImportProgressDisplay
  collect: () => void
}

/** What was read, planned and sent. */
interface Outcome {
  end: ReadEnd
  declared: DeclarationOutcome
  plan: Omit<StagedPlan, 'batches'>
  run: RunResult
}

/**
 * Reads the log into `staging` (the reading phase). An OcelReadError reaches `fail`, which prints its message.
 * @throws CliError when the run is stopped (Ctrl-C) while reading.
 */
async function readLog(s: Session, staging: Staging, signal: AbortSignal): Promise<ReadEnd> {
  const size = statSync(s.file).size
  const [unitBytes, unitName] = size < COUNT_IN_KB_BELOW ? [1024, 'KB'] : [MB, 'MB']
  s.display.start('reading', Math.ceil(size / unitBytes), { unit: unitName })
  const end = await s.modules.streamOcelFile(
    s.file,
    s.zone,
    staging.sink(),
    (bytes) => {
      if (signal.aborted) throw new CliError('stopped while reading the file')
      s.display.update({ value: Math.floor(bytes / unitBytes), events: staging.counts.events, objects: staging.counts.objects, failed: 0 })
      s.collect()
    },
    staging.scratch(),
  )
  staging.typeText = end.typeText
  return end
}

/**
 * Plans the staged log a page at a time, while what is planned before the log's first event is sent
 * (StagedPlanner: the same batches as planning first, then sending; docs/import.md).
 * @throws what planning threw, once the run has stopped.
 */
async function planAndSend(s: Session, staging: Staging, abort: AbortController): Promise<Omit<Outcome, 'end' | 'declared'>> {
  s.display.start('planning', staging.counts.events + staging.counts.objects)
  // Sending begins with planning: the sending phase's rate counts from here.
  const sendingSince = Date.now()
  const planner = new s.modules.StagedPlanner(staging, { unknownObjectType: s.unknownObjectType, keyPrefix: s.keyPrefix })
  let planningError: unknown = null
  const planning = (async () => {
    try {
      while (!abort.signal.aborted && planner.step()) {
        s.display.update({
          value: planner.eventsPlanned + planner.objectsPlanned,
          events: planner.eventsPlanned,
          objects: planner.objectsPlanned,
          failed: 0,
        })
        s.collect()
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (planner.done) s.display.start('sending', planner.events + planner.upserts, { since: sendingSince })
    } catch (error) {
      planningError = error
      abort.abort()
    }
  })()
  const run = await runPlan(
    {
      batches: planner.batches(),
      get events() {
        return planner.events
      },
      get upserts() {
        return planner.upserts
      },
      complete: () => {
        if (planningError === null) while (planner.step());
      },
    },
    s.client,
    {
      concurrency: s.concurrency,
      signal: abort.signal,
      onProgress: (p) => {
        s.display.answeredSoFar(sentOf(p))
        s.collect()
      },
    },
  )
  await planning
  if (planningError !== null) throw planningError
  return { run, plan: planner.totals() }
}

/**
 * Stages, plans and sends the log; Ctrl-C stops it after the requests in flight. The staging file is
 * removed when every batch was sent, else kept (and named on stderr).
 */
async function stageAndSend(s: Session): Promise<Outcome & { staging: Staging }> {
  const abort = new AbortController()
  const onSigint = () => {
    process.stderr.write('\nocelog: stopping after the requests in flight (Ctrl-C again to quit at once)\n')
    abort.abort()
    process.once('SIGINT', () => process.exit(130))
  }
  process.once('SIGINT', onSigint)
  const staging = new s.modules.Staging(s.stagingDir)
  let outcome: Outcome
  try {
    const end = await readLog(s, staging, abort.signal)
    // The declarations first (docs/ocel.md#declared-types): every type the log declares, used or not.
    const declared = await sendDeclarations(declarationRequests(staging.eventTypes, staging.objectTypes, s.keyPrefix), (body) => s.client.declareTypes(body))
    outcome = { end, declared, ...(await planAndSend(s, staging, abort)) }
  } catch (error) {
    s.display.stop()
    staging.close()
    process.stderr.write(`ocelog: the staging file is kept for inspection: ${staging.path}\n`)
    throw error
  } finally {
    s.display.stop()
    process.removeListener('SIGINT', onSigint)
  }
  if (outcome.run.aborted === null) staging.remove()
  else {
    staging.close()
    process.stderr.write(`ocelog: the staging file is kept for inspection: ${staging.path}\n`)
  }
  return { ...outcome, staging }
}

/** The log's counts for the summary, from the staging file and the reader's end. */
function logCountsOf(staging: Staging, end: ReadEnd): LogCounts {
  const c = staging.counts
  return {
    format: end.format,
    notes: end.notes,
    events: c.events,
    objects: c.objects,
    eventTypes: { declared: staging.eventTypes.length, used: c.eventTypesUsed.size },
    objectTypes: { declared: staging.objectTypes.length, used: c.objectTypesUsed.size },
    e2o: c.e2o,
    o2o: c.o2o,
    objectAttributeValues: c.objectAttributeValues,
  }
}

/**
 * `ocelog import FILE` (see module comment): checks the options, asks the service which dataset the
 * key writes to, then stages, plans and sends the log and prints the summary.
 * @throws CliError for a bad option, a missing file or directory, or a service that does not answer.
 */
async function importFile(file: string, opts: ImportOptions): Promise<void> {
  const zone = zoneOf(opts.timezone)
  const concurrency = concurrencyOf(opts.concurrency)
  const unknownObjectType = unknownTypeOf(opts.unknownObjectType)
  const keyPrefix = keyPrefixOf(opts.keyPrefix)
  if (!existsSync(file)) throw new CliError(`${file}: no such file`)
  const stagingDir = opts.stagingDir ?? tmpdir()
  if (!existsSync(stagingDir)) throw new CliError(`--staging-dir ${stagingDir}: no such directory`)
  // Loaded here, not at start, so that other commands (`serve` above all) do not carry the client and the readers.
  const [clientModule, read, stage, stagedPlan] = await Promise.all([
    import('@ocelog/client'),
    import('../../ocel/import/read.js'),
    import('../../ocel/import/stage.js'),
    import('../../ocel/import/staged-plan.js'),
  ])
  const modules: Loaded = {
    OcelogClient: clientModule.OcelogClient,
    OcelogRequestError: clientModule.OcelogRequestError,
    streamOcelFile: read.streamOcelFile,
    Staging: stage.Staging,
    StagedPlanner: stagedPlan.StagedPlanner,
  }
  const started = Date.now()
  const retries: Record<RetryCause, number> = { 'rate-limited': 0, network: 0, timeout: 0, 'server-error': 0 }
  let onRetry: (notice: RetryNotice) => void = () => {}
  let client: OcelogClient
  try {
    client = new modules.OcelogClient({ baseUrl: opts.url, apiKey: opts.key, concurrency, onRetry: (notice) => onRetry(notice) })
  } catch (error) {
    throw new CliError(messageOf(error))
  }

  let datasetId: string
  try {
    // A mistyped URL or key should fail at once, not after the import's full retry policy.
    const probe = new modules.OcelogClient({ baseUrl: opts.url, apiKey: opts.key, retry: { maxAttempts: 3, maxRateLimitWaits: 3 } })
    datasetId = (await probe.health()).dataset_id
  } catch (error) {
    if (error instanceof modules.OcelogRequestError) throw new CliError(`cannot import into ${opts.url}: ${error.message}`)
    throw error
  }

  const display = new ImportProgressDisplay(opts.json === true)
  const collect = fullCollector()
  onRetry = (notice) => {
    retries[notice.cause] += 1
    display.retry(notice)
  }
  const { end, declared, plan, run, staging } = await stageAndSend({
    file,
    zone,
    concurrency,
    unknownObjectType,
    keyPrefix,
    stagingDir,
    client,
    modules,
    display,
    collect,
  })
  const log = logCountsOf(staging, end)
  const summary = summarize({ file, datasetId, log, plan, run, declared, retries, elapsedMs: Date.now() - started })
  if (opts.json === true) printJson(summary)
  else process.stdout.write(formatSummary(summary))
  if (summary.failed.events + summary.failed.object_upserts > 0 || summary.declared.failed !== null || summary.aborted !== null) process.exitCode = 1
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('Load an OCEL 2.0 log (JSON .json/.jsonocel, SQLite .sqlite, XML .xml/.xmlocel) into the dataset of an API key, through the HTTP API')
    .argument('<file>', 'the OCEL 2.0 log')
    .requiredOption('--url <url>', 'base URL of the Ocelog service, e.g. http://localhost:8080')
    .requiredOption('--key <key>', 'API key of the target dataset (see: ocelog keys create)')
    .option('--timezone <zone>', 'zone of timestamps that have none: UTC, an offset like +02:00, or an IANA name like Europe/Berlin', 'UTC')
    .option('--concurrency <n>', 'batches in flight at once (1 to 64)', String(DEFAULT_IMPORT_CONCURRENCY))
    .option('--unknown-object-type <type>', 'object type for objects the log references but never defines (their events are kept)', UNDEFINED_OBJECT_TYPE)
    .option(
      '--key-prefix <text>',
      'put into every idempotency key (keys derive from the log: event ids, object values and times, so running an import again records nothing twice); give two logs that reuse event ids in one dataset different prefixes',
      '',
    )
    .option(
      '--staging-dir <dir>',
      'directory of the scratch SQLite file the log is staged in while importing (default: the OS temp directory); removed at the end, kept if the import fails',
    )
    .option('--json', 'print the summary as JSON on stdout')
    .action(importFile)
}
