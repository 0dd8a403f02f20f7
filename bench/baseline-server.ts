/**
 * Baseline (a) of the benchmark (docs/performance.md#method, Baselines): a bare Fastify server with the service's
 * ingest routes, the same TypeBox body and response schemas, and the same per-item validation
 * (src/core/validation.ts), but no authentication, rate limit, logging, record building or
 * storage. Started as its own process by bench/run.ts; prints `listening <url>` when ready.
 *
 * Env: PORT (default 0: any free port), HOST (default 127.0.0.1).
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { LIMITS } from '../src/core/limits.js'
import { itemErrorString, validateEvent, validateObjectUpsert, type FieldError, type SizeCheck } from '../src/core/validation.js'
import {
  EventBatchBody,
  EventBatchResponse,
  EventInput,
  EventResponse,
  ObjectBatchBody,
  ObjectBatchResponse,
  ObjectUpsertInput,
  ObjectUpsertResponse,
  Problem,
} from '../src/schemas/api.js'
import { messageOf } from '../src/core/errors.js'

/** As in the service: Fastify parses JSON, the handler validates item by item. */
const parseOnly = () => (data: unknown) => ({ value: data })

function sizeOf(header: string | undefined): SizeCheck {
  const n = Number(header)
  return Number.isFinite(n) ? { bodyBytes: n } : {}
}

function rejected(reply: FastifyReply, errors: readonly FieldError[]): FastifyReply {
  return reply.code(422).send({ type: 'urn:ocelog:problem:validation-failed', title: 'Validation failed', status: 422, detail: 'rejected', errors })
}

function itemsOf(body: unknown, field: 'events' | 'objects'): unknown[] | null {
  if (typeof body !== 'object' || body === null || !(field in body)) return null
  const items: unknown = (body as Record<string, unknown>)[field]
  return Array.isArray(items) && items.length <= LIMITS.batchItemsMax ? items : null
}

async function main(): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: LIMITS.bodyBytesDefault }).withTypeProvider<TypeBoxTypeProvider>()
  const errors = { 422: Problem }

  app.post('/v1/event', { validatorCompiler: parseOnly, schema: { body: EventInput, response: { 200: EventResponse, ...errors } } }, async (req, reply) => {
    const v = validateEvent(req.body as unknown, sizeOf(req.headers['content-length']))
    if (!v.ok) return rejected(reply, v.errors)
    const e = v.value
    return reply.code(200).send({
      success: true,
      event_id: randomUUID(),
      event_type: e.event,
      timestamp: e.timestamp ?? new Date().toISOString(),
      objects_count: e.objects.length,
      message: `Event "${e.event}" recorded with ${String(e.objects.length)} object(s)`,
    })
  })

  app.post(
    '/v1/event/batch',
    { validatorCompiler: parseOnly, schema: { body: EventBatchBody, response: { 200: EventBatchResponse, ...errors } } },
    async (req, reply) => {
      const items = itemsOf(req.body as unknown, 'events')
      if (items === null) return rejected(reply, [{ path: '/events', message: 'must be an array of at most 100 items' }])
      const size = sizeOf(req.headers['content-length'])
      const eventIds: string[] = []
      const failures: string[] = []
      items.forEach((item, index) => {
        const v = validateEvent(item, size)
        if (v.ok) eventIds.push(randomUUID())
        else failures.push(itemErrorString('Event', index, v.errors))
      })
      return reply.code(200).send({
        success: failures.length === 0,
        processed: eventIds.length,
        failed: failures.length,
        duplicates: 0,
        event_ids: eventIds,
        errors: failures,
        error_details: [],
      })
    },
  )

  app.post(
    '/v1/object/upsert',
    { validatorCompiler: parseOnly, schema: { body: ObjectUpsertInput, response: { 200: ObjectUpsertResponse, ...errors } } },
    async (req, reply) => {
      const v = validateObjectUpsert(req.body as unknown, sizeOf(req.headers['content-length']))
      if (!v.ok) return rejected(reply, v.errors)
      return reply.code(200).send({ success: true, object_id: randomUUID(), object_type: v.value.type, external_id: v.value.id, created: true })
    },
  )

  app.post(
    '/v1/object/batch',
    { validatorCompiler: parseOnly, schema: { body: ObjectBatchBody, response: { 200: ObjectBatchResponse, ...errors } } },
    async (req, reply) => {
      const items = itemsOf(req.body as unknown, 'objects')
      if (items === null) return rejected(reply, [{ path: '/objects', message: 'must be an array of at most 100 items' }])
      const size = sizeOf(req.headers['content-length'])
      const objects: { object_id: string; object_type: string; external_id: string; created: boolean }[] = []
      const failures: string[] = []
      items.forEach((item, index) => {
        const v = validateObjectUpsert(item, size)
        if (v.ok) objects.push({ object_id: randomUUID(), object_type: v.value.type, external_id: v.value.id, created: true })
        else failures.push(itemErrorString('Object', index, v.errors))
      })
      return reply.code(200).send({
        success: failures.length === 0,
        processed: objects.length,
        failed: failures.length,
        duplicates: 0,
        objects,
        errors: failures,
        error_details: [],
      })
    },
  )

  const url = await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' })
  process.stdout.write(`listening ${url}\n`)
  const stop = () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`baseline server: ${messageOf(error)}\n`)
  process.exit(1)
})
