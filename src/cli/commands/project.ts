import type { Command } from 'commander'
import type { Logger } from 'pino'
import { READ_MODELS_PROJECTION } from '../../projector/checkpoints.js'
import { type CommitFeed, EmbeddedProjector, runOnceInThreads } from '../../projector/embedded.js'
import { sharedProcessOptions } from '../../projector/options.js'
import { Projector, type Shard, warnAndResetIfAhead } from '../../projector/runner.js'
import { runLeasedRunners } from '../../projector/leased-runners.js'
import { isRunnerName, leaseName, RUNNER_NAMES, type RunnerName } from '../../projector/runners.js'
import { createLogger } from '../../app/logger.js'
import type { Backends } from '../../app/backends.js'
import type { Lease } from '../../ports/leases.js'
import { CliError, withBackends } from '../context.js'
import { PROJECTION_STOPPED_HINT } from '../text.js'

function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text)
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  if (m === null || count < 1 || index >= count) throw new CliError(`--shard ${text}: must be I/N with 0 ≤ I < N, e.g. 0/2`)
  return { index, count }
}

/** The runners named by `--runner` (a comma-separated list), or undefined for every runner. */
function parseRunners(text: string | undefined): RunnerName[] | undefined {
  if (text === undefined) return undefined
  const names = text.split(',').map((n) => n.trim())
  const wrong = names.filter((n) => !isRunnerName(n))
  if (wrong.length > 0 || names.length === 0) throw new CliError(`--runner ${text}: must name runners among ${RUNNER_NAMES.join(', ')}, comma-separated`)
  return [...new Set(names as RunnerName[])]
}

/**
 * Takes the leases of `runners` for a one-off run (`--once`, `--rebuild`) without waiting.
 * @throws CliError naming the holder when another process holds one (its projector would race this run).
 */
async function takeLeasesNow(b: Backends, runners: readonly RunnerName[], shard: Shard | undefined): Promise<Lease[]> {
  const taken: Lease[] = []
  const leases = b.leases
  if (leases === undefined) return taken
  for (const runner of runners) {
    const name = leaseName(runner, shard)
    const lease = await leases.tryAcquire(name)
    if (lease === null) {
      for (const t of taken) await t.release()
      const holder = (await leases.holders([name]))[0]
      throw new CliError(
        `the lease of runner ${name} is held by ${holder === undefined ? 'another process' : `${holder.holder} (server pid ${String(holder.pid)}, since ${holder.since})`}: stop that projector first, or run without --once/--rebuild to wait as its standby`,
      )
    }
    taken.push(lease)
  }
  return taken
}

/** `--once` or `--rebuild`: each runner (or every projection) caught up or rebuilt, with the number of records and the rate. */
async function runOnce(
  b: Backends,
  logger: Logger,
  make: (runner?: RunnerName) => Projector,
  runners: RunnerName[] | undefined,
  shard: Shard | undefined,
  rebuild: boolean,
): Promise<void> {
  const held = await takeLeasesNow(b, runners ?? RUNNER_NAMES, shard)
  try {
    for (const runner of runners ?? [undefined]) {
      const projector = make(runner)
      const started = performance.now()
      const n = rebuild ? await projector.rebuild() : await projector.catchUp()
      const seconds = (performance.now() - started) / 1000
      logger.info(
        { projector: projector.name, records: n, seconds, recordsPerSecond: Math.round(n / Math.max(seconds, 1e-6)), position: projector.position },
        `${projector.name}: ${rebuild ? 'rebuilt' : 'caught up'}: ${String(n)} record(s)`,
      )
    }
  } finally {
    for (const lease of held) await lease.release()
  }
}

/** One runner's part of a side-by-side run: its projector's name, the records it applied, its seconds and where it ended. */
interface RunnerDone {
  name: string
  records: number
  seconds: number
  position: number | null
}

/**
 * Logs a side-by-side `--once`/`--rebuild`: one line per runner, then one for the whole run:
 * `records` (the most any runner applied) over the run's wall time since `started` (performance.now(), ms).
 */
function logSideBySide(logger: Logger, done: readonly RunnerDone[], started: number, rebuild: boolean): void {
  const verb = rebuild ? 'rebuilt' : 'caught up'
  for (const r of done) {
    logger.info(
      { projector: r.name, records: r.records, seconds: r.seconds, recordsPerSecond: Math.round(r.records / Math.max(r.seconds, 1e-6)), position: r.position },
      `${r.name}: ${verb}: ${String(r.records)} record(s)`,
    )
  }
  const seconds = (performance.now() - started) / 1000
  const records = Math.max(0, ...done.map((r) => r.records))
  const position = Math.min(...done.map((r) => r.position ?? 0))
  logger.info(
    { projector: READ_MODELS_PROJECTION, records, seconds, recordsPerSecond: Math.round(records / Math.max(seconds, 1e-6)), position, runners: done.length },
    `${READ_MODELS_PROJECTION}: ${verb}: ${String(records)} record(s), ${String(done.length)} runners side by side`,
  )
}

