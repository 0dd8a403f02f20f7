/**
 * An open-loop load at a fixed request rate, for the bench's runs "at half the peak rate": request
 * i is due at start + i / rate seconds, whatever the earlier requests are doing, and is sent on one
 * of up to `connections` keep-alive connections (node:http's Agent queues it while all are busy).
 * Each latency runs from the request's due time to the end of its response, so a request that
 * waited for a free connection counts its wait: the correction for coordinated omission that wrk2
 * makes.
 *
 * autocannon's `overallRate` is another load: it gives each connection a budget of requests per
 * second and sends at full speed until the budget is spent (autocannon lib/httpClient.js,
 * `reqsMadeThisSecond`), so its "half rate" is a burst at the peak rate for about half of every
 * second, and its p99 is the p99 of the peak.
 */
import http from 'node:http'
import { performance } from 'node:perf_hooks'

export interface PacedLoadOptions {
  url: string
  headers: Record<string, string>
  /** Requests per second, over all connections. */
  rate: number
  durationSec: number
  connections: number
  /** The next request's body. */
  next: () => string
  /** Called after each response. */
  onResponse?: () => void
  /** A request unanswered this long (ms) is abandoned and counted as a timeout (default 10,000). */
  timeoutMs?: number
}

/** What a paced run measured. Latencies in ms, from each request's due time. */
export interface PacedLoadResult {
  requests2xx: number
  non2xx: number
  errors: number
  timeouts: number
  /** The schedule's length, s: requests / rate. */
  durationSec: number
  latencyP50: number
  latencyP90: number
  latencyP99: number
  latencyMax: number
}

/** The q-quantile (0..1) of ascending `sorted` by nearest rank; 0 when empty. */
export function nearestRank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)))
  return sorted[rank - 1] ?? 0
}

/** Runs `rate × durationSec` POSTs to `url` on the schedule described above, and waits for every answer. */
export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const total = Math.max(1, Math.round(options.rate * options.durationSec))
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
  const latencies: number[] = []
  const counts = { requests2xx: 0, non2xx: 0, errors: 0, timeouts: 0 }
  const answers: Promise<void>[] = []

  const fire = (dueAt: number): Promise<void> =>
    new Promise((resolve) => {
      const body = options.next()
      const req = http.request(options.url, {
        method: 'POST',
        agent,
        headers: { ...options.headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: options.timeoutMs ?? 10_000,
      })
      req.on('response', (res) => {
        res.resume()
        res.on('end', () => {
          latencies.push(performance.now() - dueAt)
          if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) counts.requests2xx++
          else counts.non2xx++
          options.onResponse?.()
          resolve()
        })
      })
      let timedOut = false
      req.on('timeout', () => {
        timedOut = true
        counts.timeouts++
        req.destroy()
        resolve()
      })
      req.on('error', () => {
        // A timeout destroys the request, which then errors too: it counts once, as a timeout.
        if (!timedOut) counts.errors++
        resolve()
      })
      req.end(body)
    })

  const start = performance.now()
  let sent = 0
  await new Promise<void>((scheduled) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * options.rate) / 1000) + 1)
      for (; sent < due; sent++) answers.push(fire(start + (sent * 1000) / options.rate))
      if (sent >= total) scheduled()
      else setTimeout(tick, Math.max(0, start + (sent * 1000) / options.rate - performance.now()))
    }
    tick()
  })
  await Promise.all(answers)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    ...counts,
    durationSec: total / options.rate,
    latencyP50: nearestRank(latencies, 0.5),
    latencyP90: nearestRank(latencies, 0.9),
    latencyP99: nearestRank(latencies, 0.99),
    latencyMax: latencies[latencies.length - 1] ?? 0,
  }
}
