/**
 * e2e (docs/architecture.md#projection-runners-and-leases): projector processes on one PostgreSQL
 * database, on a server of this file's own. Two `ocelog project` processes offer both runners; one
 * holds each lease and the other waits. Under load, `kill -9` of the holder of a lease: the standby
 * takes it over within 10 s, `ocelog status` names the new holder, and once the load ends every
 * checkpoint reaches the log's head with each acknowledged event in the read models exactly once.
 * Then the server crashes (`pg_ctl stop -m immediate`) and starts again: the same projector process
 * takes its leases back without a restart and applies what is appended after.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leaseHolders } from '../../src/adapters/postgres/postgres-lease.js'
import type { Status } from '../../src/schemas/projections.js'
import { CLI, requireBuild, runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { type PostgresServer, postgresUnavailableReason, startPostgresServer } from '../helpers/postgres-server.js'
import { exited, spawnServe, waitUntilUp } from '../helpers/serve-process.js'

const reason = postgresUnavailableReason()
if (reason !== null) console.warn(`skipped: PostgreSQL projectors e2e: ${reason}`)

let server: PostgresServer
let url = ''
let dataDir = ''
const children: ChildProcess[] = []
const projectors: ChildProcess[] = []

/** An `ocelog project` process on the file's database. */
function startProjector(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'project'], {
    env: { ...process.env, POSTGRES_URL: url, OCELOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  children.push(child)
  projectors.push(child)
  return child
}

async function status(): Promise<Status> {
  const r = await runCli(dataDir, ['status', '--json'], { POSTGRES_URL: url })
  if (r.code !== 0) throw new Error(`status: ${r.stderr}`)
  return JSON.parse(r.stdout) as Status
}

/** The process id in a lease holder's name (`ocelog <host> pid <pid>`). */
const holderPid = (holder: string): number => Number(/pid (\d+)$/.exec(holder)?.[1] ?? -1)

/** Polls `ocelog status` until `done` holds, at most `timeoutMs`; the last status. */
async function statusUntil(done: (s: Status) => boolean, timeoutMs: number): Promise<Status> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await status()
    if (done(s) || Date.now() > deadline) return s
    await new Promise((r) => setTimeout(r, 200))
  }
}

beforeAll(async () => {
  if (reason !== null) return
  requireBuild()
  server = await startPostgresServer()
  url = await server.createDatabase('ocelog_projectors')
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-pg-projectors-'))
}, 120_000)

afterAll(async () => {
  for (const c of children) {
    c.kill('SIGKILL')
    await exited(c)
  }
  server?.remove()
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true })
})

