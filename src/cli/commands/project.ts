import type { Command } from 'commander'
import { projectorOptions } from '../../projector/options.js'
import { Projector, type Shard, warnAndResetIfAhead } from '../../projector/runner.js'
import { createLogger } from '../../app/logger.js'
import { CliError, withBackends } from '../context.js'
import { UnsupportedError } from '../../core/errors.js'
import { READ_MODELS_NOT_BUILT } from '../../app/postgres.js'

function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text)
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  if (m === null || count < 1 || index >= count) throw new CliError(`--shard ${text}: must be I/N with 0 ≤ I < N, e.g. 0/2`)
  return { index, count }
}

export function registerProject(program: Command): void {
  program
    .command('project')
    .description('Run a projector: tail the log from its checkpoint and keep the read models up to date')
    .option('--shard <i/n>', 'take only the datasets whose hash mod n is i (run n workers, one per shard)')
    .option('--once', 'apply what the log holds now, then exit')
    .option('--rebuild', 'drop every read model and checkpoint, then apply the whole log again (implies --once)')
    .action(async (opts: { shard?: string; once?: boolean; rebuild?: boolean }) => {
      const shard = opts.shard === undefined ? undefined : parseShard(opts.shard)
      await withBackends(async (b, cfg) => {
        if (b.mode === 'postgres') throw new UnsupportedError(READ_MODELS_NOT_BUILT)
        const logger = createLogger(cfg.logLevel)
        for (const notice of b.notices) logger.info(notice)
        // A rebuild resets the read models anyway; a run from the checkpoint must not start past the log's head.
        if (opts.rebuild !== true) await warnAndResetIfAhead(b.log, b.readModels, logger)
        const projector = new Projector(
          b.log,
          b.readModels,
          projectorOptions('process', { logger, isUnavailable: b.isUnavailable, ...(shard === undefined ? {} : { shard }) }),
        )
        if (opts.rebuild === true || opts.once === true) {
          const started = performance.now()
          const n = opts.rebuild === true ? await projector.rebuild() : await projector.catchUp()
          const seconds = (performance.now() - started) / 1000
          logger.info(
            { records: n, seconds, recordsPerSecond: Math.round(n / Math.max(seconds, 1e-6)), position: projector.position },
            `${opts.rebuild === true ? 'rebuilt' : 'caught up'}: ${String(n)} record(s)`,
          )
          return
        }
        const abort = new AbortController()
        process.once('SIGINT', () => abort.abort())
        process.once('SIGTERM', () => abort.abort())
        logger.info({ projector: projector.name, storage: b.describe }, 'projector running')
        const stopped = await projector.run(abort.signal)
        // A projection stopped on a record: exit 1 with its message (the log and `ocelog status` have it too).
        if (stopped !== null) throw stopped
        logger.info({ position: projector.position }, 'projector stopped')
      })
    })
}
