/**
 * RFC 9457 problem details (DESIGN.md § Errors). Every error answer of Ocelog has this body and
 * the content type application/problem+json.
 */
import type { FastifyReply } from 'fastify'
import type { Problem } from '../schemas/api.js'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

const TITLES: Record<number, [string, string]> = {
  400: ['malformed-request', 'Malformed request'],
  401: ['unauthorized', 'API key not accepted'],
  403: ['forbidden', 'Scope does not permit this endpoint'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
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
