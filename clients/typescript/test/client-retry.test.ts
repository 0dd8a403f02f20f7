/** Unit: the client's pure parts — retry policy (clients/typescript/src/retry.ts) and batch answer reading (clients/typescript/src/response.ts). */
import { describe, expect, it } from 'vitest'
import { backoffDelayMs, classifyStatus, parseRetryAfterMs } from '../src/retry.js'
import { describeAnswer, readBatchAnswer } from '../src/response.js'

const policy = { baseDelayMs: 100, maxDelayMs: 1000 }
const isString = (v: unknown): v is string => typeof v === 'string'

describe('backoffDelayMs', () => {
  it('doubles the cap per attempt and draws from its upper half', () => {
    expect([1, 2, 3].map((a) => backoffDelayMs(a, policy, () => 0))).toEqual([50, 100, 200])
    expect([1, 2, 3].map((a) => backoffDelayMs(a, policy, () => 0.999999))).toEqual([100, 200, 400])
  })

  it('never exceeds maxDelayMs', () => {
    expect(backoffDelayMs(40, policy, () => 0.999999)).toBe(1000)
    expect(backoffDelayMs(40, policy, () => 0)).toBe(500)
  })
})

describe('parseRetryAfterMs', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('2', 0)).toBe(2000)
    expect(parseRetryAfterMs(' 0 ', 0)).toBe(0)
  })

  it('reads an HTTP-date relative to now, never negative', () => {
    const now = Date.UTC(2024, 0, 1, 12, 0, 0)
    expect(parseRetryAfterMs('Mon, 01 Jan 2024 12:00:03 GMT', now)).toBe(3000)
    expect(parseRetryAfterMs('Mon, 01 Jan 2024 11:00:00 GMT', now)).toBe(0)
  })

  it('gives null for a missing or unreadable header', () => {
    expect(parseRetryAfterMs(null, 0)).toBeNull()
    expect(parseRetryAfterMs('soon', 0)).toBeNull()
  })
})

describe('classifyStatus', () => {
  it('retries 429 and 5xx, splits on 413, stops on 401/403, rejects other 4xx', () => {
    expect([200, 429, 500, 503, 413, 401, 403, 422, 400, 415].map(classifyStatus)).toEqual([
      'ok',
      'rate-limited',
      'server-error',
      'server-error',
      'too-large',
      'fatal',
      'fatal',
      'rejected',
      'rejected',
      'rejected',
    ])
  })
})

describe('readBatchAnswer', () => {
  it('pairs accepted positions with the ids in order and failed positions with their reasons', () => {
    const body = {
      success: false,
      processed: 2,
      failed: 1,
      event_ids: ['a', 'c'],
      errors: ['Event 1: /timestamp: is not a valid ISO 8601 date-time'],
      error_details: [{ index: 1, path: '/timestamp', message: 'is not a valid ISO 8601 date-time' }],
    }
    expect(readBatchAnswer(body, 3, 'event_ids', isString)).toEqual({
      accepted: [
        { position: 0, value: 'a' },
        { position: 2, value: 'c' },
      ],
      duplicates: 0,
      failed: [
        {
          position: 1,
          reason: 'Event 1: /timestamp: is not a valid ISO 8601 date-time',
          errors: [{ path: '/timestamp', message: 'is not a valid ISO 8601 date-time' }],
        },
      ],
    })
  })

  it('finds failures from the errors strings alone when error_details is absent', () => {
    const body = { event_ids: ['a'], errors: ['Event 0: /event: is required'] }
    expect(readBatchAnswer(body, 2, 'event_ids', isString)?.failed.map((f) => f.position)).toEqual([0])
    expect(readBatchAnswer(body, 2, 'event_ids', isString)?.accepted).toEqual([{ position: 1, value: 'a' }])
  })

  it('gives null when the answer does not account for every item', () => {
    expect(readBatchAnswer({ event_ids: ['a'], errors: [], error_details: [] }, 2, 'event_ids', isString)).toBeNull()
    expect(readBatchAnswer({ event_ids: ['a', 'b', 'c'], errors: [], error_details: [] }, 2, 'event_ids', isString)).toBeNull()
    expect(readBatchAnswer({ event_ids: [], errors: [], error_details: [{ index: 5, path: '', message: 'x' }] }, 2, 'event_ids', isString)).toBeNull()
    expect(readBatchAnswer('not json', 1, 'event_ids', isString)).toBeNull()
  })
})

describe('describeAnswer', () => {
  it('uses the problem title and detail, or the start of the text', () => {
    expect(describeAnswer(422, { title: 'Validation failed', detail: 'The event was rejected' }, '')).toBe('422 Validation failed: The event was rejected')
    expect(describeAnswer(502, undefined, '<html>Bad Gateway</html>')).toBe('502 <html>Bad Gateway</html>')
  })
})
