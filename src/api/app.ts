/**
 * The Fastify application, built from its dependencies (pure core, thin adapters): no listening
 * here, so tests drive it through `inject` and the server entry (src/server.ts) listens.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Ingest } from '../core/ingest.js'
import { LIMITS } from '../core/limits.js'
import type { KeyStore } from '../ports/key-store.js'
import type { RateLimiter } from '../ports/rate-limiter.js'
import { installMetrics, type MetricsSource } from './metrics.js'
import { problem, sendError, sendProblem } from './problem.js'
import { v1Routes } from './v1-routes.js'

export interface AppDeps {
  ingest: Ingest
  keys: KeyStore
  rateLimiter: RateLimiter
  /** Largest request body in bytes (413 above it). */
  bodyLimitBytes?: number
  /** Request logger (pino), or false for none (tests). */
  logger?: FastifyBaseLogger | false
  version?: string
  /** Serve `GET /metrics` (Prometheus text) from these; omitted: no metrics. */
  metrics?: MetricsSource
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Builds the app; call `ready()` (or `listen`) before use. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: deps.bodyLimitBytes ?? LIMITS.bodyBytesDefault,
    ...(deps.logger === false || deps.logger === undefined ? { logger: false } : { loggerInstance: deps.logger }),
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
  })

  // Only JSON bodies are accepted (spec § Endpoints): without the built-in text parser, text/plain answers 415.
  app.removeContentTypeParser('text/plain')

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id)
  })
  if (deps.metrics !== undefined) installMetrics(app, deps.metrics)

  app.setErrorHandler((error: FastifyError, req, reply) => {
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(reply, problem(415, `Content-Type ${String(req.headers['content-type'] ?? '(none)')} is not accepted; send application/json`))
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(reply, problem(413, `request body is over the limit of ${String(app.initialConfig.bodyLimit)} bytes; split it into smaller batches`))
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendProblem(reply, problem(400, 'request body is empty; send a JSON object'))
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendProblem(reply, problem(400, 'Content-Length does not match the body'))
      default:
        break
    }
    if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (error.statusCode === 400 && /JSON/i.test(error.message))) {
      return sendProblem(reply, problem(400, `request body is not valid JSON: ${error.message}`))
    }
    return sendError(reply, error)
  })

  app.setNotFoundHandler((req, reply) => sendProblem(reply, problem(404, `no route ${req.method} ${req.url}; see /docs`)))

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ocelog ingestion API',
        version: deps.version ?? '1',
        description:
          'Object-centric process events (OCEL 2.0) in, an append-only log and read models out. Contract: the Ocelog ingestion API specification; errors are RFC 9457 problem details.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Ocelog-Api-Key' },
        },
      },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(async (v1) => v1Routes(v1, { ingest: deps.ingest, keys: deps.keys, rateLimiter: deps.rateLimiter }), { prefix: '/v1' })
  return app
}
