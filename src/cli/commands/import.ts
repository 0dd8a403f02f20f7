/**
 * `ocelog import FILE --url URL --key KEY [--timezone TZ] [--concurrency N] [--unknown-object-type TYPE] [--key-prefix TEXT] [--json]`: loads an
 * OCEL 2.0 log (JSON, SQLite or XML) into the key's dataset through the HTTP API, with the client
 * library (clients/typescript, the package @ocelog/client). Reading, planning and sending are src/ocel/import/*; this file is the
 * terminal: a progress bar on a TTY (periodic lines otherwise), the summary, and the exit code
 * (0 when every planned item was recorded, 1 otherwise; skipped items are reported, not failures).
 */
import { SingleBar } from 'cli-progress'
import type { Command } from 'commander'
import { existsSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { OcelogClient, RetryCause, RetryNotice } from '@ocelog/client'
import { describeRetry, retryBrief } from '../retry-notice.js'
import { LIMITS } from '../../core/limits.js'
import { UNDEFINED_OBJECT_TYPE } from '../../ocel/import/plan.js'
import { DEFAULT_IMPORT_CONCURRENCY, runPlan, type ImportProgress, type RunResult } from '../../ocel/import/run.js'
import type { ReadEnd } from '../../ocel/import/model.js'
import type { StagedPlan } from '../../ocel/import/staged-plan.js'
import { formatSummary, type LogCounts, summarize } from '../../ocel/import/summary.js'
import { parseTimeZone, type TimeZone } from '../../ocel/import/time.js'
import { CliError, printJson } from '../context.js'

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

/** Milliseconds between two full garbage collections while importing. */
const COLLECT_EVERY_MS = 500

/**
 * A full garbage collection of V8, at most once every COLLECT_EVERY_MS (a no-op where V8 does not give
 * one). The import makes short-lived garbage at a high rate (pages parsed, planned and sent), and V8
 * lets its heap grow to several times the live data before collecting: peak RSS of a 500k-event
 * import 415 MB with about 50 MB live (docs/import.md § Memory). Collecting twice a second keeps the
 * heap near what is live, for a few tens of ms each time.
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

/** A phase of the import as the progress display shows it. */
type Phase = 'reading' | 'planning' | 'sending'

/** What the display shows: the phase's progress (`value` of `total`, in `unit`), the events and objects so far. */
interface Shown {
  value: number
  events: number
  objects: number
  failed: number
}

const UNITS: Record<Phase, string> = { reading: 'MB', planning: 'items', sending: 'items' }

/** Nothing shown yet: a phase's start. */
const NOTHING: Readonly<Shown> = Object.freeze({ value: 0, events: 0, objects: 0, failed: 0 })

/**
 * Progress display, from the first second: a bar on a terminal; otherwise a line when each phase
 * starts, every 10 s, and when it ends (its totals and rate), nothing with --json off a terminal.
 * Phases: reading the file into the staging file (MB, or KB under 10 MB), planning (events and objects planned),
 * sending (items answered). Each shows the events and objects so far, the rate of the phase and its ETA.
 * Sending starts while planning goes on (docs/import.md): the planning phase also shows the items
 * answered so far (`sent`), and the sending phase starts from them, its rate counted from the
 * moment sending began, not from the end of planning.
 */
function progressDisplay(quiet: boolean) {
  let retries = 0
  let lastRetry = ''
  const lastRetryLine: Partial<Record<RetryCause, number>> = {}
  let phase: Phase = 'reading'
  let total = 0
  /** The phase's unit: UNITS', or the reading phase's KB for a small file. */
  let unit = UNITS.reading
  let phaseStarted = Date.now()
  let last: Shown = NOTHING
  /** What was answered so far: sending starts before planning ends, so the planning phase shows it and the sending phase starts from it. */
  let answered: Shown = NOTHING
  const sentText = (separator: string) => (phase === 'planning' ? `${separator}${String(answered.value)} items sent` : '')
  const rate = (s: Shown) => {
    const seconds = Math.max(0.001, (Date.now() - phaseStarted) / 1000)
    return phase === 'sending' ? `${String(Math.round(s.events / seconds))} events/s` : `${String(Math.round(s.value / seconds))} ${unit}/s`
  }
  const bar = process.stderr.isTTY
    ? new SingleBar({
        stream: process.stderr,
        format:
          '{phase} |{bar}| {percentage}% {value}/{total} {unit} | {events} events | {objects} objects | {rate}{sent} | retries {retries}{last} | failed {failed} | ETA {eta_formatted}',
        barCompleteChar: '█',
        barIncompleteChar: '░',
        hideCursor: true,
        etaBuffer: 50,
        fps: 2,
      })
    : null
  let lastLine = 0
  /** Whether a phase has started and its closing line is still to be written (off a terminal). */
  let open = false
  const line = (force: boolean) => {
    if (quiet || (!force && Date.now() - lastLine < LINE_EVERY_MS)) return
    lastLine = Date.now()
    const percent = Math.floor((last.value / Math.max(1, total)) * 100)
    process.stderr.write(
      `${phase}: ${String(last.value)}/${String(total)} ${unit} (${String(percent)}%), ${String(last.events)} events, ${String(last.objects)} objects, ${rate(last)}${sentText(', ')}, ${String(retries)} retries, ${String(last.failed)} failed\n`,
    )
  }
  /** Off a terminal, the line that ends the phase: its whole total when it `completed`, else where it stopped. */
  const close = (completed: boolean) => {
    if (bar !== null || !open) return
    open = false
    if (completed) last = { ...last, value: total }
    line(true)
  }
  const payload = () => ({
    phase,
    unit,
    events: last.events,
    objects: last.objects,
    rate: rate(last),
    sent: sentText(' | '),
    retries,
    last: lastRetry,
    failed: last.failed,
  })
  const update = (shown: Shown) => {
    last = shown
    if (bar === null) line(false)
    else bar.update(shown.value, payload())
  }
  return {
    /**
     * Starts a phase of `phaseTotal` units (`options.unit`, default UNITS' for the phase), its rate
     * counted from `options.since` (ms since the epoch; default now). The sending phase starts from
     * what was answered so far (`answered`).
     */
    start: (next: Phase, phaseTotal: number, options: { unit?: string; since?: number } = {}) => {
      // A phase starts once the one before it is done.
      close(true)
      open = true
      phase = next
      unit = options.unit ?? UNITS[next]
      total = phaseTotal
      phaseStarted = options.since ?? Date.now()
      last = next === 'sending' ? answered : NOTHING
      if (bar === null) line(true)
      else {
        bar.stop()
        bar.start(phaseTotal, last.value, payload())
      }
    },
    /** What was answered so far: shown as the sending phase's progress, or beside the planning phase's while planning goes on. */
    answeredSoFar: (shown: Shown) => {
      answered = shown
      if (phase === 'sending') update(shown)
      else bar?.update({ sent: sentText(' | ') })
    },
    update,
    retry: (notice: RetryNotice) => {
      retries += 1
      if (bar !== null) {
        lastRetry = ` (last: ${retryBrief(notice)})`
        bar.update({ retries, last: lastRetry })
        return
      }
      // The first retry of each cause, then one line per cause every LINE_EVERY_MS.
      if (quiet || Date.now() - (lastRetryLine[notice.cause] ?? 0) < LINE_EVERY_MS) return
      lastRetryLine[notice.cause] = Date.now()
      process.stderr.write(`retrying: ${describeRetry(notice)}\n`)
    },
    /** Ends the display: the last phase's closing line (where it stopped), or the bar. Called again, it does nothing. */
    stop: () => {
      close(false)
      bar?.stop()
    },
  }
}

/** The display of a run's progress (sending phase). */
function sent(p: ImportProgress): Shown {
  return { value: p.eventsSent + p.upsertsSent + p.failed, events: p.eventsSent, objects: p.upsertsSent, failed: p.failed }
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
    .action(async (file: string, opts: ImportOptions) => {
      const zone = zoneOf(opts.timezone)
      const concurrency = concurrencyOf(opts.concurrency)
      const unknownObjectType = unknownTypeOf(opts.unknownObjectType)
      const keyPrefix = keyPrefixOf(opts.keyPrefix)
      if (!existsSync(file)) throw new CliError(`${file}: no such file`)
      const stagingDir = opts.stagingDir ?? tmpdir()
      if (!existsSync(stagingDir)) throw new CliError(`--staging-dir ${stagingDir}: no such directory`)
      // Loaded here, not at start, so that other commands (`serve` above all) do not carry the client and the readers.
      const [{ OcelogClient, OcelogRequestError }, { streamOcelFile }, { Staging }, { StagedPlanner }] = await Promise.all([
        import('@ocelog/client'),
        import('../../ocel/import/read.js'),
        import('../../ocel/import/stage.js'),
        import('../../ocel/import/staged-plan.js'),
      ])
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

      const display = progressDisplay(opts.json === true)
      const collect = fullCollector()
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
      const staging = new Staging(stagingDir)
      let run: RunResult
      let plan: Omit<StagedPlan, 'batches'>
      let end: ReadEnd
      try {
        // An OcelReadError reaches `fail`, which prints its message.
        const size = statSync(file).size
        const [unitBytes, unitName] = size < COUNT_IN_KB_BELOW ? [1024, 'KB'] : [MB, 'MB']
        display.start('reading', Math.ceil(size / unitBytes), { unit: unitName })
        end = await streamOcelFile(
          file,
          zone,
          staging.sink(),
          (bytes) => {
            if (abort.signal.aborted) throw new CliError('stopped while reading the file')
            display.update({ value: Math.floor(bytes / unitBytes), events: staging.counts.events, objects: staging.counts.objects, failed: 0 })
            collect()
          },
          staging.scratch(),
        )
        staging.typeText = end.typeText
        // Planned a page at a time, while what is planned before the log's first event is sent
        // (StagedPlanner: the same batches as planning first, then sending).
        display.start('planning', staging.counts.events + staging.counts.objects)
        // Sending begins with planning: the sending phase's rate counts from here.
        const sendingSince = Date.now()
        const planner = new StagedPlanner(staging, { unknownObjectType, keyPrefix })
        let planningError: unknown = null
        const planning = (async () => {
          try {
            while (!abort.signal.aborted && planner.step()) {
              display.update({
                value: planner.eventsPlanned + planner.objectsPlanned,
                events: planner.eventsPlanned,
                objects: planner.objectsPlanned,
                failed: 0,
              })
              collect()
              await new Promise((resolve) => setImmediate(resolve))
            }
            if (planner.done) display.start('sending', planner.events + planner.upserts, { since: sendingSince })
          } catch (error) {
            planningError = error
            abort.abort()
          }
        })()
        run = await runPlan(
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
          client,
          {
            concurrency,
            signal: abort.signal,
            onProgress: (p) => {
              display.answeredSoFar(sent(p))
              collect()
            },
          },
        )
        await planning
        if (planningError !== null) throw planningError
        plan = planner.totals()
      } catch (error) {
        display.stop()
        staging.close()
        process.stderr.write(`ocelog: the staging file is kept for inspection: ${staging.path}\n`)
        throw error
      } finally {
        display.stop()
        process.removeListener('SIGINT', onSigint)
      }
      if (run.aborted === null) staging.remove()
      else {
        staging.close()
        process.stderr.write(`ocelog: the staging file is kept for inspection: ${staging.path}\n`)
      }

      const c = staging.counts
      const log: LogCounts = {
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
      const summary = summarize({ file, datasetId, log, plan, run, retries, elapsedMs: Date.now() - started })
      if (opts.json === true) printJson(summary)
      else process.stdout.write(formatSummary(summary))
      if (summary.failed.events + summary.failed.object_upserts > 0 || summary.aborted !== null) process.exitCode = 1
    })
}
