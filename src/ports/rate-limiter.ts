/**
 * Port: per-key request budget (docs/api.md#rate-limit). Adapters: in-memory
 * (embedded default) and Redis (shared by API replicas), both on rate-limiter-flexible.
 * Contract tests: test/contract/rate-limiter.contract.ts.
 */
export interface RateDecision {
  allowed: boolean
  /** Requests per window. */
  limit: number
  /** Requests left in the current window (0 when refused). */
  remaining: number
  /** Milliseconds until the window resets and the key has budget again. */
  resetMs: number
}

export interface RateLimiter {
  /** Counts one request for `keyId` and says whether it is within budget. Never rejects for being over budget. */
  consume(keyId: string): Promise<RateDecision>
  close(): Promise<void>
}
