/**
 * The server entry (`ocelog serve`): opens the backends, builds the app, listens, and in embedded
 * mode runs the projector beside the API. On SIGTERM/SIGINT it stops taking requests, lets the
 * ones in flight finish (their records are durable before they answer), stops the projector and
 * closes the engines.
 */
import type { FastifyInstance } from 'fastify'
import { READ_MODELS_PROJECTION } from '../projections/checkpoints.js'
import { Projector } from './projector.js'
import { buildApp } from './api/app.js'
import { createLogger } from './logger.js'
import type { Config } from './config.js'
import { openBackends, openRateLimiter, type Backends } from './composition.js'
import { Ingest } from './core/ingest.js'
import { ProcessReader } from './read/process-reader.js'
import type { RateLimiter } from './ports/rate-limiter.js'

export interface ServeOptions {
  /** Run the projector in this process (default: only in embedded mode). */
  projector?: boolean
}

export interface RunningServer {
  app: FastifyInstance
  backends: Backends
  projector: Projector | null
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080 */
  url: string
  stop(): Promise<void>
}

export async function startServer(config: Config, options: ServeOptions = {}): Promise<RunningServer> {
  const logger = createLogger(config.logLevel)
  const backends = await openBackends(config)
  let rateLimiter: RateLimiter | null = null
  try {
    rateLimiter = await openRateLimiter(config, logger)
    const runProjector = options.projector ?? backends.mode === 'embedded'
    const app = await buildApp({
      ingest: new Ingest(backends.log),
      keys: backends.keys,
      rateLimiter,
      bodyLimitBytes: config.bodyLimitBytes,
      logger,
      reader: new ProcessReader({ query: backends.query, log: backends.log }),
      ...(config.allowedHosts === null ? {} : { allowedHosts: config.allowedHosts }),
      // The read models' projection shows from the start (lag: the whole log), wherever its projector runs.
      ...(config.metrics ? { metrics: { log: backends.log, readModels: backends.readModels, projections: [READ_MODELS_PROJECTION] } } : {}),
    })
    const abort = new AbortController()
    const projector = runProjector ? new Projector(backends.log, backends.readModels, { logger: app.log, isUnavailable: backends.isUnavailable }) : null
    const projecting = projector?.run(abort.signal) ?? Promise.resolve()
    const url = await app.listen({ port: config.port, host: config.host })
    app.log.info(
      { storage: backends.describe, projector: projector === null ? 'off' : 'in-process', rateLimit: config.redisUrl === null ? 'memory' : 'redis' },
      `Ocelog listening on ${url}`,
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
