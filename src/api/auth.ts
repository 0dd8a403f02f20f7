/**
 * Authentication, rate limit and scopes for /v1 (docs/api.md#authentication-and-scopes, #errors, #rate-limit).
 * Order: key (401) → budget (429, every request of a valid key counts) → scope (403).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { parseToken, secretMatches } from '../core/api-keys.js'
import type { Dataset, KeyStore } from '../ports/key-store.js'
import type { RateLimiter } from '../ports/rate-limiter.js'
import type { Scope } from '../schemas/api.js'
import { problem, sendProblem } from './problem.js'

/** Who is calling: the key and the one dataset it writes to. */
export interface AuthContext {
  keyId: string
  keyName: string
  datasetId: string
  datasetName: string
  scopes: Scope[]
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null
  }
  interface FastifyContextConfig {
    /** Scope the route needs; null: any valid key (GET /v1/health). */
    scope?: Scope | null
  }
}

export const API_KEY_HEADER = 'x-ocelog-api-key'

/**
 * Every line of the header field `name` (lower case), in order: Node's `headersDistinct`, read
 * from `rawHeaders` because Fastify's `inject` requests have `rawHeaders` but no `headersDistinct`.
 */
function fieldLines(req: FastifyRequest, name: string): string[] {
  const raw = req.raw.rawHeaders
  const out: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === name) out.push((raw[i + 1] ?? '').trim())
  }
  return out
}

/** RFC 9110 § 11.6.2 / § 11.1: the scheme is case-insensitive and one or more spaces follow it. */
const BEARER = /^bearer +(\S+)$/i

/**
 * The presented token, or a reason why there is none (docs/api.md#authentication-and-scopes).
 * Every field line counts (Node's `req.headers` keeps only the first Authorization), so two
 * different credentials in one request are refused as ambiguous, like Authorization and
 * X-Ocelog-Api-Key that disagree.
 */
export function presentedToken(req: FastifyRequest): { token: string } | { error: string } {
  const authorization = fieldLines(req, 'authorization')
  const custom = [...new Set(fieldLines(req, API_KEY_HEADER))]
  if (authorization.length > 1) return { error: `Authorization was sent ${String(authorization.length)} times; send one credential` }
  if (custom.length > 1) return { error: 'X-Ocelog-Api-Key was sent more than once with different keys; send one' }
  const auth = authorization[0]
  let bearer: string | undefined
  if (auth !== undefined) {
    const m = BEARER.exec(auth)
    if (m === null || m[1] === undefined) return { error: 'Authorization header must be "Bearer <API_KEY>"' }
    bearer = m[1]
  }
  const header = custom[0]
  if (bearer !== undefined && header !== undefined && bearer !== header) {
    return { error: 'Authorization and X-Ocelog-Api-Key carry different keys; send one' }
  }
  const token = bearer ?? header
  if (token === undefined || token === '') return { error: 'no API key: send Authorization: Bearer <API_KEY> or X-Ocelog-Api-Key: <API_KEY>' }
  return { token }
}

export interface AuthDeps {
  keys: KeyStore
  rateLimiter: RateLimiter
}

/** Builds the onRequest hook of the /v1 scope. */
export function authHook(deps: AuthDeps) {
  // Dataset names never change, so they are cached for the life of the process.
  const datasets = new Map<string, Dataset>()

  function unauthorized(reply: FastifyReply, detail: string): FastifyReply {
    reply.header('www-authenticate', 'Bearer realm="ocelog"')
    return sendProblem(reply, problem(401, detail))
  }

  return async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const presented = presentedToken(req)
    if ('error' in presented) {
      await unauthorized(reply, presented.error)
      return
    }
    const parsed = parseToken(presented.token)
    if (parsed === null) {
      await unauthorized(reply, 'API key is malformed: Ocelog keys look like ocl_<16 characters>_<43 characters>')
      return
    }
    const key = await deps.keys.findKey(parsed.keyId)
    if (key === null || !secretMatches(parsed.secret, key.secret_hash)) {
      await unauthorized(reply, 'API key is not known')
      return
    }
    if (key.revoked_at !== null) {
      await unauthorized(reply, `API key ${key.key_id} was revoked at ${key.revoked_at}`)
      return
    }
    let dataset = datasets.get(key.dataset_id)
    if (dataset === undefined) {
      const found = await deps.keys.findDataset(key.dataset_id)
      if (found === null) {
        await unauthorized(reply, `the dataset of API key ${key.key_id} no longer exists`)
        return
      }
      dataset = found
      datasets.set(found.id, found)
    }

    const budget = await deps.rateLimiter.consume(key.key_id, key.rate_limit_per_minute)
    const resetSeconds = Math.max(1, Math.ceil(budget.resetMs / 1000))
    reply.header('ratelimit-limit', budget.limit)
    reply.header('ratelimit-remaining', budget.remaining)
    reply.header('ratelimit-reset', resetSeconds)
    if (!budget.allowed) {
      reply.header('retry-after', resetSeconds)
      await sendProblem(
        reply,
        problem(429, `API key ${key.key_id} exceeded ${String(budget.limit)} requests per minute; retry after ${String(resetSeconds)} s`),
      )
      return
    }

    const needed = req.routeOptions.config.scope ?? null
    if (needed !== null && key.scopes.length > 0 && !key.scopes.includes(needed)) {
      await sendProblem(
        reply,
        problem(
          403,
          `API key ${key.key_id} has scopes [${key.scopes.join(', ')}]; this endpoint needs ${needed}. The key itself is valid: rotating it does not help.`,
        ),
      )
      return
    }
    req.auth = { keyId: key.key_id, keyName: key.name, datasetId: dataset.id, datasetName: dataset.name, scopes: key.scopes }
  }
}
