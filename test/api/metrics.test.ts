import { afterEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
afterEach(async () => {
  await t.close()
})

/** The value of the sample `name` (with its labels as written, e.g. `{projection="events"}`) in a scrape; undefined when absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

async function scrape(): Promise<string> {
  const r = await t.app.inject({ method: 'GET', url: '/metrics' })
  expect([r.statusCode, r.headers['content-type']]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8'])
  return r.body
}

async function postEvent(key: string): Promise<void> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/v1/event',
    headers: { authorization: `Bearer ${key}` },
    payload: { event: 'Create Order', objects: [{ type: 'order', id: 'o1' }] },
  })
  expect(r.statusCode).toBe(200)
}

describe('GET /metrics', () => {
  it('answers Prometheus text without a key, with the log head, the projection and the process metrics', async () => {
    t = await makeTestApp({ metrics: true })
    const text = await scrape()
    expect(sample(text, 'ocelog_log_head_position')).toBe(0)
    expect(sample(text, 'ocelog_projection_lag_records{projection="events"}')).toBe(0)
    expect(sample(text, 'ocelog_projection_lag_seconds{projection="events"}')).toBe(0)
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(text).toContain('# TYPE ocelog_http_request_duration_seconds histogram')
  })

  it('shows the records behind each checkpoint, and 0 once the projector has caught up', async () => {
    t = await makeTestApp({ metrics: true })
    const { key } = await t.newKey()
    await postEvent(key)
    await postEvent(key)
    const before = await scrape()
    expect([sample(before, 'ocelog_log_head_position'), sample(before, 'ocelog_projection_lag_records{projection="events"}')]).toEqual([2, 2])
    const [oldest] = await t.log.readAll(null, 1)
    const age = (Date.now() - Date.parse(oldest?.appendedAt ?? '')) / 1000
    // The scrape came before this clock read: its age is at most this one, and not below 0.
    expect(sample(before, 'ocelog_projection_lag_seconds{projection="events"}')).toBeGreaterThanOrEqual(0)
    expect(sample(before, 'ocelog_projection_lag_seconds{projection="events"}')).toBeLessThanOrEqual(age)
    await t.projector.catchUp()
    const after = await scrape()
    expect(sample(after, 'ocelog_projection_position{projection="events"}')).toBe(2)
    expect(sample(after, 'ocelog_projection_lag_records{projection="events"}')).toBe(0)
    expect(sample(after, 'ocelog_projection_lag_seconds{projection="events"}')).toBe(0)
    expect(sample(after, 'ocelog_projection_stopped{projection="events"}')).toBe(0)
  })

  it("shows each runner's lag apart: the largest of its projections", async () => {
    t = await makeTestApp({ metrics: true })
    const { key } = await t.newKey()
    await postEvent(key)
    await postEvent(key)
    const lags = (text: string): (number | undefined)[] =>
      ['ocelog_runner_lag_records{runner="entities"}', 'ocelog_runner_lag_records{runner="process"}'].map((s) => sample(text, s))
    expect(lags(await scrape())).toEqual([2, 2])
    // Only the process runner applies: its lag is gone, the entities runner's stays.
    expect(await new Projector(t.log, t.readModels, { runner: 'process' }).catchUp()).toBe(2)
    const after = await scrape()
    expect(lags(after)).toEqual([2, 0])
    expect(sample(after, 'ocelog_runner_lag_seconds{runner="process"}')).toBe(0)
    expect(sample(after, 'ocelog_runner_lag_seconds{runner="entities"}')).toBeGreaterThanOrEqual(0)
    expect(sample(after, 'ocelog_projection_lag_records{projection="directly_follows"}')).toBe(0)
    expect(sample(after, 'ocelog_projection_lag_records{projection="objects"}')).toBe(2)
  })

  it('counts requests and their latency by method, route pattern and status', async () => {
    t = await makeTestApp({ metrics: true })
    const { key } = await t.newKey()
    await postEvent(key)
    await t.app.inject({ method: 'GET', url: '/v1/health' })
    await t.app.inject({ method: 'GET', url: '/no/such/route' })
    const text = await scrape()
    expect(sample(text, 'ocelog_http_requests_total{method="POST",route="/v1/event",status="200"}')).toBe(1)
    expect(sample(text, 'ocelog_http_requests_total{method="GET",route="/v1/health",status="401"}')).toBe(1)
    expect(sample(text, 'ocelog_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
    expect(sample(text, 'ocelog_http_request_duration_seconds_count{method="POST",route="/v1/event",status="200"}')).toBe(1)
  })

  it('shows a stopped projection', async () => {
    t = await makeTestApp({ metrics: true })
    await t.readModels.recordStop({ projection: 'events', position: 1, stream: 'dataset-x', cause: 'poisoned', attempts: 5, stopped_at: 'now' })
    expect(sample(await scrape(), 'ocelog_projection_stopped{projection="events"}')).toBe(1)
  })

  it('is absent when metrics are off', async () => {
    t = await makeTestApp()
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
  })
})
