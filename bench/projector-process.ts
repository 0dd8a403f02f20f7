/**
 * The projector as its own process, for `npm run bench -- --split` (the production process
 * layout: `ocelog serve --no-projector` plus a projector worker). It runs the same Projector, with
 * the same tunings (projectorOptions('process')), as `ocelog project`, but holds the event loop open: on SQLite, `ocelog project` exits once it has
 * caught up, because the log's tail then waits only on an unreferenced timer (reported; not
 * this harness's to change). Stops on SIGTERM/SIGINT.
 *
 * Env: as `ocelog project` (OCELOG_DATA_DIR, LOG_LEVEL).
 */
import { projectorOptions } from '../src/projector/options.js'
import { Projector } from '../src/projector/runner.js'
import { createLogger } from '../src/app/logger.js'
import { openBackends } from '../src/app/composition.js'
import { loadConfig } from '../src/app/config.js'
import { messageOf } from '../src/core/errors.js'

async function main(): Promise<void> {
  const config = loadConfig(process.env)
  const backends = await openBackends(config)
  const logger = createLogger(config.logLevel)
  const abort = new AbortController()
  process.once('SIGTERM', () => abort.abort())
  process.once('SIGINT', () => abort.abort())
  const keepAlive = setInterval(() => {}, 60_000)
  try {
    await new Projector(backends.log, backends.readModels, projectorOptions('process', { logger, isUnavailable: backends.isUnavailable })).run(abort.signal)
  } finally {
    clearInterval(keepAlive)
    await backends.close()
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench projector: ${messageOf(error)}\n`)
    process.exit(1)
  },
)
