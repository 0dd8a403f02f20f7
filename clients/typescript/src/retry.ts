/**
 * The client's retry policy (docs/api.md#errors: 429 and Retry-After; #batches: failed items are retried),
 * as pure functions: which answers are worth another attempt, and how long to wait before it.
 * No I/O and no clock of their own: the caller passes `now` and a random source, so tests are exact.
 */

/** Why a request is tried again. */
export type RetryCause = 'rate-limited' | 'network' | 'timeout' | 'server-error'

/** Bounds of the retry policy. All durations in milliseconds. */
export interface RetryPolicy {
  /** Attempts per request for network errors, timeouts and 5xx, the first included (default 8). */
  maxAttempts: number
  /** First back-off delay before jitter (default 250 ms); it doubles with every further attempt. */
  baseDelayMs: number
  /** Largest back-off delay before jitter (default 20 s). */
  maxDelayMs: number
  /** How many 429 answers one request may wait out before its items fail (default 100). */
  maxRateLimitWaits: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxRateLimitWaits: 100,
}

/**
 * What to do with an HTTP status, for a request whose items are independent (a batch) or a single item.
 * - `ok`: 2xx, read the body.
 * - `rate-limited`: 429, wait out Retry-After and send again.
 * - `server-error`: 5xx (500, 502, 503, 504, …), back off and send again; nothing of the request was
 *   recorded as far as the client is told.
 * - `too-large`: 413, the body must shrink (a batch is split in two).
 * - `fatal`: 401 or 403, the key cannot do this; no other request with it will do better.
 * - `rejected`: any other status (400, 404, 415, 422, …): permanent for every item of the request.
 */
export type StatusClass = 'ok' | 'rate-limited' | 'server-error' | 'too-large' | 'fatal' | 'rejected'

export function classifyStatus(status: number): StatusClass {
  if (status >= 200 && status < 300) return 'ok'
  if (status === 429) return 'rate-limited'
  if (status === 413) return 'too-large'
  if (status === 401 || status === 403) return 'fatal'
  if (status >= 500) return 'server-error'
  return 'rejected'
}

/**
 * Exponential back-off with jitter ("equal jitter"): the cap doubles per attempt from `baseDelayMs`
 * up to `maxDelayMs`, and the delay is drawn uniformly from [cap/2, cap), so clients that failed
 * together do not come back together, yet every wait is at least half the nominal one.
 * @param attempt the attempt that just failed, 1-based.
 * @param random a source of numbers in [0, 1) (Math.random in production).
 * @returns the delay in milliseconds.
 */
export function backoffDelayMs(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1)
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 30))
  return Math.round(cap / 2 + (cap / 2) * random())
}

/**
 * Reads a Retry-After header (RFC 9110 § 10.2.3): delay-seconds or an HTTP-date.
 * @param value the header value, or null when absent.
 * @param now the current time, ms since the epoch (for the HTTP-date form).
 * @returns the delay in milliseconds (never negative), or null when absent or unreadable.
 */
export function parseRetryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  if (Number.isNaN(at)) return null
  return Math.max(0, at - now)
}
