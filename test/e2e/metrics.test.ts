/**
 * e2e: the built service as a real process in the production layout on one SQLite file
 * (`serve --no-projector` beside an `ocelog project` worker). /metrics shows the lag of the read
 * models rise while the load is appended and nothing projects, and return to 0 once the worker
 * has caught up; `ocelog status` shows the same.
 */
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROJECTIONS } from '../../projections/registry.js'
import type { Status } from '../../src/schemas/projections.js'
import { CLI } from '../helpers/cli.js'
import { type RunningService, startService } from '../helpers/service.js'

let service: RunningService
let key: string

beforeAll(async () => {
  service = await startService({ args: ['--no-projector'], env: { OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' } })
  key = (await service.createKey()).key
}, 60_000)
afterAll(async () => {
  await service.stop()
})

/** The value of sample `name` (labels as written) in a scrape of /metrics; undefined when absent. */
async function metric(name: string): Promise<number | undefined> {
  const r = await fetch(`${service.url}/metrics`)
  expect(r.status).toBe(200)
  const line = (await r.text()).split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

const LAG = 'ocelog_projection_lag_records{projection="events"}'

/** 20 batches of 50 events with 3 objects each, 4 at a time: 1,000 records. */
async function load(): Promise<void> {
  const batch = (b: number) => ({
    events: Array.from({ length: 50 }, (_, i) => ({
      event: 'Pick Item',
      objects: [
        { type: 'order', id: `o${String(b)}` },
        { type: 'item', id: `i${String(b)}-${String(i)}` },
        { type: 'employee', id: `e${String(i % 5)}` },
      ],
    })),
  })
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(
      [0, 1, 2, 3].map((j) =>
        fetch(`${service.url}/v1/event/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(batch(round * 4 + j)),
        }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
  }
}

/** Runs `ocelog project` (a real worker on the service's data dir) until the lag metric is 0, then stops it. */
async function projectUntilCaughtUp(): Promise<number | undefined> {
  const worker = spawn(process.execPath, [CLI, 'project'], {
    env: { ...process.env, OCELOG_DATA_DIR: service.dataDir, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  })
  try {
    const deadline = Date.now() + 60_000
    let lag = await metric(LAG)
    while (lag !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      lag = await metric(LAG)
    }
    return lag
  } finally {
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.kill('SIGTERM')
    await exited
  }
}

describe('GET /metrics on the running service', () => {
  it('shows the read models’ lag rise under load and return to 0 once the projector has caught up', async () => {
    // The service runs no projector: the worker sets the checkpoint, then the load is appended behind it.
    expect(await projectUntilCaughtUp()).toBe(0)
    const headBefore = (await metric('ocelog_log_head_position')) ?? 0
    await load()
    const head = (await metric('ocelog_log_head_position')) ?? 0
    expect(head - headBefore).toBe(1000)
    expect(await metric(LAG)).toBe(1000)
    expect(await metric('ocelog_projection_lag_seconds{projection="events"}')).toBeGreaterThan(0)
    expect(await metric('ocelog_http_requests_total{method="POST",route="/v1/event/batch",status="200"}')).toBe(20)

    expect(await projectUntilCaughtUp()).toBe(0)
    expect(await metric('ocelog_projection_position{projection="events"}')).toBe(head)
  }, 120_000)

  it('agrees with `ocelog status --json`', async () => {
    const r = await service.cli(['status', '--json'])
    expect(r.code).toBe(0)
    const status = JSON.parse(r.stdout) as Status
    expect(status.head).toBe(await metric('ocelog_log_head_position'))
    expect(status.projections.map((p) => [p.projection, p.position, p.version, p.lag_records, p.lag_records_exact, p.lag_seconds, p.stopped])).toEqual(
      (['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'] as const).map(
        (name) => [name, status.head, PROJECTIONS[name].version, 0, true, 0, null],
      ),
    )
    expect(await metric('ocelog_projection_lag_seconds{projection="events"}')).toBe(0)
  })
})
