/**
 * The read side over HTTP: `GET /v1/process/*` (scope `process:read`,
 * docs/api.md#authentication-and-scopes). Registered inside the /v1 plugin, so the same hook authenticates, counts the request
 * against the key's rate limit and checks the scope. Every answer reads only the key's own dataset
 * and carries `as_of`, the log position the read models had reached.
 *
 * Query parameters are parsed, not validated, by Fastify (as the ingest bodies are): the reader
 * checks them and throws InvalidParameterError, which answers 422 problem+json naming the
 * parameter, so that HTTP and the MCP tools give the same messages.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type TObject } from 'typebox'
import { InvalidParameterError, isOcelogError, type OcelogError } from '../core/errors.js'
import {
  CompareQuery,
  CompareResponse,
  PerformanceQuery,
  PerformanceResponse,
  TypeRelationsQuery,
  TypeRelationsResponse,
  VariantsQuery,
  VariantsResponse,
} from '../schemas/analysis.js'
import { Problem } from '../schemas/api.js'
import {
  EventsQuery,
  EventsResponse,
  EventTypesResponse,
  ObjectResponse,
  ObjectTypesResponse,
  ProcessMapQuery,
  MaxBytesParam,
  ProcessMapResponse,
  SummaryResponse,
} from '../schemas/process.js'
import { type Budgeted, type Fit, parseMaxBytes, withBudget, FIT } from '../read/answer-budget.js'
import type { ProcessReads } from '../read/process-reader.js'
import type { AuthContext } from './auth.js'
import { problem, sendProblem } from './problem.js'

export type { ProcessReads }

export interface ProcessRouteDeps {
  reader: ProcessReads
}

const security: { [scheme: string]: string[] }[] = [{ bearer: [] }, { apiKeyHeader: [] }]
const errorResponses = { 401: Problem, 403: Problem, 422: Problem, 429: Problem, 503: Problem }
const NoQuery = Type.Object({ max_bytes: MaxBytesParam }, { additionalProperties: false })
const ObjectParams = Type.Object({
  type: Type.String({ description: 'Object type' }),
  id: Type.String({ description: 'The object’s own id (the API’s `id`)' }),
})

/** Parameters are parsed only; the reader validates them (see module comment). */
const parseOnly = () => (data: unknown) => ({ value: data })

function requireAuth(req: FastifyRequest): AuthContext {
  if (req.auth === null) throw new Error('route reached without authentication')
  return req.auth
}

/**
 * The query string as the reader takes it: strings, and arrays only for `repeatable` parameters.
 * @throws InvalidParameterError for a parameter the endpoint does not know (a misspelt `form` is
 *   never silently ignored) or for a single-valued parameter given twice.
 */
