/**
 * The bench's open-loop load (bench/paced-load.ts), against a real node:http server on a free port:
 * requests are spread over the schedule instead of sent in a burst, every answer is counted by
 * status, and a request that waited for a busy connection counts its wait in its latency.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { nearestRank, pacedLoad } from '../../bench/paced-load.js'

let server: http.Server | null = null

afterEach(async () => {
  const s = server
  server = null
  if (s !== null) await new Promise((resolve) => s.close(resolve))
})

/** A server that answers each POST with `status(body)` after `delayMs`, and records when each arrived. */
async function start(delayMs: number, status: (body: string) => number) {
  const arrivals: number[] = []
  const bodies: string[] = []
  server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    req.on('end', () => {
      arrivals.push(performance.now())
      bodies.push(body)
      setTimeout(() => {
        res.statusCode = status(body)
        res.end('{}')
      }, delayMs)
    })
  })
  const s = server
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${String((s.address() as AddressInfo).port)}/x`, arrivals, bodies }
}

describe('nearestRank', () => {
  it('takes the smallest value with at least q of the values at or below it', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(nearestRank(values, 0.5)).toBe(50)
    expect(nearestRank(values, 0.99)).toBe(99)
    expect(nearestRank(values, 1)).toBe(100)
    expect(nearestRank([7], 0.99)).toBe(7)
    expect(nearestRank([], 0.5)).toBe(0)
  })
})

describe('pacedLoad', () => {
  it('sends rate × duration requests spread over the schedule, not in a burst, and counts them by status', async () => {
    const target = await start(0, (body) => (body.endsWith('3') ? 500 : 200))
    let n = 0
    let responses = 0
    const result = await pacedLoad({
      url: target.url,
      headers: { 'content-type': 'application/json' },
      rate: 100,
      durationSec: 0.4,
      connections: 8,
      next: () => `body ${String(n++)}`,
      onResponse: () => responses++,
    })
    expect(target.bodies).toHaveLength(40)
    expect(responses).toBe(40)
    // Bodies 3, 13, 23 and 33 were answered 500.
    expect(result).toMatchObject({ requests2xx: 36, non2xx: 4, errors: 0, timeouts: 0, durationSec: 0.4 })
    // Due 10 ms apart: the last arrives about 390 ms after the first (a burst would be a few ms).
    const span = (target.arrivals.at(-1) ?? 0) - (target.arrivals[0] ?? 0)
    expect(span).toBeGreaterThan(300)
    expect(result.latencyP50).toBeLessThanOrEqual(result.latencyP99)
    expect(result.latencyP99).toBeLessThanOrEqual(result.latencyMax)
  })

  it('measures each latency from the due time, so waiting for a busy connection counts', async () => {
    // One connection, a server that takes 40 ms, requests due every 10 ms: the queue grows by
    // 30 ms per request, so the last of 12 waits about 11 × 30 ms before it is even sent.
    const target = await start(40, () => 200)
    const result = await pacedLoad({ url: target.url, headers: {}, rate: 100, durationSec: 0.12, connections: 1, next: () => 'x' })
    expect(result.requests2xx).toBe(12)
    expect(result.latencyMax).toBeGreaterThan(300)
    expect(result.latencyP50).toBeGreaterThan(100)
  })

  it('counts a request unanswered within the timeout once, as a timeout', async () => {
    const target = await start(500, () => 200)
    const result = await pacedLoad({ url: target.url, headers: {}, rate: 10, durationSec: 0.2, connections: 2, next: () => 'x', timeoutMs: 100 })
    expect(result).toMatchObject({ requests2xx: 0, timeouts: 2, errors: 0 })
  })
})
