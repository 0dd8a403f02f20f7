/**
 * e2e (README § Read models; docs/read-models.md): the built service keeps
 * its read models in read-models.db, projected by its worker thread. Deleting that file while the
 * service is stopped, then starting it, rebuilds read models identical to the ones before, row for
 * row, and the same process map (all time, from the directly-follows aggregates, and a window, from
 * its steps; docs/process-map.md), and the service says so in its log.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import type { ProcessMapResponse } from '../../src/schemas/process.js'
import { requireBuild, runCliOk } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { type ReadModelRows, sqliteRows } from '../helpers/read-model-rows.js'
import { exited, type LoggedServe, startLogged } from '../helpers/serve-process.js'

let dataDir: string
let port: number
let env: NodeJS.ProcessEnv
let key: string
let datasetId: string

const cli = (args: string[]): Promise<string> => runCliOk(dataDir, args)

/** Starts the service, collecting its log lines. */
const start = (): Promise<LoggedServe> => startLogged(env, port, key)

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  expect(await exited(child)).toBe(0)
}

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${String(port)}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  const answer = (await res.json()) as { failed: number }
  expect(answer.failed).toBe(0)
}

/** Waits until `ocelog status` shows every projection at the head of the log. */
async function caughtUp(): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const status = JSON.parse(await cli(['status', '--json'])) as { head: number; projections: { position: number | null }[] }
    if (status.projections.length > 0 && status.projections.every((p) => p.position === status.head)) return
    if (Date.now() > deadline) throw new Error(`read models not caught up: ${JSON.stringify(status)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The process map (GET /v1/process/map), all time and over a window holding the end of the orders' events and the packages' events. */
async function maps(): Promise<{ all: ProcessMapResponse; window: ProcessMapResponse }> {
  const get = async (query: string): Promise<ProcessMapResponse> => {
    const res = await fetch(`http://127.0.0.1:${String(port)}/v1/process/map${query}`, { headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(200)
    return (await res.json()) as ProcessMapResponse
  }
  return { all: await get(''), window: await get('?from=2024-05-01T08:10:00Z&to=2024-05-03T10:30:00Z') }
}

function rows(): Promise<ReadModelRows> {
  const { db } = openReadModelsDatabase(dataDir)
  return sqliteRows(db)(datasetId).finally(() => db.close())
}

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-read-models-file-'))
  port = await freePort()
  env = { ...process.env, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' }
  const created = JSON.parse(await cli(['keys', 'create', '--name', 'rebuild', '--json'])) as { key: string; dataset_id: string }
  key = created.key
  datasetId = created.dataset_id
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('read-models.db', () => {
  it('is rebuilt from the log, identical, with the same process map (all time and a window), when it was deleted while the service was stopped', async () => {
    const first = await start()
    for (let b = 0; b < 20; b++) {
      await post('/v1/event/batch', {
        events: Array.from({ length: 100 }, (_, i) => ({
          event: i % 3 === 0 ? 'Create Order' : 'Pick Item',
          timestamp: new Date(Date.UTC(2024, 4, 1, 8, b, i)).toISOString(),
          objects: [
            { type: 'order', id: `o-${String(b)}-${String(i % 10)}`, qualifier: 'order', properties: { step: i } },
            { type: 'item', id: `i-${String(i)}` },
          ],
          properties: { batch: b },
        })),
      })
      await post('/v1/object/batch', {
        objects: [
          {
            type: 'order',
            id: `o-${String(b)}-0`,
            properties: { status: 'picked' },
            timestamp: '2024-05-02T00:00:00Z',
            relationships: [{ type: 'customer', id: `c-${String(b % 4)}` }],
          },
        ],
      })
    }
    // Packages' events out of time order, some with end_timestamp, in three requests: the directly-follows read model relinks steps.
    const packageEvents = Array.from({ length: 60 }, (_, k) => {
      const t = Date.UTC(2024, 4, 3, 10, (k * 37) % 60)
      return {
        event: ['Scan', 'Load', 'Deliver'][k % 3],
        timestamp: new Date(t).toISOString(),
        ...(k % 2 === 0 ? { end_timestamp: new Date(t + 90_000).toISOString() } : {}),
        objects: [
          { type: 'package', id: `p-${String(k % 6)}` },
          { type: 'order', id: `o-${String(k % 20)}-0` },
        ],
      }
    })
    for (let r = 0; r < 3; r++) await post('/v1/event/batch', { events: packageEvents.slice(r * 20, r * 20 + 20) })
    await caughtUp()
    const before = await rows()
    expect([before.events.length, before.eventObjects.length, before.objectRelationships.length]).toEqual([2060, 4120, 20])
    const mapsBefore = await maps()
    expect(mapsBefore.all.median_relative_error).toBe(0.01)
    expect(mapsBefore.window.median_relative_error).toBe(0)
    expect(mapsBefore.window.object_types.map((m) => m.object_type)).toEqual(['item', 'order', 'package'])
    expect(mapsBefore.all.object_types.find((m) => m.object_type === 'package')?.edges.some((e) => e.waiting !== null)).toBe(true)
    expect(first.lines()).toContain('"projector":"worker threads"')
    await stop(first.child)

    for (const name of readdirSync(dataDir).filter((n) => n.startsWith('read-models.db'))) rmSync(join(dataDir, name))
    const second = await start()
    try {
      await caughtUp()
      expect(await rows()).toEqual(before)
      expect(await maps()).toEqual(mapsBefore)
      expect(second.lines()).toContain('read models: read-models.db is missing; made it anew, and the projector rebuilds the read models from the log')
    } finally {
      await stop(second.child)
    }
  }, 120_000)
})
