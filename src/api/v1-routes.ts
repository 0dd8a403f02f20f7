/**
 * The /v1 endpoints (docs/api.md#endpoints): the five of the ingestion contract and the
 * extension POST /v1/types (docs/api.md#declared-types). Bodies are declared in TypeBox for the OpenAPI
 * document, but validated item by item by src/core/validation.ts, so that a batch's bad item
 * fails alone and single requests and batch items get the same messages.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Ingest, ItemFailure } from '../write/ingest.js'
import { LIMITS } from '../core/limits.js'
import type { RecordContext } from '../core/records.js'
import { isoNow } from '../core/timestamp.js'
import { itemErrorString, type FieldError } from '../core/validation.js'
import {
  EventBatchBody,
  EventBatchResponse,
  EventInput,
  EventResponse,
  HealthResponse,
  ObjectBatchBody,
  ObjectBatchResponse,
  ObjectUpsertInput,
  ObjectUpsertResponse,
  Problem,
  TypesInput,
  TypesResponse,
} from '../schemas/api.js'
import { authHook, type AuthContext, type AuthDeps } from './auth.js'
import { problem, sendProblem } from './problem.js'

export interface V1Deps extends AuthDeps {
  ingest: Ingest
}

const errorResponses = {
  400: Problem,
  401: Problem,
  403: Problem,
  409: Problem,
  413: Problem,
  415: Problem,
  422: Problem,
  429: Problem,
  503: Problem,
}
const security: { [scheme: string]: string[] }[] = [{ bearer: [] }, { apiKeyHeader: [] }]

/** Body validation happens in the handler (see module comment); Fastify only parses JSON. */
const parseOnly = () => (data: unknown) => ({ value: data })

function contextOf(req: FastifyRequest, auth: AuthContext): RecordContext {
  return { datasetId: auth.datasetId, keyId: auth.keyId, requestId: req.id, receivedAt: isoNow() }
}

/** Size of the body as parsed, when known: Content-Length, unless the body came compressed (then its decompressed size is unknown here). */
function bodyBytes(req: FastifyRequest): number | undefined {
  const coding = req.headers['content-encoding']
  if (coding !== undefined && coding !== 'identity') return undefined
  const n = Number(req.headers['content-length'])
  return Number.isFinite(n) ? n : undefined
}

function requireAuth(req: FastifyRequest): AuthContext {
  if (req.auth === null) throw new Error('route reached without authentication')
  return req.auth
}

function validationProblem(reply: FastifyReply, what: string, errors: readonly FieldError[]): FastifyReply {
  const first = errors[0]
  const summary = first === undefined ? '' : `${first.path === '' ? '' : `${first.path}: `}${first.message}`
  const more = errors.length > 1 ? ` (and ${String(errors.length - 1)} more)` : ''
  return sendProblem(reply, problem(422, `${what} was rejected: ${summary}${more}`, { errors: errors.map((e) => ({ path: e.path, message: e.message })) }))
}

/**
 * The single-item body with the `Idempotency-Key` request header as its `idempotency_key` (README
 * § Exactly once, after the IETF httpapi draft "The Idempotency-Key HTTP Header Field").
 * @returns the body to ingest (any JSON value: validation judges it), or `sent` when a 422 was sent
 *   because the header and the body's field differ.
 */
function withHeaderKey(req: FastifyRequest, reply: FastifyReply, what: string): { body: unknown } | 'sent' {
  const header = req.headers['idempotency-key']
  const body = req.body as unknown
  if (header === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return { body }
  const key = Array.isArray(header) ? header.join(', ') : header
  const inBody = (body as Record<string, unknown>).idempotency_key
  if (inBody !== undefined && inBody !== key) {
    void validationProblem(reply, what, [
      { path: '/idempotency_key', message: 'differs from the Idempotency-Key header; send the key once, or the same key in both' },
    ])
    return 'sent'
  }
  return { body: { ...body, idempotency_key: key } }
}

/** A batch request with an `Idempotency-Key` header: refused, since each item carries its own key. */
function refuseBatchHeader(req: FastifyRequest, reply: FastifyReply): boolean {
  if (req.headers['idempotency-key'] === undefined) return false
  void validationProblem(reply, 'The batch', [
    { path: 'Idempotency-Key', message: 'applies to the single-item endpoints only; give each batch item its own idempotency_key' },
  ])
  return true
}

/** The answer to a single item that failed: 409 when its key was recorded with other content, else 422. */
function itemProblem(reply: FastifyReply, what: string, failure: ItemFailure): FastifyReply {
  if (failure.conflict !== true) return validationProblem(reply, what, failure.errors)
  const first = failure.errors[0]
  return sendProblem(
    reply,
    problem(409, `${what} was not recorded: idempotency_key ${first?.message ?? 'conflicts'}`, {
      errors: failure.errors.map((e) => ({ path: e.path, message: e.message })),
    }),
  )
}

/** Checks a batch envelope `{ <field>: [...] }`; returns the items or sends 422. */
function batchItems(body: unknown, field: 'events' | 'objects', reply: FastifyReply): unknown[] | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    void validationProblem(reply, 'The batch', [{ path: '', message: `must be a JSON object with the field "${field}"` }])
    return null
  }
  const extra = Object.keys(body).filter((k) => k !== field)
  const items: unknown = (body as Record<string, unknown>)[field]
  const errors: FieldError[] = extra.map((k) => ({ path: `/${k}`, message: `unknown field "${k}" is not allowed` }))
  if (items === undefined) errors.push({ path: `/${field}`, message: `is required (an array of at most ${String(LIMITS.batchItemsMax)} items)` })
  else if (!Array.isArray(items)) errors.push({ path: `/${field}`, message: `must be an array of at most ${String(LIMITS.batchItemsMax)} items` })
  else if (items.length > LIMITS.batchItemsMax) {
    errors.push({ path: `/${field}`, message: `has ${String(items.length)} items; a batch holds at most ${String(LIMITS.batchItemsMax)}` })
  }
  if (errors.length > 0 || !Array.isArray(items)) {
    void validationProblem(reply, 'The batch', errors)
    return null
  }
  return items
}

