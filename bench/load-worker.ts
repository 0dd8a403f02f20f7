/**
 * The benchmark's load generator: a child process (forked with IPC by bench/run.ts) that runs
 * load jobs one at a time and sends back their results: autocannon (closed loop, as fast as the
 * server answers) for a job without a rate, and pacedLoad (open loop, requests due at a fixed rate;
 * bench/paced-load.ts says why not autocannon's `overallRate`) for a job with one. Before each job it posts one body
 * and checks that every item was accepted, so a run never measures fast rejections.
 */
import autocannon from 'autocannon'
import { bodySource, knownObjectBodies, SCENARIO_SHAPES } from './bodies.js'
import type { FromWorker, LoadJob, LoadResult, ToWorker } from './load-protocol.js'
import { pacedLoad } from './paced-load.js'
import { messageOf } from '../src/core/errors.js'

function send(message: FromWorker): void {
  process.send?.(message)
}

async function post(url: string, token: string, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body })
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = null
  }
  const success = typeof parsed === 'object' && parsed !== null && 'success' in parsed ? parsed.success : undefined
  if (res.status !== 200 || success !== true) throw new Error(`preflight POST ${url} answered ${String(res.status)}: ${text.slice(0, 500)}`)
}

/** A measured run: counts, the run's length in s, and latencies in ms. */
type Measured = Omit<LoadResult, 'setupItems' | 'requestsPerSec' | 'itemsPerSec' | 'endedAt'>

function headersOf(job: LoadJob): Record<string, string> {
  return { authorization: `Bearer ${job.token}`, 'content-type': 'application/json' }
}

async function measure(job: LoadJob, next: () => string, onResponse: () => void): Promise<Measured> {
  const url = job.baseUrl + SCENARIO_SHAPES[job.scenario].path
  if (job.pacedRate !== undefined) {
    return pacedLoad({ url, headers: headersOf(job), rate: job.pacedRate, durationSec: job.durationSec, connections: job.connections, next, onResponse })
  }
  const result = await runOnce(job, job.durationSec, next, onResponse)
  return {
    requests2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSec: result.duration,
    latencyP50: result.latency.p50,
    latencyP90: result.latency.p90,
    latencyP99: result.latency.p99,
    latencyMax: result.latency.max,
  }
}

/** autocannon as fast as the server answers, on `job.connections` connections. */
function runOnce(job: LoadJob, durationSec: number, next: () => string, onResponse?: () => void): Promise<autocannon.Result> {
  const shape = SCENARIO_SHAPES[job.scenario]
  const instance = autocannon(
    {
      url: job.baseUrl + shape.path,
      method: 'POST',
      connections: job.connections,
      duration: durationSec,
      headers: headersOf(job),
      requests: [{ setupRequest: (req) => ({ ...req, body: next() }) }],
    },
    () => {},
  )
  if (onResponse !== undefined) instance.on('response', onResponse)
  return new Promise((resolve, reject) => {
    instance.on('done', resolve)
    instance.on('error', reject)
  })
}

async function run(id: number, job: LoadJob): Promise<LoadResult> {
  const shape = SCENARIO_SHAPES[job.scenario]
  const next = bodySource(job.scenario, job.seed, job.tag, job.firstCycle)
  let setupItems = 0
  if (job.scenario === 'objects') {
    for (const body of knownObjectBodies()) {
      await post(job.baseUrl + shape.path, job.token, body)
      setupItems += 100
    }
  }
  await post(job.baseUrl + shape.path, job.token, next())
  setupItems += shape.itemsPerRequest
  if (job.warmupSec > 0) setupItems += (await runOnce(job, job.warmupSec, next))['2xx'] * shape.itemsPerRequest

  let requests = 0
  const started = Date.now()
  const timer = setInterval(() => send({ type: 'progress', id, seconds: (Date.now() - started) / 1000, requests }), 1000)
  let result: Measured
  try {
    result = await measure(job, next, () => {
      requests++
    })
  } finally {
    clearInterval(timer)
  }
  const endedAt = Date.now()
  const requestsPerSec = result.requests2xx / result.durationSec
  return { ...result, setupItems, requestsPerSec, itemsPerSec: requestsPerSec * shape.itemsPerRequest, endedAt }
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'exit') {
    process.exit(0)
  }
  run(message.id, message.job).then(
    (result) => send({ type: 'result', id: message.id, result }),
    (error: unknown) => send({ type: 'error', id: message.id, message: messageOf(error) }),
  )
})
send({ type: 'ready' })