export function readQuery(query: unknown, schema: TObject, repeatable: readonly string[] = []): Record<string, string | string[]> {
  const known = Object.keys(schema.properties)
  const out: Record<string, string | string[]> = {}
  if (typeof query !== 'object' || query === null) return out
  for (const [name, value] of Object.entries(query)) {
    if (!known.includes(name)) {
      throw new InvalidParameterError(name, `is not a parameter of this endpoint; ${known.length === 0 ? 'it takes none' : `it takes ${known.join(', ')}`}`)
    }
    if (Array.isArray(value)) {
      if (!repeatable.includes(name)) throw new InvalidParameterError(name, 'may be given at most once')
      out[name] = value.map(String)
    } else {
      out[name] = String(value)
    }
  }
  return out
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/**
 * `body` cut to the query's `max_bytes` with `fit`, with `truncated` and `approx_tokens`
 * (docs/analysis.md#answers-that-fit-an-agents-context); unchanged without `max_bytes`.
 * @throws InvalidParameterError on `max_bytes` (see parseMaxBytes).
 */
function budgeted<B extends Budgeted>(body: B, maxBytes: string | string[] | undefined, fit: Fit<B>): B {
  const max = parseMaxBytes(single(maxBytes))
  if (max !== undefined) withBudget(body, max, fit)
  return body
}

/**
 * Maps the reader's errors (Ocelog's error union) to problems: InvalidParameterError → 422 with
 * `errors: [{path: <parameter>, message: <rule>}]`, NotFoundError → 404. Local to the read routes
 * until the union's one mapping lands in problem.ts; other errors go to the app's error handler.
 */
function answerOcelogError(error: OcelogError, reply: FastifyReply): FastifyReply {
  switch (error.kind) {
    case 'invalid_parameter':
      return sendProblem(reply, problem(422, `parameter ${error.message}`, { errors: [{ path: error.parameter, message: error.rule }] }))
    case 'not_found':
      return sendProblem(reply, problem(404, error.message))
    default:
      throw error
  }
}

/** Registers /v1/process/* on `app`, a child of the /v1 plugin (whose hook sets `req.auth`). */
export async function processRoutes(app: FastifyInstance, deps: ProcessRouteDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  const { reader } = deps

  r.setErrorHandler((error: FastifyError | OcelogError, _req, reply) => {
    if (isOcelogError(error)) return answerOcelogError(error, reply)
    // Rethrown errors go to the parent's handler (the app's problem mapping).
    throw error
  })

  r.get(
    '/map',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'The object-centric process map (directly-follows graph per object type, after pm4py’s OC-DFG)',
        description:
          'Per object type: activities with event, object and (event, object) counts and run time; directly-follows edges with ' +
          'occurrences, objects, event couples, elapsed and waiting time; start and end activities. Times in seconds. ' +
          '`object_type` may repeat (default: every type); `from` inclusive and `to` exclusive filter the events by `timestamp` first; ' +
          '`max_edges` keeps each type’s most frequent edges and reports `edges_left_out`.',
        tags: ['process'],
        security,
        querystring: ProcessMapQuery,
        response: { 200: ProcessMapResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, ProcessMapQuery, ['object_type'])
      const body = await reader.processMap(auth.datasetId, {
        object_type: q.object_type,
        from: single(q.from),
        to: single(q.to),
        max_edges: single(q.max_edges),
      })
      return reply.code(200).send(budgeted(body, q.max_bytes, FIT.processMap))
    },
  )

  r.get(
    '/performance',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Object-centric performance per activity: where and why events wait for their input objects (after OPerA)',
        description:
          'Per activity: sojourn (time from the last input being ready to the event), flow and synchronization time; per object type pooling, ' +
          'lagging and readying time and how often it held the delaying object; the slowest events. Times in seconds. `object_type` may repeat ' +
          '(only objects of those types count); `from` inclusive and `to` exclusive select the measured events by `timestamp`, while their ' +
          'predecessors come from whole traces; `slowest` is 0 to 100 (default 5). Definitions: docs/analysis.md.',
        tags: ['process'],
        security,
        querystring: PerformanceQuery,
        response: { 200: PerformanceResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, PerformanceQuery, ['object_type'])
      const body = await reader.performance(auth.datasetId, { object_type: q.object_type, from: single(q.from), to: single(q.to), slowest: single(q.slowest) })
      return reply.code(200).send(budgeted(body, q.max_bytes, FIT.performance))
    },
  )

  r.get(
    '/variants',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Trace variants of one object type (pm4py’s flattened variants): the main paths, most frequent first, a page at a time',
        description:
          'Each variant: the activity sequence of an object’s events in the window, its objects, share and trace duration (seconds), and up to 3 ' +
          'example object ids. `limit` is 1 to 1000 (default 100); pass `next_cursor` as `cursor` for the next page. Definitions: docs/analysis.md.',
        tags: ['process'],
        security,
        querystring: VariantsQuery,
        response: { 200: VariantsResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, VariantsQuery)
      const body = await reader.variants(auth.datasetId, {
        object_type: single(q.object_type),
        from: single(q.from),
        to: single(q.to),
        limit: single(q.limit),
        cursor: single(q.cursor),
      })
      return reply.code(200).send(budgeted(body, q.max_bytes, FIT.variants))
    },
  )

  r.get(
    '/type-relations',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'How the object types relate: activity × object type counts and cardinalities (pm4py’s ET-OT), and O2O relations between types',
        description:
          'Per (activity, object type): events, E2O links and objects per event {min, mean, max} over the events in the window (`from` inclusive, ' +
          '`to` exclusive); per (source type, qualifier, target type): the O2O relationships of the dataset. Definitions: docs/analysis.md.',
        tags: ['process'],
        security,
        querystring: TypeRelationsQuery,
        response: { 200: TypeRelationsResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, TypeRelationsQuery)
      return reply
        .code(200)
        .send(budgeted(await reader.typeRelations(auth.datasetId, { from: single(q.from), to: single(q.to) }), q.max_bytes, FIT.typeRelations))
    },
  )

  r.get(
    '/compare',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'What changed: the process map and performance of two time windows side by side, with differences and highlights',
        description:
          'Window a is `a_from`–`a_to`, window b `b_from`–`b_to` (each bound optional: open). Per (object type, activity): events and the run ' +
          'time median; per (object type, edge): total and the elapsed and waiting medians; per activity: the sojourn and synchronization ' +
          'medians; each as {a, b, diff} (b − a; null where absent in one window). `highlights`: the largest relative changes. ' +
          '`object_type` may repeat; `max_edges` keeps each type’s most frequent edges (in either window) and reports `edges_left_out`. ' +
          'Definitions: docs/analysis.md.',
        tags: ['process'],
        security,
        querystring: CompareQuery,
        response: { 200: CompareResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, CompareQuery, ['object_type'])
      const body = await reader.compare(auth.datasetId, {
        object_type: q.object_type,
        a_from: single(q.a_from),
        a_to: single(q.a_to),
        b_from: single(q.b_from),
        b_to: single(q.b_to),
        max_edges: single(q.max_edges),
      })
      return reply.code(200).send(budgeted(body, q.max_bytes, FIT.compare))
    },
  )

  // The endpoints without parameters: the dataset's counts and its types.
  const whole = [
    {
      url: '/summary',
      summary: 'Counts of the dataset: events, objects, event and object types, E2O links, first and last event time',
      response: SummaryResponse,
      read: async (datasetId: string, maxBytes: string | undefined) => budgeted(await reader.summary(datasetId), maxBytes, FIT.summary),
    },
    {
      url: '/event-types',
      summary: 'Event types with their count, first and last seen, and attribute names with the JSON types of their values',
      response: EventTypesResponse,
      read: async (datasetId: string, maxBytes: string | undefined) => budgeted(await reader.eventTypes(datasetId), maxBytes, FIT.types(undefined)),
    },
    {
      url: '/object-types',
      summary: 'Object types with their count of objects, first and last seen, and attribute names with the JSON types of their values',
      response: ObjectTypesResponse,
      read: async (datasetId: string, maxBytes: string | undefined) => budgeted(await reader.objectTypes(datasetId), maxBytes, FIT.types(undefined)),
    },
  ]
  for (const endpoint of whole) {
    app.get(
      endpoint.url,
      {
        config: { scope: 'process:read' },
        validatorCompiler: parseOnly,
        schema: { summary: endpoint.summary, tags: ['process'], security, querystring: NoQuery, response: { 200: endpoint.response, ...errorResponses } },
      },
      async (req, reply) => {
        const auth = requireAuth(req)
        const q = readQuery(req.query, NoQuery)
        return reply.code(200).send(await endpoint.read(auth.datasetId, single(q.max_bytes)))
      },
    )
  }

  r.get(
    '/objects/:type/:id',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'One object: attributes and their history, its trace (events in time order with qualifiers), and the objects it shares events with',
        tags: ['process'],
        security,
        params: ObjectParams,
        querystring: NoQuery,
        response: { 200: ObjectResponse, 404: Problem, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, NoQuery)
      const params = req.params as { type: string; id: string }
      return reply.code(200).send(budgeted(await reader.object(auth.datasetId, params.type, params.id), q.max_bytes, FIT.object))
    },
  )

  r.get(
    '/events',
    {
      config: { scope: 'process:read' },
      validatorCompiler: parseOnly,
      schema: {
        summary: 'Events with their E2O links, in (timestamp, position) order, a page at a time',
        description: '`limit` is 1 to 1000 (default 100); pass `next_cursor` of an answer as `cursor` for the next page.',
        tags: ['process'],
        security,
        querystring: EventsQuery,
        response: { 200: EventsResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req)
      const q = readQuery(req.query, EventsQuery)
      const body = await reader.events(auth.datasetId, {
        event_type: single(q.event_type),
        object_type: single(q.object_type),
        object_id: single(q.object_id),
        from: single(q.from),
        to: single(q.to),
        limit: single(q.limit),
        cursor: single(q.cursor),
      })
      return reply.code(200).send(budgeted(body, q.max_bytes, FIT.events))
    },
  )
}
