/**
 * RateLimiter adapters on rate-limiter-flexible (docs/api.md#rate-limit): a fixed window per API
 * key (OCELOG_RATE_LIMIT_WINDOW_SECONDS, default 60 s; the per-minute budget scaled to it),
 * counted per request. In memory by default; on Redis (ioredis) when REDIS_URL is set,
 * so every API replica shares one budget per key. If Redis is unreachable, the Redis limiter
 * falls back to an in-memory insurance limiter (per replica) instead of failing requests: a brief
 * Redis outage loosens the limit by at most the replica count, and ingestion keeps working.
 */
import { createRequire } from 'node:module'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js'

/** ioredis is loaded by the Redis limiter only, so that a service without REDIS_URL does not carry it. */
const requireModule = createRequire(import.meta.url)

/** Budget per window: `perMinute` scaled to the window, at least 1 request. */
export interface RateBudget {
  perMinute: number
  /** Window length in seconds (default 60: "per minute", docs/api.md#rate-limit). */
  windowSeconds?: number
}

function points(budget: RateBudget): { points: number; duration: number } {
  const duration = budget.windowSeconds ?? 60
  return { points: Math.max(1, Math.round((budget.perMinute * duration) / 60)), duration }
}

class FlexibleRateLimiter implements RateLimiter {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly limit: number,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  async consume(keyId: string): Promise<RateDecision> {
    try {
      const res = await this.limiter.consume(keyId, 1)
      return { allowed: true, limit: this.limit, remaining: res.remainingPoints, resetMs: res.msBeforeNext }
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        return { allowed: false, limit: this.limit, remaining: 0, resetMs: rejection.msBeforeNext }
      }
      throw rejection
    }
  }

  async close(): Promise<void> {
    await this.onClose()
  }
}

/** In-memory limiter: one process's budget per key. */
export function memoryRateLimiter(budget: RateBudget): RateLimiter {
  const p = points(budget)
  return new FlexibleRateLimiter(new RateLimiterMemory(p), p.points)
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
  const p = points(options)
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'ocelog:rl',
    ...p,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(p),
  })
  return new FlexibleRateLimiter(limiter, p.points, async () => {
    client.disconnect()
  })
}
