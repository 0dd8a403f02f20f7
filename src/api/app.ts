/**
 * The Fastify application, built from its dependencies (pure core, thin adapters): no listening
 * here, so tests drive it through `inject` and the server entry (src/app/server.ts) listens.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify'
import compress from '@fastify/compress'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Ingest } from '../write/ingest.js'
import { LIMITS } from '../core/limits.js'
import type { KeyStore } from '../ports/key-store.js'
import type { RateLimiter } from '../ports/rate-limiter.js'
import { defaultAllowedHosts, mcpRoute } from './mcp-route.js'
import { openApiDescription } from './openapi-description.js'
import { processRoutes, type ProcessReads } from './process-routes.js'
import { closeInStagesIfBodyUnread } from './staged-close.js'
import { uiRoutes } from './ui-routes.js'
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
  /** The read side (`/v1/process/*`, `/mcp`); without it those routes are absent. */
  reader?: ProcessReads
  /** Host names that Host and Origin may name on `/mcp` (DNS rebinding protection); default: defaultAllowedHosts(). */
  allowedHosts?: readonly string[]
  /** Serve `GET /metrics` (Prometheus text) from these; omitted: no metrics. */
  metrics?: MetricsSource
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Builds the app; call `ready()` (or `listen`) before use. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const bodyLimit = deps.bodyLimitBytes ?? LIMITS.bodyBytesDefault
  const app = Fastify({
    bodyLimit,
    // `__proto__` and `constructor` are ordinary attribute names in JSON (docs/api.md#event-input,
    // properties: any JSON data). JSON.parse makes them own data properties, which cannot reach a
    // prototype; the code after it copies attributes by spread (own data properties again), never
    // by assignment.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    ...(deps.logger === false || deps.logger === undefined ? { logger: false } : { loggerInstance: deps.logger }),
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
  })

  // Only JSON bodies are accepted (docs/api.md#endpoints): without the built-in text parser, text/plain answers 415.
  app.removeContentTypeParser('text/plain')
  addRequestHook(app, bodyLimit)
  if (deps.metrics !== undefined) installMetrics(app, deps.metrics)
  setErrorHandlers(app, bodyLimit)

  // Compressed request bodies (RFC 9110 § 8.4): decompressed before parsing; Fastify holds the
  // decompressed size to bodyLimit (413), so a small zip bomb cannot grow past it. Answers are
  // not compressed.
  await app.register(compress, { globalCompression: false, globalDecompression: true, requestEncodings: ['gzip', 'deflate', 'br', 'identity'] })

  await registerDocs(app, deps.version ?? '1', bodyLimit)

  const { reader } = deps
  await app.register(
    async (v1) => {
      await v1Routes(v1, { ingest: deps.ingest, keys: deps.keys, rateLimiter: deps.rateLimiter })
      // A child of /v1: the same authentication, rate limit and scope hook.
      if (reader !== undefined) await v1.register(async (p) => processRoutes(p, { reader }), { prefix: '/process' })
    },
    { prefix: '/v1' },
  )
  if (reader !== undefined) {
    const allowedHosts = deps.allowedHosts ?? defaultAllowedHosts()
    await app.register(async (m) => mcpRoute(m, { keys: deps.keys, rateLimiter: deps.rateLimiter, reader, allowedHosts, version: deps.version ?? '1' }))
  }
  await app.register(uiRoutes)
  return app
}

/** 413 for a body over `bodyLimit` bytes (docs/api.md#limits). */
function tooLarge(reply: FastifyReply, bodyLimit: number): FastifyReply {
  return sendProblem(reply, problem(413, `request body is over the limit of ${String(bodyLimit)} bytes; split it into smaller batches`))
}

/**
 * The hook every request passes first: its id echoed in `x-request-id`, its Content-Encoding
 * lower-cased, and a body that Content-Length declares over `bodyLimit` bytes refused with 413
 * before any of it is read (docs/api.md#limits).
 */
function addRequestHook(app: FastifyInstance, bodyLimit: number): void {
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id)
    closeInStagesIfBodyUnread(req.raw)
    // Content codings are case-insensitive (RFC 9110 § 8.4.1); the decompression below matches exact names.
    const coding = req.headers['content-encoding']
    if (typeof coding === 'string') req.headers['content-encoding'] = coding.trim().toLowerCase()
    // A body that Content-Length says is too big is refused before any of it is read (and before
    // the key is looked up); the connection then closes in stages, so the client reads the 413.
    const declared = Number(req.headers['content-length'])
    if (declared > bodyLimit) {
      reply.header('connection', 'close')
      return tooLarge(reply, bodyLimit)
    }
  })
}

/**
 * Fastify's own errors as problem+json (docs/api.md#errors): 415 for a media type or content coding
 * not accepted, 413 over `bodyLimit`, 400 for a body that does not decompress or parse; 404 for
 * no route; anything else through sendError.
 */
function setErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(reply, problem(415, `Content-Type ${String(req.headers['content-type'] ?? '(none)')} is not accepted; send application/json`))
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return tooLarge(reply, bodyLimit)
      case 'FST_CP_ERR_INVALID_CONTENT_ENCODING':
        return sendProblem(
          reply,
          problem(415, `Content-Encoding ${String(req.headers['content-encoding'])} is not accepted; send gzip, deflate, br or an uncompressed body`),
        )
      case 'FST_CP_ERR_INVALID_CONTENT':
        return sendProblem(reply, problem(400, `request body does not decompress as its Content-Encoding ${String(req.headers['content-encoding'])} says`))
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
}

/** The OpenAPI description of the routes registered after it (`/openapi.json`) and its browsable form (`/docs`; docs/api.md#endpoints). */
async function registerDocs(app: FastifyInstance, version: string, bodyLimit: number): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ocelog ingestion API',
        version,
        description: openApiDescription(bodyLimit),
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
}
