/** How `ocelog import` reports a retry (src/cli/retry-notice.ts): the cause, the answer and the wait. */
import { describe, expect, it } from 'vitest'
import { describeRetry, retryBrief } from '../../src/cli/retry-notice.js'

describe('describeRetry', () => {
  it('names the cause, the answer, the wait and, for a 429, how a key gets its own budget', () => {
    const notice = {
      cause: 'rate-limited' as const,
      path: '/v1/event/batch',
      attempt: 2,
      delayMs: 23_000,
      items: 500,
      status: 429,
      message: '429 Rate limit exceeded: API key k1 exceeded 1200 requests per minute; retry after 23 s',
    }
    expect(describeRetry(notice)).toBe(
      "rate-limited on /v1/event/batch: 429 Rate limit exceeded: API key k1 exceeded 1200 requests per minute; retry after 23 s; waiting 23 s (wait 2); a key's own budget: ocelog keys update KEY_ID --rate-limit N",
    )
    expect(retryBrief(notice)).toBe('rate-limited, waiting 23 s')
  })

  it('gives network failures their attempt number and the backoff in tenths of a second, without the hint', () => {
    const notice = {
      cause: 'network' as const,
      path: '/v1/object/batch',
      attempt: 1,
      delayMs: 437,
      items: 10,
      status: null,
      message: 'connect ECONNREFUSED 127.0.0.1:1',
    }
    expect(describeRetry(notice)).toBe('network on /v1/object/batch: connect ECONNREFUSED 127.0.0.1:1; waiting 0.4 s (attempt 1)')
    expect(retryBrief(notice)).toBe('network, waiting 0.4 s')
  })
})
