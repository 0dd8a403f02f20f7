/**
 * RFC 9457 problem details. Every error answer of Ocelog has this body and the content type
 * application/problem+json; this module is the one place that maps Ocelog's error union
 * (src/core/errors.ts) to an answer.
 */
import type { FastifyReply } from 'fastify'
import { messageOf, isOcelogError, type OcelogError, unreachable } from '../core/errors.js'
import type { Problem } from '../schemas/api.js'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

const TITLES: Record<number, [string, string]> = {
  400: ['malformed-request', 'Malformed request'],
  401: ['unauthorized', 'API key not accepted'],
  403: ['forbidden', 'Scope does not permit this endpoint'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
  409: ['conflict', 'Conflict'],
  413: ['payload-too-large', 'Request body too large'],
  415: ['unsupported-media-type', 'Unsupported media type'],
  422: ['validation-failed', 'Validation failed'],
  429: ['rate-limited', 'Rate limit exceeded'],
  500: ['internal-error', 'Internal error'],
  503: ['unavailable', 'Service unavailable'],
}

/** Builds a problem body; `type` is a stable URN per status, e.g. `urn:ocelog:problem:validation-failed`. */
export function problem(status: number, detail: string, extra: Partial<Problem> = {}): Problem {
  const [slug, title] = TITLES[status] ?? ['error', 'Error']
  return { type: `urn:ocelog:problem:${slug}`, title, status, detail, ...extra }
}

/** Sends a problem answer. */
export function sendProblem(reply: FastifyReply, body: Problem): FastifyReply {
  return reply
    .code(body.status)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send({ ...body, request_id: reply.request.id })
}

/** An answer for an error: the problem body and, for 503, the seconds a client should wait (`Retry-After`). */
export interface ErrorAnswer {
  body: Problem
  retryAfterSeconds?: number
}

const UNAVAILABLE = 'the log could not record this request; nothing of it was accepted. Retry.'

/**
 * The answer for one of Ocelog's own errors (exhaustive over `kind`): InvalidParameterError → 422
 * with `errors: [{path: <parameter>, message: <rule>}]`; NotFoundError → 404; an unavailable log
 * or engine → 503 with Retry-After 1 (nothing was accepted); the rest (CLI, configuration and
 * projector errors that reach HTTP only through a bug) → their nearest status.
 */
export function problemForOcelogError(error: OcelogError): ErrorAnswer {
  switch (error.kind) {
    case 'invalid_parameter':
      return { body: problem(422, error.message, { errors: [{ path: error.parameter, message: error.rule }] }) }
    case 'not_found':
      return { body: problem(404, error.message) }
    case 'log_unavailable':
    case 'engine_unavailable':
    case 'checkpoint_conflict':
      return { body: problem(503, UNAVAILABLE), retryAfterSeconds: 1 }
    case 'projection_stopped':
      return { body: problem(503, `the read models are not being kept: ${error.message}`), retryAfterSeconds: 1 }
    case 'read_models_rebuilding':
      return {
        body: problem(503, `${error.message}. Retry later; ingest is not affected.`, { rebuild: { position: error.position, head: error.head } }),
        retryAfterSeconds: 5,
      }
    case 'dataset_exists':
      return { body: problem(409, error.message) }
    case 'admin':
    case 'cli':
    case 'ocel_read':
      return { body: problem(422, error.message) }
    case 'append_too_large':
      return { body: problem(413, error.message) }
    case 'config':
      return { body: problem(500, 'the service is misconfigured; see its log') }
    default:
      return unreachable(error)
  }
}

/**
 * The answer for any error that reaches the error handler: Ocelog's own errors as above; a
 * Fastify or plugin error with a 4xx status as that status; anything else is 500 (a bug).
 */
export function problemForError(error: unknown): ErrorAnswer {
  if (isOcelogError(error)) return problemForOcelogError(error)
  const status = (error as { statusCode?: unknown } | null)?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) return { body: problem(status, messageOf(error)) }
  return { body: problem(500, 'internal error; nothing of this request was accepted unless its records appear in the log') }
}

/** Sends the answer for `error` (see problemForError), logging every 5xx with the error. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const answer = problemForError(error)
  if (answer.body.status >= 500) reply.request.log.error({ err: error }, answer.body.detail)
  if (answer.retryAfterSeconds !== undefined) reply.header('retry-after', answer.retryAfterSeconds)
  return sendProblem(reply, answer.body)
}