/**
 * `--once` or `--rebuild` of every runner on the embedded default: each runner in a worker thread of
 * its own, side by side, as `serve` runs them (runOnceInThreads; each writes its own read-models
 * file). A rebuild first empties both files. Logs as logSideBySide.
 */
async function runOnceThreaded(b: Backends, dataDir: string, logLevel: string, logger: Logger, rebuild: boolean): Promise<void> {
  const started = performance.now()
  if (rebuild) await b.readModels.reset()
  const done = await runOnceInThreads({ dataDir, logLevel, runners: RUNNER_NAMES })
  logSideBySide(
    logger,
    done.map((r) => ({ name: `${READ_MODELS_PROJECTION}/${r.runner}`, records: r.records, seconds: r.seconds, position: r.position })),
    started,
    rebuild,
  )
}

/**
 * `--once` or `--rebuild` of several runners on PostgreSQL, under their leases (takeLeasesNow): each
 * runner's projector side by side in this process, on connections of their own, so that one runner's
 * statements run on the server while this thread folds the other's records (one projector of every
 * projection leaves both the server and this thread idle half the time: docs/operations.md#production-on-postgresql).
 * A rebuild of every runner empties the read models once (`reset`, one TRUNCATE); of some, each runner
 * drops its own (Projector.rebuild). Logs as logSideBySide.
 * @throws CliError when another process holds one of the leases; the first runner's stop or failure (as Projector.catchUp
 *   throws it), once every runner has settled.
 */
async function runOnceSideBySide(
  b: Backends,
  logger: Logger,
  make: (runner?: RunnerName, sideBySide?: number) => Projector,
  runners: readonly RunnerName[],
  shard: Shard | undefined,
  rebuild: boolean,
): Promise<void> {
  const held = await takeLeasesNow(b, runners, shard)
  try {
    const started = performance.now()
    const every = runners.length === RUNNER_NAMES.length
    if (rebuild && every) await b.readModels.reset()
    // Every runner settles before the leases go (as runOnceInThreads waits for every thread): a runner
    // that fails must not leave the other writing after its lease is released.
    const settled = await Promise.allSettled(
      runners.map(async (runner): Promise<RunnerDone> => {
        const projector = make(runner, runners.length)
        const began = performance.now()
        const records = rebuild && !every ? await projector.rebuild() : await projector.catchUp()
        return { name: projector.name, records, seconds: (performance.now() - began) / 1000, position: projector.position }
      }),
    )
    const done: RunnerDone[] = []
    for (const s of settled) {
      if (s.status === 'rejected') throw s.reason
      done.push(s.value)
    }
    logSideBySide(logger, done, started, rebuild)
  } finally {
    for (const lease of held) await lease.release()
  }
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}

/**
 * Follow mode on the embedded default: each of `runners` in a worker thread of its own, as `serve`
 * runs them (EmbeddedProjector, docs/architecture.md#the-embedded-projector), each writing its own
 * read-models file. No thread of this process appends to the log, so no commit wakes the workers:
 * each worker's tail polls the log (SqliteEventLog's `pollMs`, 250 ms) and so finds the records
 * another process (`ocelog serve --no-projector`) appends within that. A damaged read-models file is
 * moved aside and made anew as under `serve` (`b.healing`). A runner that stops on a record it cannot
 * apply is logged (`projector worker <runner>: stopped …`) and the others go on (docs/operations.md#backup-restore-verify-digests-damaged-files, A projector process of its own).
 * Returns when `signal` aborts or every runner has stopped, once every thread has finished its run.
 * @throws CliError naming each runner that stopped on a record and its stop (then the CLI exits 1).
 */
