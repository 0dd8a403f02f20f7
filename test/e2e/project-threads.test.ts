/**
 * e2e: `ocelog project` in follow mode on the embedded default runs a worker thread per runner, as
 * `serve` does (docs/architecture.md#the-embedded-projector). The built service runs with
 * `--no-projector` and a built `ocelog project` beside it on the same data dir, both real processes
 * on real SQLite files: events posted over HTTP reach the read models of both runners (the events
 * list, the entities runner's; the process map, the process runner's), the project process logs a
 * worker per runner, and SIGTERM stops it with exit code 0.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Status } from '../../src/schemas/projections.js'
import { spawnCli } from '../helpers/cli.js'
import { type RunningService, startService } from '../helpers/service.js'

let service: RunningService
let key: string

beforeAll(async () => {
  service = await startService({ args: ['--no-projector'] })
  key = (await service.createKey()).key
}, 60_000)
afterAll(async () => {
  await service.stop()
})

/**
 * The threads of process `pid` at nice 10 (Linux, /proc/PID/task/TID/stat, field 19): the projector
 * worker threads, which lower their own priority to it (src/projector/worker.ts); the main thread
 * keeps the process's (0).
 */
function threadsAtNice10(pid: number): number {
  const nice = (tid: string) =>
    Number(
      readFileSync(`/proc/${String(pid)}/task/${tid}/stat`, 'utf8')
        .split(') ')
        .pop()
        ?.split(' ')[16],
    )
  return readdirSync(`/proc/${String(pid)}/task`).filter((tid) => nice(tid) === 10).length
}

async function get<T>(path: string): Promise<T> {
  const r = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
  expect(r.status).toBe(200)
  return (await r.json()) as T
}

/** Polls `read` every 50 ms until `done` holds of its answer or `ms` pass; returns the last answer. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    value = await read()
  }
  return value
}

interface MapAnswer {
  as_of: number
  object_types: Array<{ object_type: string; edges: Array<{ source: string; target: string; total: number }> }>
}

describe('ocelog project beside serve --no-projector on the embedded default', () => {
  it('runs a worker thread per runner: both runners apply what the service appends, and SIGTERM stops it with exit 0', async () => {
    const project = spawnCli(service.dataDir, ['project'])
    try {
      // Both workers start and say so, named by runner.
      const started = await until(
        async () => project.lines().filter((l) => l.msg.startsWith('projector worker ')),
        (l) => l.length >= 2,
      )
      expect(started.map((l) => [l.runner, l.msg]).sort()).toEqual([
        ['entities', 'projector worker entities: started; it polls the log for new records'],
        ['process', 'projector worker process: started; it polls the log for new records'],
      ])

      // Appended by another process (the service) after the workers started: only their poll of the log finds it.
      const events = ['Create Order', 'Pick Item', 'Ship Order'].map((event, i) => ({
        event,
        timestamp: `2026-01-0${String(i + 1)}T00:00:00Z`,
        objects: [{ type: 'order', id: 'o1' }],
      }))
      const posted = await fetch(`${service.url}/v1/event/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      })
      expect(posted.status).toBe(200)
      const head = JSON.parse((await service.cli(['status', '--json'])).stdout) as Status

      // The entities runner's read model: the events list.
      const list = await until(
        () => get<{ as_of: number; events: Array<{ event_type: string }> }>('/v1/process/events'),
        (a) => a.events.length === 3,
      )
      expect(list.events.map((e) => e.event_type)).toEqual(['Create Order', 'Pick Item', 'Ship Order'])
      // The process runner's read model: the directly-follows graph of the process map.
      const map = await until(
        () => get<MapAnswer>('/v1/process/map'),
        (a) => a.object_types.length > 0,
      )
      expect(map.object_types.map((t) => [t.object_type, t.edges.map((e) => [e.source, e.target, e.total])])).toEqual([
        [
          'order',
          [
            ['Create Order', 'Pick Item', 1],
            ['Pick Item', 'Ship Order', 1],
          ],
        ],
      ])
      // Every projection of both runners at the log's head, none stopped.
      const status = await until(
        async () => JSON.parse((await service.cli(['status', '--json'])).stdout) as Status,
        (s) => s.projections.every((p) => p.position === head.head),
      )
      expect(status.projections.map((p) => [p.projection, p.position, p.stopped])).toEqual(
        ['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'].map((name) => [
          name,
          head.head,
          null,
        ]),
      )
      expect((await get<MapAnswer>('/v1/process/map')).as_of).toBe(head.head)
      expect(project.child.exitCode).toBeNull()
      // Two threads of the project process run the projections, at the workers' lower priority.
      expect(threadsAtNice10(project.child.pid ?? 0)).toBe(2)
    } finally {
      project.child.kill('SIGTERM')
    }
    expect(await project.exited).toBe(0)
    expect(project.lines().map((l) => l.msg)).toContain('projector stopped')
    expect(project.stderr()).toBe('')
  }, 60_000)
})
