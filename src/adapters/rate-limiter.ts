/**
 * RateLimiter adapters on rate-limiter-flexible (docs/api.md#rate-limit): a fixed window per API
 * key (OCELOG_RATE_LIMIT_WINDOW_SECONDS, default 60 s; the per-minute budget scaled to it),
 * counted per request, against the key's own budget when it has one (docs/rate-limits.md#how-it-is-counted). The
 * store counts every request of a key in its window without a ceiling of its own, and each request
 * is measured against the budget it is consumed with: so keys of different budgets share one
 * limiter, replicas on one Redis share a key's count whatever budget each reads, and a key whose
 * budget changes keeps its count. In memory by default; on Redis (ioredis) when REDIS_URL is set,
 * so every API replica shares one budget per key. If Redis is unreachable, the Redis limiter
 * falls back to an in-memory insurance limiter (per replica) instead of failing requests: a brief
 * Redis outage loosens the limit by at most the replica count, and ingestion keeps working.
 */
import { createRequire } from 'node:module'
import type pg from 'pg'
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js'

/** ioredis is loaded by the Redis limiter only, so that a service without REDIS_URL does not carry it. */
const requireModule = createRequire(import.meta.url)

/** Budget per window: `perMinute` scaled to the window, at least 1 request. */
export interface RateBudget {
  perMinute: number
  /** Window length in seconds (default 60: "per minute", docs/api.md#rate-limit). */
  windowSeconds?: number
}

/** Requests allowed per window for `perMinute` over a window of `windowSeconds`: at least 1. */
function windowPoints(perMinute: number, windowSeconds: number): number {
  return Math.max(1, Math.round((perMinute * windowSeconds) / 60))
}

/**
 * The store's own ceiling: never reached, so the store only counts and each request is measured
 * against its key's budget here. Beyond any budget (1e9 per minute over 3,600 s is 6e10).
 */
const UNCAPPED = Number.MAX_SAFE_INTEGER

function storeOptions(budget: RateBudget): { points: number; duration: number } {
  return { points: UNCAPPED, duration: budget.windowSeconds ?? 60 }
}

class FlexibleRateLimiter implements RateLimiter {
  private readonly windowSeconds: number
  private readonly defaultLimit: number
  constructor(
    private readonly limiter: RateLimiterAbstract,
    budget: RateBudget,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.windowSeconds = budget.windowSeconds ?? 60
    this.defaultLimit = windowPoints(budget.perMinute, this.windowSeconds)
  }

  async consume(keyId: string, perMinute?: number | null): Promise<RateDecision> {
    const limit = perMinute === undefined || perMinute === null ? this.defaultLimit : windowPoints(perMinute, this.windowSeconds)
    let res: RateLimiterRes
    try {
      res = await this.limiter.consume(keyId, 1)
    } catch (rejection) {
      // Only the store's own ceiling rejects with a RateLimiterRes, and it is never reached.
      if (rejection instanceof RateLimiterRes) res = rejection
      else throw rejection
    }
    const allowed = res.consumedPoints <= limit
    return { allowed, limit, remaining: allowed ? limit - res.consumedPoints : 0, resetMs: res.msBeforeNext }
  }

  async close(): Promise<void> {
    await this.onClose()
  }
}

/** In-memory limiter: one process's budget per key. */
export function memoryRateLimiter(budget: RateBudget): RateLimiter {
  return new FlexibleRateLimiter(new RateLimiterMemory(storeOptions(budget)), budget)
}

export interface RedisRateLimiterOptions extends RateBudget {
  /** Called once per outage when a request had to use the in-memory insurance limiter. */
  onFallback?: (error: Error) => void
}

/**
 * Redis limiter shared by all replicas; keys `ocelog:rl:<key_id>`.
 * @param url a redis:// or rediss:// URL.
 */
export function redisRateLimiter(url: string, options: RedisRateLimiterOptions): RateLimiter {
  const { Redis } = requireModule('ioredis') as typeof import('ioredis')
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false })
  let warned = false
  client.on('error', (error: Error) => {
    if (!warned) options.onFallback?.(error)
    warned = true
  })
  client.on('ready', () => {
    warned = false
  })
  const p = storeOptions(options)
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'ocelog:rl',
    ...p,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(p),
  })
  return new FlexibleRateLimiter(limiter, options, async () => {
    client.disconnect()
  })
}

/**
 * PostgreSQL limiter shared by every API process on one database (docs/rate-limits.md): rows of
 * `ocelog.rate_limits` (made by the schema's migration, src/adapters/postgres/schema.ts), keys
 * `ocelog:rl:<key_id>`. While PostgreSQL is away it answers from an in-memory insurance limiter, as
 * the Redis limiter does (the writes themselves answer 503 then).
 * @param pool the process's pool on POSTGRES_URL; the caller ends it.
 */
export function postgresRateLimiter(pool: pg.Pool, budget: RateBudget): RateLimiter {
  const p = storeOptions(budget)
  const limiter = new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    schemaName: 'ocelog',
    tableName: 'rate_limits',
    tableCreated: true,
    clearExpiredByTimeout: true,
    keyPrefix: 'ocelog:rl',
    ...p,
    insuranceLimiter: new RateLimiterMemory(p),
  })
  return new FlexibleRateLimiter(limiter, budget)
}
