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
  /**
   * Counts one request for `keyId` and says whether it is within budget. Never rejects for being over budget.
   * @param perMinute the key's own budget in requests per minute (docs/rate-limits.md#how-it-is-counted), scaled to
   * the window like the default; omitted or null: the limiter's default budget. The count of the
   * current window is the same whichever budget a request is measured against, so a key whose
   * limit changes keeps what it has used.
   */
  consume(keyId: string, perMinute?: number | null): Promise<RateDecision>
  close(): Promise<void>
}
