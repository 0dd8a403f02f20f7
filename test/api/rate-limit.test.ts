import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setKeyRateLimit } from '../../src/write/admin.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp({ perMinute: 3 })
})
afterAll(async () => t.close())

function health(key: string) {
  return t.app.inject({ method: 'GET', url: '/v1/health', headers: { authorization: `Bearer ${key}` } })
}

describe('rate limit', () => {
  it('sends RateLimit-Limit, -Remaining and -Reset on every answer', async () => {
    const k = await t.newKey()
    const res = await health(k.key)
    expect(res.headers['ratelimit-limit']).toBe('3')
    expect(res.headers['ratelimit-remaining']).toBe('2')
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1)
    expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60)
  })

  it('answers 429 with Retry-After in whole seconds once the budget is spent', async () => {
    const k = await t.newKey()
    for (let i = 0; i < 3; i++) expect((await health(k.key)).statusCode).toBe(200)
    const res = await health(k.key)
    expect(res.statusCode).toBe(429)
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60)
    expect(res.headers['ratelimit-remaining']).toBe('0')
    expect(res.json().type).toBe('urn:ocelog:problem:rate-limited')
  })

  it('counts per request: a batch of 100 events is one request', async () => {
    const k = await t.newKey()
    const batch = { events: Array.from({ length: 100 }, () => ({ event: 'e', objects: [{ type: 't', id: '1' }] })) }
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/event/batch',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(batch),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['ratelimit-remaining']).toBe('2')
  })

  it('keeps budgets of different keys independent', async () => {
    const a = await t.newKey()
    const b = await t.newKey({ datasetId: a.dataset_id })
    for (let i = 0; i < 4; i++) await health(a.key)
    expect((await health(a.key)).statusCode).toBe(429)
    expect((await health(b.key)).statusCode).toBe(200)
  })

  it('gives a key created with its own rate limit that budget, while the other keys keep the default', async () => {
    const bulk = await t.newKey({ rateLimit: 5 })
    const live = await t.newKey({ datasetId: bulk.dataset_id })
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await health(bulk.key))
    expect(answers.map((r) => [r.statusCode, r.headers['ratelimit-limit'], r.headers['ratelimit-remaining']])).toEqual([
      [200, '5', '4'],
      [200, '5', '3'],
      [200, '5', '2'],
      [200, '5', '1'],
      [200, '5', '0'],
      [429, '5', '0'],
    ])
    const refused = answers[5]
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused?.json().detail).toMatch(/exceeded 5 requests per minute; retry after [0-9]+ s/)
    const other = await health(live.key)
    expect([other.statusCode, other.headers['ratelimit-limit'], other.headers['ratelimit-remaining']]).toEqual([200, '3', '2'])
  })

  it("applies a key's changed rate limit from its next request, keeping the count of the window", async () => {
    const k = await t.newKey()
    for (let i = 0; i < 3; i++) await health(k.key)
    expect((await health(k.key)).statusCode).toBe(429)
    await setKeyRateLimit(t.keys, k.key_id, 10)
    const raised = await health(k.key)
    expect([raised.statusCode, raised.headers['ratelimit-limit'], raised.headers['ratelimit-remaining']]).toEqual([200, '10', '5'])
    await setKeyRateLimit(t.keys, k.key_id, null)
    const back = await health(k.key)
    expect([back.statusCode, back.headers['ratelimit-limit'], back.headers['ratelimit-remaining']]).toEqual([429, '3', '0'])
  })

  it('gives budget back after the window', async () => {
    const short = await makeTestApp({ perMinute: 60, windowSeconds: 1 })
    try {
      const k = await short.newKey()
      const call = () => short.app.inject({ method: 'GET', url: '/v1/health', headers: { authorization: `Bearer ${k.key}` } })
      expect((await call()).statusCode).toBe(200)
      const limited = await call()
      expect(limited.statusCode).toBe(429)
      expect(limited.headers['retry-after']).toBe('1')
      // Wait out the Retry-After the answer names, then ask until the budget is back: at most 40 more asks, 50 ms apart.
      await new Promise((r) => setTimeout(r, 1000))
      const statuses: number[] = []
      while (statuses.at(-1) !== 200 && statuses.length < 40) {
        if (statuses.length > 0) await new Promise((r) => setTimeout(r, 50))
        statuses.push((await call()).statusCode)
      }
      expect(statuses.at(-1)).toBe(200)
      expect(statuses.slice(0, -1).every((s) => s === 429)).toBe(true)
    } finally {
      await short.close()
    }
  })
})