function itemReport(label: 'Event' | 'Object', failures: readonly ItemFailure[]) {
  return {
    errors: failures.map((f) => itemErrorString(label, f.index, f.errors)),
    error_details: failures.flatMap((f) => f.errors.map((e) => ({ index: f.index, path: e.path, message: e.message }))),
  }
}

/** Registers /v1 on `app` (call inside its own encapsulated plugin). */
export async function v1Routes(app: FastifyInstance, deps: V1Deps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  r.decorateRequest('auth', null)
  r.addHook('onRequest', authHook(deps))

  r.post(
    '/event',
    {
      config: { scope: 'ingest:write' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Record one event with 1 to 50 objects',
        tags: ['ingest'],
        security,
        body: EventInput,
        response: { 200: EventResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const item = withHeaderKey(req, reply, 'The event')
      if (item === 'sent') return reply
      const { accepted, failures } = await deps.ingest.recordEvents([item.body], contextOf(req, auth), { bodyBytes: bodyBytes(req) })
      const failure = failures[0]
      if (failure !== undefined) return itemProblem(reply, 'The event', failure)
      const e = accepted[0]
      if (e === undefined) throw new Error('event neither accepted nor rejected')
      return reply.code(200).send({
        success: true,
        event_id: e.event_id,
        event_type: e.event_type,
        timestamp: e.timestamp,
        objects_count: e.objects.length,
        message: `Event "${e.event_type}" recorded with ${String(e.objects.length)} object(s)`,
      })
    },
  )

  r.post(
    '/event/batch',
    {
      config: { scope: 'ingest:write' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Record up to 100 events; items succeed or fail independently',
        tags: ['ingest'],
        security,
        body: EventBatchBody,
        response: { 200: EventBatchResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      if (refuseBatchHeader(req, reply)) return reply
      const items = batchItems(req.body as unknown, 'events', reply)
      if (items === null) return reply
      const { accepted, duplicates, failures } = await deps.ingest.recordEvents(items, contextOf(req, auth), { bodyBytes: bodyBytes(req) })
      return reply.code(200).send({
        success: failures.length === 0,
        processed: accepted.length,
        failed: failures.length,
        duplicates,
        event_ids: accepted.map((e) => e.event_id),
        ...itemReport('Event', failures),
      })
    },
  )

  r.post(
    '/object/upsert',
    {
      config: { scope: 'ingest:write' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Create or update one object; properties are merged',
        tags: ['ingest'],
        security,
        body: ObjectUpsertInput,
        response: { 200: ObjectUpsertResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const item = withHeaderKey(req, reply, 'The object')
      if (item === 'sent') return reply
      const { results, failures } = await deps.ingest.upsertObjects([item.body], contextOf(req, auth), { bodyBytes: bodyBytes(req) })
      const failure = failures[0]
      if (failure !== undefined) return itemProblem(reply, 'The object', failure)
      const o = results[0]
      if (o === undefined) throw new Error('object neither accepted nor rejected')
      return reply.code(200).send({ success: true, ...o })
    },
  )

  r.post(
    '/object/batch',
    {
      config: { scope: 'ingest:write' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Create or update up to 100 objects; items succeed or fail independently',
        tags: ['ingest'],
        security,
        body: ObjectBatchBody,
        response: { 200: ObjectBatchResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      if (refuseBatchHeader(req, reply)) return reply
      const items = batchItems(req.body as unknown, 'objects', reply)
      if (items === null) return reply
      const { results, duplicates, failures } = await deps.ingest.upsertObjects(items, contextOf(req, auth), { bodyBytes: bodyBytes(req) })
      return reply.code(200).send({
        success: failures.length === 0,
        processed: results.length,
        failed: failures.length,
        duplicates,
        objects: results,
        ...itemReport('Object', failures),
      })
    },
  )

  r.post(
    '/types',
    {
      config: { scope: 'ingest:write' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Ocelog extension: declare event and object types with their attributes, used or not',
        tags: ['ingest'],
        security,
        body: TypesInput,
        response: { 200: TypesResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const item = withHeaderKey(req, reply, 'The declaration')
      if (item === 'sent') return reply
      const outcome = await deps.ingest.declareTypes(item.body, contextOf(req, auth), { bodyBytes: bodyBytes(req) })
      if (!outcome.ok) return itemProblem(reply, 'The declaration', outcome.failure)
      return reply.code(200).send(outcome.result)
    },
  )

  r.get(
    '/health',
    {
      config: { scope: null },
      schema: {
        summary: 'Check reachability and key validity (needs no scope)',
        tags: ['health'],
        security,
        response: { 200: HealthResponse, 401: Problem, 429: Problem },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      return reply.code(200).send({
        status: 'ok' as const,
        dataset_id: auth.datasetId,
        dataset_name: auth.datasetName,
        key_id: auth.keyId,
        key_name: auth.keyName,
        scopes: auth.scopes,
      })
    },
  )
}
