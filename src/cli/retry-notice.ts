/**
 * How `ocelog import` reports a retry (docs/rate-limits.md#what-an-import-reports): the cause, the answer, and the wait
 * before the next attempt, so that a person sees which limit an import meets and for how long.
 */
import type { RetryNotice } from '../../clients/typescript/src/types.js'

/** Seconds with one decimal below 10 s, whole above: `0.4 s`, `23 s`. */
function seconds(ms: number): string {
  const s = ms / 1000
  return `${s < 10 ? s.toFixed(1) : String(Math.round(s))} s`
}

/**
 * One line for a retry, e.g. `rate-limited on /v1/event/batch: 429 Rate limit exceeded: API key k
 * exceeded 1200 requests per minute; retry after 23 s; waiting 23 s (wait 2); a key's own budget:
 * ocelog keys update KEY_ID --rate-limit N`. The hint is given for 429s only.
 * @param notice what the client reports before it waits (clients/typescript, `onRetry`).
 */
export function describeRetry(notice: RetryNotice): string {
  const hint = notice.cause === 'rate-limited' ? "; a key's own budget: ocelog keys update KEY_ID --rate-limit N" : ''
  return `${notice.cause} on ${notice.path}: ${notice.message}; waiting ${seconds(notice.delayMs)} (${notice.cause === 'rate-limited' ? 'wait' : 'attempt'} ${String(notice.attempt)})${hint}`
}

/** The short form for a progress bar: `rate-limited, waiting 23 s`. */
export function retryBrief(notice: RetryNotice): string {
  return `${notice.cause}, waiting ${seconds(notice.delayMs)}`
}
