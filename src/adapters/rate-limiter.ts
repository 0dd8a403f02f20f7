/**
 * RateLimiter adapters on rate-limiter-flexible (spec § Limits, Rate): a fixed window of 60 s per
 * API key, counted per request. In memory by default; on Redis (ioredis) when REDIS_URL is set,
 * so every API replica shares one budget per key. If Redis is unreachable, the Redis limiter
 * falls back to an in-memory insurance limiter (per replica) instead of failing requests: a brief
 * Redis outage loosens the limit by at most the replica count, and ingestion keeps working.
 */
import { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js'

const WINDOW_SECONDS = 60

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

/** In-memory limiter: one process's budget per key. `perMinute`: requests per 60 s window. */
export function memoryRateLimiter(perMinute: number): RateLimiter {
  return new FlexibleRateLimiter(new RateLimiterMemory({ points: perMinute, duration: WINDOW_SECONDS }), perMinute)
}

export interface RedisRateLimiterOptions {
  perMinute: number
  /** Called once per outage when a request had to use the in-memory insurance limiter. */
  onFallback?: (error: Error) => void
}

/**
 * Redis limiter shared by all replicas; keys `ocelog:rl:<key_id>`.
 * @param url a redis:// or rediss:// URL.
 */
export function redisRateLimiter(url: string, options: RedisRateLimiterOptions): RateLimiter {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false })
  let warned = false
  client.on('error', (error: Error) => {
    if (!warned) options.onFallback?.(error)
    warned = true
  })
  client.on('ready', () => {
    warned = false
  })
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: 'ocelog:rl',
    points: options.perMinute,
    duration: WINDOW_SECONDS,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points: options.perMinute, duration: WINDOW_SECONDS }),
  })
  return new FlexibleRateLimiter(limiter, options.perMinute, async () => {
    client.disconnect()
  })
}
