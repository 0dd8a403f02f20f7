/**
 * The RateLimiter contract on the Redis limiter against a real `redis-server` started on a free
 * port (test/helpers/redis-server.ts), plus the Redis outage choice of src/adapters/rate-limiter.ts:
 * when Redis goes away, requests are answered from the in-memory insurance limiter.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RateBudget, redisRateLimiter } from '../../src/adapters/rate-limiter.js'
import type { RateLimiter } from '../../src/ports/rate-limiter.js'
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js'
import { rateLimiterContract } from './rate-limiter.contract.js'

/**
 * A Redis limiter whose connection is ready: until then the limiter answers from its insurance
 * limiter, which would split a key's count between memory and Redis. Consumes a probe key until
 * Redis holds it.
 */
async function readyRedisLimiter(url: string, budget: RateBudget, onFallback?: (error: Error) => void): Promise<RateLimiter> {
  const limiter = redisRateLimiter(url, { ...budget, ...(onFallback === undefined ? {} : { onFallback }) })
  const probe = `probe_${randomUUID()}`
  const observer = new Redis(url)
  try {
    const deadline = Date.now() + 10_000
    for (;;) {
      await limiter.consume(probe)
      if ((await observer.exists(`ocelog:rl:${probe}`)) === 1) return limiter
      if (Date.now() > deadline) throw new Error(`the Redis limiter never wrote to ${url}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  } finally {
    observer.disconnect()
  }
}

let server: RedisServer
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  await server.stop()
})

rateLimiterContract('Redis', (budget) => readyRedisLimiter(server.url, budget))

describe('Redis rate limiter', () => {
  it('shares one budget between two limiters (two API replicas) on the same Redis', async () => {
    const a = await readyRedisLimiter(server.url, { perMinute: 3 })
    const b = await readyRedisLimiter(server.url, { perMinute: 3 })
    const k = `key_${randomUUID()}`
    try {
      await a.consume(k)
      await b.consume(k)
      await a.consume(k)
      expect((await b.consume(k)).allowed).toBe(false)
    } finally {
      await a.close()
      await b.close()
    }
  })

  it("shares a key's own budget between two replicas, each of which reads it from the key", async () => {
    const a = await readyRedisLimiter(server.url, { perMinute: 2 })
    const b = await readyRedisLimiter(server.url, { perMinute: 2 })
    const bulk = `key_${randomUUID()}`
    const live = `key_${randomUUID()}`
    try {
      const decisions = [await a.consume(bulk, 4), await b.consume(bulk, 4), await a.consume(bulk, 4), await b.consume(bulk, 4), await a.consume(bulk, 4)]
      expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 3],
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ])
      await a.consume(live)
      expect([(await b.consume(live)).allowed, (await a.consume(live)).allowed]).toEqual([true, false])
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('keeps answering from the in-memory insurance limiter when Redis goes away, and reports the outage once', async () => {
    const own = await startRedisServer()
    const outages: Error[] = []
    const limiter = await readyRedisLimiter(own.url, { perMinute: 2 }, (error) => outages.push(error))
    const k = `key_${randomUUID()}`
    try {
      expect((await limiter.consume(k)).remaining).toBe(1)
      await own.stop()
      await new Promise((resolve) => setTimeout(resolve, 200))
      // Redis counted one request; the insurance limiter starts this key afresh in this process.
      const during = [await limiter.consume(k), await limiter.consume(k), await limiter.consume(k)]
      expect(during.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 1],
        [true, 0],
        [false, 0],
      ])
      expect(outages).toHaveLength(1)
      expect(outages[0]).toBeInstanceOf(Error)
    } finally {
      await limiter.close()
      await own.stop()
    }
  })
})
