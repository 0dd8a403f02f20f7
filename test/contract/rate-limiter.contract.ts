/**
 * Contract of the RateLimiter port (src/ports/rate-limiter.ts; docs/api.md#rate-limit):
 * the same cases for every adapter. Keys are fresh per case, since a Redis server may outlive a case.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { RateBudget } from '../../src/adapters/rate-limiter.js'
import type { RateLimiter } from '../../src/ports/rate-limiter.js'

/** Builds a ready limiter for `budget` (for Redis: connected, so no request lands on the insurance limiter). */
export type OpenRateLimiter = (budget: RateBudget) => Promise<RateLimiter>

function key(): string {
  return `key_${randomUUID()}`
}

/** Runs the RateLimiter contract against the adapter `open` builds. */
export function rateLimiterContract(adapter: string, open: OpenRateLimiter): void {
  describe(`RateLimiter contract: ${adapter}`, () => {
    const opened: RateLimiter[] = []
    async function limiter(budget: RateBudget): Promise<RateLimiter> {
      const l = await open(budget)
      opened.push(l)
      return l
    }
    afterEach(async () => {
      for (const l of opened.splice(0)) await l.close()
    })

    it('counts down the remaining budget per request', async () => {
      const l = await limiter({ perMinute: 3 })
      const k = key()
      const decisions = [await l.consume(k), await l.consume(k), await l.consume(k)]
      expect(decisions.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
        [true, 3, 2],
        [true, 3, 1],
        [true, 3, 0],
      ])
    })

    it('refuses the request over budget with remaining 0 and the time until the window resets', async () => {
      const l = await limiter({ perMinute: 2 })
      const k = key()
      await l.consume(k)
      await l.consume(k)
      const refused = await l.consume(k)
      expect(refused.allowed).toBe(false)
      expect(refused.remaining).toBe(0)
      expect(refused.limit).toBe(2)
      expect(refused.resetMs).toBeGreaterThan(0)
      expect(refused.resetMs).toBeLessThanOrEqual(60_000)
    })

    it('keeps one budget per key: an exhausted key leaves another key untouched', async () => {
      const l = await limiter({ perMinute: 1 })
      const a = key()
      const b = key()
      await l.consume(a)
      expect((await l.consume(a)).allowed).toBe(false)
      const other = await l.consume(b)
      expect([other.allowed, other.remaining]).toEqual([true, 0])
    })

    it('measures a key against its own budget while the other keys keep the default', async () => {
      const l = await limiter({ perMinute: 2 })
      const bulk = key()
      const live = key()
      const own = [await l.consume(bulk, 5), await l.consume(bulk, 5), await l.consume(bulk, 5), await l.consume(bulk, 5), await l.consume(bulk, 5)]
      expect(own.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
        [true, 5, 4],
        [true, 5, 3],
        [true, 5, 2],
        [true, 5, 1],
        [true, 5, 0],
      ])
      const refused = await l.consume(bulk, 5)
      expect([refused.allowed, refused.limit, refused.remaining]).toEqual([false, 5, 0])
      expect(refused.resetMs).toBeGreaterThan(0)
      expect(refused.resetMs).toBeLessThanOrEqual(60_000)
      const others = [await l.consume(live), await l.consume(live, null), await l.consume(live)]
      expect(others.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
        [true, 2, 1],
        [true, 2, 0],
        [false, 2, 0],
      ])
    })

    it("scales a key's own budget to the window like the default", async () => {
      // 600 per minute over a 6 s window: 60 requests per window.
      const l = await limiter({ perMinute: 10, windowSeconds: 6 })
      const d = await l.consume(key(), 600)
      expect([d.allowed, d.limit, d.remaining]).toEqual([true, 60, 59])
      const byDefault = await l.consume(key())
      expect([byDefault.allowed, byDefault.limit, byDefault.remaining]).toEqual([true, 1, 0])
    })

    it("keeps the count of the window when a key's budget changes: raised, it lets the key on at once; lowered, it refuses", async () => {
      const l = await limiter({ perMinute: 2 })
      const k = key()
      await l.consume(k)
      await l.consume(k)
      expect((await l.consume(k)).allowed).toBe(false)
      // Three requests counted so far; a budget of 10 has 6 left after the fourth.
      const raised = await l.consume(k, 10)
      expect([raised.allowed, raised.limit, raised.remaining]).toEqual([true, 10, 6])
      const lowered = await l.consume(k, 4)
      expect([lowered.allowed, lowered.limit, lowered.remaining]).toEqual([false, 4, 0])
    })

    it('gives the budget back when the window resets', async () => {
      // 120 per minute over a 1 s window: 2 requests per second.
      const l = await limiter({ perMinute: 120, windowSeconds: 1 })
      const k = key()
      await l.consume(k)
      await l.consume(k)
      const refused = await l.consume(k)
      expect(refused.allowed).toBe(false)
      expect(refused.resetMs).toBeLessThanOrEqual(1000)
      await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 100))
      const again = await l.consume(k)
      expect([again.allowed, again.remaining]).toEqual([true, 1])
    })
  })
}