async function followInThreads(
  b: Backends,
  feed: CommitFeed,
  dataDir: string,
  logLevel: string,
  logger: Logger,
  runners: readonly RunnerName[],
  signal: AbortSignal,
): Promise<void> {
  let everyStopped = () => {}
  const allStopped = new Promise<void>((resolve) => (everyStopped = resolve))
  const healing = b.healing
  const embedded = new EmbeddedProjector({
    dataDir,
    logLevel,
    logger,
    log: feed,
    runners,
    ...(healing === undefined ? {} : { onReadModelsDamaged: (message: string) => healing.damaged(new Error(message)) }),
    onRunnerStopped: (runner, message) => {
      logger.error({ runner, stop: message }, `projector worker ${runner}: stopped on a record it cannot apply; the other runners go on`)
      if (Object.keys(embedded.stoppedWith).length === runners.length) everyStopped()
    },
  })
  if (healing !== undefined) {
    healing.logger = logger
    healing.writers = embedded
  }
  embedded.start()
  for (const runner of runners) logger.info({ runner }, `projector worker ${runner}: started; it polls the log for new records`)
  await Promise.race([aborted(signal), allStopped])
  await embedded.stop()
  const stops = Object.entries(embedded.stoppedWith)
  if (stops.length > 0) throw new CliError(`${stops.map(([runner, message]) => `runner ${runner}: ${message}`).join('; ')}. ${PROJECTION_STOPPED_HINT}`)
  logger.info('projector stopped')
}

export function registerProject(program: Command): void {
  program
    .command('project')
    .description(
      'Run a projector: tail the log from its checkpoints and keep the read models up to date. On the embedded default (without --shard or a single --runner), each runner runs in a worker thread of its own, polling the log every 250 ms; a runner stopped on a record it cannot apply leaves the others going, and the process then exits 1 on SIGTERM or once every runner has stopped. On PostgreSQL, each runner runs under a lease: start several processes, and the others wait as standbys',
    )
    .option('--shard <i/n>', 'take only the datasets whose hash mod n is i (run n workers, one per shard)')
    .option('--runner <names>', `run only these projection runners, comma-separated: ${RUNNER_NAMES.join(', ')} (default: every one)`)
    .option('--once', 'apply what the log holds now, then exit')
    .option('--rebuild', "drop the read models and checkpoints (a runner's own, with --runner), then apply the whole log again (implies --once)")
    .action(async (opts: { shard?: string; runner?: string; once?: boolean; rebuild?: boolean }) => {
      const shard = opts.shard === undefined ? undefined : parseShard(opts.shard)
      const runners = parseRunners(opts.runner)
      await withBackends(async (b, cfg) => {
        const logger = createLogger(cfg.logLevel)
        for (const notice of b.notices) logger.info(notice)
        // Runners under leases run side by side in this process (`sideBySide`): they share its reads' and transactions' bound.
        const make = (runner?: RunnerName, sideBySide = 1) =>
          new Projector(
            b.log,
            b.readModels,
            sharedProcessOptions(sideBySide, {
              logger,
              isUnavailable: b.isUnavailable,
              ...(shard === undefined ? {} : { shard }),
              ...(runner === undefined ? {} : { runner }),
            }),
          )
        // A rebuild resets the read models anyway; a run from the checkpoint must not start past the log's head.
        if (opts.rebuild !== true) await warnAndResetIfAhead(b.log, b.readModels, logger)
        if (opts.rebuild === true || opts.once === true) {
          // The embedded default: every runner in a thread of its own (each writes a file of its own).
          if (b.mode === 'embedded' && shard === undefined && runners === undefined)
            return runOnceThreaded(b, cfg.dataDir, cfg.logLevel, logger, opts.rebuild === true)
          // PostgreSQL: several runners side by side in this process.
          if (b.mode === 'postgres' && (runners ?? RUNNER_NAMES).length > 1)
            return runOnceSideBySide(b, logger, make, runners ?? RUNNER_NAMES, shard, opts.rebuild === true)
          return runOnce(b, logger, make, runners, shard, opts.rebuild === true)
        }
        const abort = new AbortController()
        process.once('SIGINT', () => abort.abort())
        process.once('SIGTERM', () => abort.abort())
        logger.info({ storage: b.describe, runners: runners ?? 'all' }, 'projector running')
        if (b.leases !== undefined) {
          const stops = await runLeasedRunners(
            {
              leases: b.leases,
              runners: runners ?? RUNNER_NAMES,
              ...(shard === undefined ? {} : { shard }),
              projector: (runner) => make(runner, (runners ?? RUNNER_NAMES).length),
              logger,
            },
            abort.signal,
          )
          // A runner stopped on a record: exit 1 with its message (the log and `ocelog status` have it too).
          const [first] = stops
          if (first !== undefined) throw first
          logger.info('projector stopped')
          return
        }
        // The embedded default, every runner or several: a worker thread per runner, as `serve` runs them.
        if (b.commitFeed !== undefined && shard === undefined && runners?.length !== 1)
          return followInThreads(b, b.commitFeed, cfg.dataDir, cfg.logLevel, logger, runners ?? RUNNER_NAMES, abort.signal)
        const projector = make(runners?.length === 1 ? runners[0] : undefined)
        const stopped = await projector.run(abort.signal)
        if (stopped !== null) throw stopped
        logger.info({ position: projector.position }, 'projector stopped')
      })
    })
}