describe.skipIf(reason !== null)('projector processes on one PostgreSQL database', () => {
  it('keeps one holder per runner; after kill -9 of a holder under load the standby takes over in ≤ 10 s, and nothing is lost or repeated', async () => {
    const created = await runCli(dataDir, ['keys', 'create', '--name', 'e2e', '--json'], { POSTGRES_URL: url })
    expect(created.code).toBe(0)
    const { key, dataset_id } = JSON.parse(created.stdout) as { key: string; dataset_id: string }
    const port = await freePort()
    const api = spawnServe(
      { ...process.env, POSTGRES_URL: url, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      { args: ['--no-projector'] },
    )
    children.push(api)
    await waitUntilUp(port, key, 30_000)

    const first = startProjector()
    const second = startProjector()
    const pids = new Set([first.pid, second.pid])
    // Both runners held, each by one of the two processes.
    const held = await statusUntil((s) => (s.leases ?? []).length === 2, 30_000)
    expect((held.leases ?? []).map((l) => l.lease)).toEqual(['entities', 'process'])
    for (const l of held.leases ?? []) expect(pids.has(holderPid(l.holder))).toBe(true)

    // Load: batches of 50 events over 5 objects each, from 4 senders, until told to stop.
    const acknowledged: string[] = []
    let sending = true
    const sender = async (tag: string) => {
      for (let i = 0; sending; i++) {
        const events = Array.from({ length: 50 }, (_, j) => ({
          event: j % 2 === 0 ? 'pick' : 'pack',
          timestamp: new Date(Date.UTC(2024, 4, 1) + i * 1000 + j).toISOString(),
          objects: [{ type: 'order', id: `o-${tag}-${String(j % 5)}` }],
        }))
        const res = await fetch(`http://127.0.0.1:${String(port)}/v1/event/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events }),
        })
        expect(res.status).toBe(200)
        acknowledged.push(...((await res.json()) as { event_ids: string[] }).event_ids)
      }
    }
    const senders = Promise.all(['a', 'b', 'c', 'd'].map(sender))
    await new Promise((r) => setTimeout(r, 2000))

    // kill -9 the holder of `entities`; the other process takes it over.
    const before = (await status()).leases?.find((l) => l.lease === 'entities')
    expect(before).toBeDefined()
    const victim = [first, second].find((c) => c.pid === holderPid(before?.holder ?? ''))
    expect(victim).toBeDefined()
    const survivor = victim === first ? second : first
    // The takeover is timed on the server's own view (pg_locks), polled every 50 ms: a CLI run per poll would add its start-up.
    const watcher = new pg.Pool({ connectionString: url, max: 1 })
    const killedAt = Date.now()
    victim?.kill('SIGKILL')
    let takeover = Number.POSITIVE_INFINITY
    while (Date.now() - killedAt < 15_000) {
      const [holder] = await leaseHolders(watcher, ['entities'])
      if (holder !== undefined && holderPid(holder.holder) === survivor.pid) {
        takeover = (Date.now() - killedAt) / 1000
        break
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    await watcher.end()
    const after = await status()
    console.log(`standby took over the lease of runner entities ${takeover.toFixed(1)} s after kill -9 of its holder`)
    expect(takeover).toBeLessThanOrEqual(10)
    // The survivor holds both runners now.
    expect((after.leases ?? []).map((l) => [l.lease, holderPid(l.holder)])).toEqual([
      ['entities', survivor.pid],
      ['process', survivor.pid],
    ])

    await new Promise((r) => setTimeout(r, 1000))
    sending = false
    await senders
    expect(acknowledged.length).toBeGreaterThan(500)

    // Every checkpoint reaches the head; each acknowledged event is in the read models once.
    const caughtUp = await statusUntil((s) => s.head !== null && s.projections.every((p) => p.position === s.head), 60_000)
    expect(caughtUp.projections.filter((p) => p.position !== caughtUp.head)).toEqual([])
    expect(caughtUp.projections.filter((p) => p.stopped !== null)).toEqual([])
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    try {
      const events = await db.query<{ event_id: string }>('SELECT event_id FROM ocelog.rm_events WHERE dataset_id = $1', [dataset_id])
      expect(events.rows.length).toBe(acknowledged.length)
      expect(new Set(events.rows.map((r) => r.event_id))).toEqual(new Set(acknowledged))
      // Each of the 20 orders' traces holds every one of its events once: its steps are its events.
      const steps = await db.query<{ n: string }>('SELECT count(*) AS n FROM ocelog.rm_df_steps WHERE dataset_id = $1', [dataset_id])
      expect(Number(steps.rows[0]?.n)).toBe(acknowledged.length)
    } finally {
      await db.end()
    }

    // A crash of the server: the lease sessions die with it; the survivor takes the leases back when it is up.
    server.stop('immediate')
    await new Promise((r) => setTimeout(r, 1500))
    server.start()
    const back = await statusUntil((s) => (s.leases ?? []).length === 2, 30_000)
    expect((back.leases ?? []).map((l) => holderPid(l.holder))).toEqual([survivor.pid, survivor.pid])
    await waitUntilUp(port, key, 30_000)
    const res = await fetch(`http://127.0.0.1:${String(port)}/v1/event`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'after the crash', timestamp: '2025-01-01T00:00:00Z', objects: [{ type: 'order', id: 'o-after' }] }),
    })
    expect(res.status).toBe(200)
    const resumed = await statusUntil((s) => s.head !== null && s.projections.every((p) => p.position === s.head), 60_000)
    expect(resumed.head).toBe((caughtUp.head ?? 0) + 1)
    expect(resumed.projections.filter((p) => p.position !== resumed.head)).toEqual([])
  }, 240_000)

  it('rebuilds with both runners side by side in one process, to the same read models', async () => {
    // The projectors of the test above hold the leases: a one-off run needs them free.
    for (const c of projectors) {
      c.kill('SIGKILL')
      await exited(c)
    }
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    try {
      const snapshot = async () => ({
        events: (await db.query('SELECT dataset_id, event_id, position FROM ocelog.rm_events ORDER BY position')).rows,
        steps: Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM ocelog.rm_df_steps')).rows[0]?.n),
        aggregates: (await db.query('SELECT * FROM ocelog.rm_df_aggregates ORDER BY 1, 2, 3, 4')).rows,
      })
      const before = await snapshot()
      expect(before.events.length).toBeGreaterThan(500)
      const rebuilt = await runCli(dataDir, ['project', '--rebuild'], { POSTGRES_URL: url, LOG_LEVEL: 'info' })
      expect(rebuilt.code).toBe(0)
      const head = (await status()).head ?? 0
      for (const runner of ['entities', 'process']) expect(rebuilt.stdout).toContain(`"msg":"read-models/${runner}: rebuilt: ${String(head)} record(s)"`)
      expect(rebuilt.stdout).toContain(`"msg":"read-models: rebuilt: ${String(head)} record(s), 2 runners side by side"`)
      const after = await status()
      expect(after.projections.filter((p) => p.position !== head)).toEqual([])
      expect(after.leases ?? []).toEqual([])
      expect(await snapshot()).toEqual(before)
    } finally {
      await db.end()
    }
  }, 120_000)
})
