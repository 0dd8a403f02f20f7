/**
 * e2e (docs/operations.md#production-on-postgresql): the built service and CLI as real processes
 * on one PostgreSQL database, on a server of this file's own (it stops and crashes it):
 * - start-up: POSTGRES_URL beside EVENTSTORE_URL, a wrong password, a missing database: one line each;
 * - the keys and the log live in PostgreSQL, and no SQLite file is written;
 * - two API processes share a key's budget;
 * - `kill -9` of an API process under load: every acknowledged event is in the log exactly once;
 * - `pg_ctl stop -m immediate` under load: 503 with Retry-After while it is down, never 500, and the
 *   same process accepts again once it is back, nothing acknowledged lost.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { type PostgresServer, postgresUnavailableReason, startPostgresServer } from '../helpers/postgres-server.js'
import { exited, spawnServe, waitUntilUp } from '../helpers/serve-process.js'

const reason = postgresUnavailableReason()
if (reason !== null) console.warn(`skipped: PostgreSQL processes e2e: ${reason}`)

let server: PostgresServer
let url = ''
let dataDir = ''
const children: ChildProcess[] = []

interface CreatedKey {
  key: string
  dataset_id: string
}

async function createKey(extra: string[] = []): Promise<CreatedKey> {
  const r = await runCli(dataDir, ['keys', 'create', '--name', 'e2e', '--json', ...extra], { POSTGRES_URL: url })
  if (r.code !== 0) throw new Error(`keys create: ${r.stderr}`)
  return JSON.parse(r.stdout) as CreatedKey
}

async function startApi(key: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort()
  const child = spawnServe(
    { ...process.env, POSTGRES_URL: url, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    { args: ['--no-projector'] },
  )
  children.push(child)
  await waitUntilUp(port, key, 30_000)
  return { child, port }
}

/** Posts a batch of `n` events; the status, the ids it acknowledged, and its Retry-After and content type. */
async function postBatch(port: number, key: string, n: number, tag: string) {
  const events = Array.from({ length: n }, (_, i) => ({
    event: `e2e ${tag}`,
    timestamp: '2024-05-01T10:00:00Z',
    objects: [{ type: 'order', id: `o-${tag}-${String(i % 5)}` }],
  }))
  const res = await fetch(`http://127.0.0.1:${String(port)}/v1/event/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  })
  const body = (await res.json()) as { event_ids?: string[] }
  return {
    status: res.status,
    ids: res.status === 200 ? (body.event_ids ?? []) : [],
    retryAfter: res.headers.get('retry-after'),
    type: res.headers.get('content-type'),
  }
}

/** The event ids of a dataset's records in the log, by `ocelog replay --json`. */
async function eventIdsInLog(datasetId: string): Promise<string[]> {
  const r = await runCli(dataDir, ['replay', '--dataset', datasetId, '--json'], { POSTGRES_URL: url })
  if (r.code !== 0) throw new Error(`replay: ${r.stderr}`)
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string; data: { event_id?: string } })
    .filter((r) => r.type === 'EventRecorded')
    .map((r) => r.data.event_id ?? '')
}

/** Every id once: how many times each acknowledged id is in the log, for those not exactly once. */
function notOnce(acknowledged: readonly string[], inLog: readonly string[]): Array<[string, number]> {
  const counts = new Map<string, number>()
  for (const id of inLog) counts.set(id, (counts.get(id) ?? 0) + 1)
  const bad: Array<[string, number]> = acknowledged.filter((id) => counts.get(id) !== 1).map((id) => [id, counts.get(id) ?? 0])
  for (const [id, n] of counts) if (n > 1) bad.push([id, n])
  return bad
}

beforeAll(async () => {
  if (reason !== null) return
  requireBuild()
  server = await startPostgresServer()
  url = await server.createDatabase('ocelog_e2e')
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-pg-e2e-'))
}, 120_000)

afterAll(async () => {
  for (const c of children) {
    c.kill('SIGKILL')
    await exited(c)
  }
  server?.remove()
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true })
})

describe.skipIf(reason !== null)('Ocelog on one PostgreSQL database', () => {
  it('says in one line why it cannot start: two backends, a wrong password, a missing database', async () => {
    const both = await runCli(dataDir, ['datasets', 'list'], { POSTGRES_URL: url, EVENTSTORE_URL: 'esdb://localhost:2113', MONGODB_URL: 'mongodb://localhost' })
    expect(both.code).toBe(1)
    expect(both.stderr.trim().split('\n')).toEqual([expect.stringContaining('POSTGRES_URL goes alone')])

    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query("CREATE ROLE ocelog_user LOGIN PASSWORD 'right-password'")
    await admin.end()
    const wrong = new URL(url)
    wrong.username = 'ocelog_user'
    wrong.password = 'wrong-password'
    const refused = await runCli(dataDir, ['datasets', 'list'], { POSTGRES_URL: wrong.toString() })
    expect(refused.code).toBe(1)
    const lines = refused.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^ocelog: PostgreSQL at POSTGRES_URL=postgres:\/\/ocelog_user:\*\*\*@127\.0\.0\.1:\d+\/ocelog_e2e refused the password/)
    expect(refused.stderr).not.toContain('wrong-password')

    const missing = new URL(url)
    missing.pathname = '/no_such_database'
    const absent = await runCli(dataDir, ['datasets', 'list'], { POSTGRES_URL: missing.toString() })
    expect(absent.code).toBe(1)
    expect(absent.stderr.trim().split('\n')).toEqual([expect.stringMatching(/database "no_such_database" does not exist \(create it first/)])
  })

  it('keeps the keys, the log and the read models in PostgreSQL, writes no SQLite file, and points backup at pg_dump', async () => {
    const k = await createKey()
    const { child, port } = await startApi(k.key)
    const posted = await postBatch(port, k.key, 3, 'first')
    expect(posted.status).toBe(200)
    expect(posted.ids).toHaveLength(3)
    expect(notOnce(posted.ids, await eventIdsInLog(k.dataset_id))).toEqual([])
    const list = await runCli(dataDir, ['datasets', 'list', '--json'], { POSTGRES_URL: url })
    expect((JSON.parse(list.stdout) as { id: string }[]).map((d) => d.id)).toContain(k.dataset_id)
    const backup = await runCli(dataDir, ['backup', '--out', join(dataDir, 'copy.db')], { POSTGRES_URL: url })
    expect(backup.code).toBe(1)
    expect(backup.stderr).toContain('pg_dump')
    // No projector runs (the API has --no-projector): export catches the read models up itself, under the runners' leases.
    const exported = await runCli(dataDir, ['export', '--dataset', k.dataset_id], { POSTGRES_URL: url })
    expect(exported.code).toBe(0)
    const doc = JSON.parse(exported.stdout) as { events: { id: string; type: string }[] }
    expect(doc.events.map((e) => e.id).sort()).toEqual([...posted.ids].sort())
    // The read side answers from the read models in PostgreSQL.
    const map = await fetch(`http://127.0.0.1:${String(port)}/v1/process/map`, { headers: { authorization: `Bearer ${k.key}` } })
    expect(map.status).toBe(200)
    const body = (await map.json()) as { object_types: { object_type: string; activities: { activity: string; events: number }[] }[] }
    expect(body.object_types.map((t) => [t.object_type, t.activities.map((a) => [a.activity, a.events])])).toEqual([['order', [['e2e first', 3]]]])
    child.kill('SIGKILL')
    await exited(child)
    expect(readdirSync(dataDir)).toEqual([])
  }, 120_000)

  it("holds one key's budget across two API processes", async () => {
    const k = await createKey(['--rate-limit', '10'])
    const a = await startApi(k.key)
    const b = await startApi(k.key)
    // waitUntilUp spent one request on each process.
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      for (const port of [a.port, b.port]) {
        const res = await fetch(`http://127.0.0.1:${String(port)}/v1/health`, { headers: { authorization: `Bearer ${k.key}` } })
        statuses.push(res.status)
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(8)
    expect(statuses.filter((s) => s === 429)).toHaveLength(4)
    for (const c of [a.child, b.child]) {
      c.kill('SIGKILL')
      await exited(c)
    }
  }, 120_000)

  it('keeps every acknowledged event exactly once when an API process is killed under load', async () => {
    const k = await createKey()
    const env = { OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' }
    const a = await startApi(k.key, env)
    const b = await startApi(k.key, env)
    const acknowledged: string[] = []
    let failedOnA = 0
    let stop = false
    const loop = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const port = i % 2 === 0 ? a.port : b.port
        try {
          const r = await postBatch(port, k.key, 20, `kill-${String(w)}-${String(i)}`)
          if (r.status === 200) acknowledged.push(...r.ids)
        } catch {
          failedOnA += 1
        }
      }
    }
    const loops = [0, 1, 2, 3].map(loop)
    await new Promise((r) => setTimeout(r, 1500))
    a.child.kill('SIGKILL')
    await exited(a.child)
    await new Promise((r) => setTimeout(r, 1500))
    stop = true
    await Promise.all(loops)
    b.child.kill('SIGKILL')
    await exited(b.child)
    expect(failedOnA).toBeGreaterThan(0)
    expect(acknowledged.length).toBeGreaterThan(100)
    expect(notOnce(acknowledged, await eventIdsInLog(k.dataset_id))).toEqual([])
  }, 120_000)

  it('answers 503 while PostgreSQL is down, never 500, and accepts again without a restart', async () => {
    const k = await createKey()
    const api = await startApi(k.key, { OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' })
    const acknowledged: string[] = []
    const statuses = new Map<number, number>()
    const unavailable: { retryAfter: string | null; type: string | null }[] = []
    let phase: 'before' | 'down' | 'after' = 'before'
    let acceptedAfter = 0
    let stop = false
    const loop = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const r = await postBatch(api.port, k.key, 10, `down-${String(w)}-${String(i)}`)
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        if (r.status === 200) {
          acknowledged.push(...r.ids)
          if (phase === 'after') acceptedAfter += 1
        }
        if (r.status === 503) unavailable.push({ retryAfter: r.retryAfter, type: r.type })
        if (phase === 'down') await new Promise((res) => setTimeout(res, 20))
      }
    }
    const loops = [0, 1, 2].map(loop)
    await new Promise((r) => setTimeout(r, 1000))
    server.stop('immediate')
    phase = 'down'
    await new Promise((r) => setTimeout(r, 2000))
    server.start()
    phase = 'after'
    const deadline = Date.now() + 30_000
    while (acceptedAfter < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    stop = true
    await Promise.all(loops)

    expect([...statuses.keys()].sort()).toEqual([200, 503])
    expect(unavailable.length).toBeGreaterThan(0)
    expect(unavailable.every((u) => u.retryAfter === '1' && u.type?.startsWith('application/problem+json') === true)).toBe(true)
    expect(acceptedAfter).toBeGreaterThanOrEqual(5)
    expect(api.child.exitCode).toBeNull()
    expect(notOnce(acknowledged, await eventIdsInLog(k.dataset_id))).toEqual([])
    api.child.kill('SIGKILL')
    await exited(api.child)
  }, 120_000)
})
