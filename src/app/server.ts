/**
 * The server entry (`ocelog serve`): opens the backends, builds the app, listens, and in embedded
 * mode runs the projector beside the API, in a worker thread (src/projector/embedded.ts). On SIGTERM/SIGINT it stops taking requests, lets the
 * ones in flight finish (their records are durable before they answer), stops the projector and
 * closes the engines.
 */
import type { FastifyInstance } from 'fastify'
import { projectorCheckpoints } from '../projector/checkpoints.js'
import { EmbeddedProjector } from '../projector/embedded.js'
import { runLeasedRunners } from '../projector/leased-runners.js'
import { RUNNER_NAMES } from '../projector/runners.js'
import { projectorOptions } from '../projector/options.js'
import { Projector } from '../projector/runner.js'
import { buildApp } from '../api/app.js'
import { createLogger } from './logger.js'
import { listenUrl } from './listen-url.js'
import type { Config } from './config.js'
import { openBackends, openRateLimiter, type Backends } from './composition.js'
import { Ingest } from '../write/ingest.js'
import { ProcessReader } from '../read/process-reader.js'
import type { RateLimiter } from '../ports/rate-limiter.js'

export interface ServeOptions {
  /** Run the projector in this process (default: on the embedded default and PostgreSQL, where its runners run under leases; off on EventStoreDB + MongoDB). */
  projector?: boolean
}

export interface RunningServer {
  app: FastifyInstance
  backends: Backends
  /** The projector this process runs: a worker thread (embedded), in process, or none. */
  projector: EmbeddedProjector | Projector | null
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080 */
  url: string
  stop(): Promise<void>
}

/** The projector `serve` runs beside the API, where it runs, and the promise of its run (resolved when it stops). */
interface ServedProjector {
  projector: EmbeddedProjector | Projector | null
  projecting: Promise<unknown>
  where: string
}

/**
 * Starts the projector of `serve`: on the embedded default in a worker thread woken by each commit;
 * where several processes may project (PostgreSQL), each runner under its lease, this process a
 * standby for those another holds; elsewhere (a production `serve` asked to project), in this process.
 */
function startProjector(config: Config, backends: Backends, app: FastifyInstance, signal: AbortSignal): ServedProjector {
  if (backends.commitFeed !== undefined) {
    const healing = backends.healing
    const embedded = new EmbeddedProjector({
      dataDir: config.dataDir,
      logLevel: config.logLevel,
      logger: app.log,
      log: backends.commitFeed,
      ...(healing === undefined ? {} : { onReadModelsDamaged: (message: string) => healing.damaged(new Error(message)) }),
    })
    if (healing !== undefined) {
      healing.logger = app.log
      healing.writers = embedded
    }
    embedded.start()
    return { projector: embedded, projecting: Promise.resolve(), where: 'worker threads' }
  }
  const { log, readModels, isUnavailable } = backends
  if (backends.leases !== undefined) {
    const projecting = runLeasedRunners(
      {
        leases: backends.leases,
        runners: RUNNER_NAMES,
        logger: app.log,
        projector: (runner) => new Projector(log, readModels, projectorOptions('api', { logger: app.log, isUnavailable, runner })),
      },
      signal,
    )
    return { projector: null, projecting, where: 'leased runners' }
  }
  const inProcess = new Projector(log, readModels, projectorOptions('api', { logger: app.log, isUnavailable }))
  return { projector: inProcess, projecting: inProcess.run(signal), where: 'in-process' }
}

export async function startServer(config: Config, options: ServeOptions = {}): Promise<RunningServer> {
  const logger = createLogger(config.logLevel)
  const backends = await openBackends(config)
  let rateLimiter: RateLimiter | null = null
  try {
    rateLimiter = await openRateLimiter(config, logger, backends)
    const runProjector = options.projector ?? backends.mode !== 'production'
    const app = await buildApp({
      ingest: new Ingest(backends.log),
      keys: backends.keys,
      rateLimiter,
      bodyLimitBytes: config.bodyLimitBytes,
      logger,
      reader: new ProcessReader({ query: backends.query, log: backends.log }),
      ...(config.allowedHosts === null ? {} : { allowedHosts: config.allowedHosts }),
      // The read models' projection shows from the start (lag: the whole log), wherever its projector runs.
      ...(config.metrics
        ? {
            metrics: {
              log: backends.log,
              readModels: backends.readModels,
              projections: projectorCheckpoints(),
              ...(backends.healing === undefined ? {} : { readModelsRecovered: () => backends.healing?.recovered ?? 0 }),
            },
          }
        : {}),
    })
    for (const notice of backends.notices) app.log.info(notice)
    const abort = new AbortController()
    const { projector, projecting, where } = runProjector
      ? startProjector(config, backends, app, abort.signal)
      : { projector: null, projecting: Promise.resolve(), where: 'off' }
    const url = await app.listen({ port: config.port, host: config.host })
    app.log.info(
      {
        storage: backends.describe,
        projector: where,
        rateLimit: config.redisUrl !== null ? 'redis' : backends.sharedRateLimiter !== undefined ? backends.mode : 'memory',
      },
      `Ocelog listening on ${listenUrl(app.server.address(), url)}`,
    )
    const limiter = rateLimiter
    let stopped: Promise<void> | null = null
    return {
      app,
      backends,
      projector,
      url,
      stop() {
        stopped ??= (async () => {
          await app.close()
          abort.abort()
          await projecting
          if (projector instanceof EmbeddedProjector) await projector.stop()
          await limiter.close()
          await backends.close()
        })()
        return stopped
      },
    }
  } catch (error) {
    await rateLimiter?.close()
    await backends.close()
    throw error
  }
}
