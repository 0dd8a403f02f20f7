/** e2e: the built `ocelog` CLI as a real process on a real SQLite file. */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, requireBuild, runCli, runCliReaderLeaves } from '../helpers/cli.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { Ingest } from '../../src/write/ingest.js'

let dataDir: string

function ocelog(args: string[], extraEnv: Record<string, string> = {}) {
  return runCli(dataDir, args, extraEnv)
}

beforeAll(() => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-cli-'))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('ocelog --help', () => {
  it('lists the commands and the environment variables', async () => {
    const { code, stdout } = await ocelog(['--help'])
    expect(code).toBe(0)
    for (const word of ['serve', 'project', 'keys', 'datasets', 'replay', 'OCELOG_DATA_DIR', 'REDIS_URL']) expect(stdout).toContain(word)
  })
})

describe('ocelog keys', () => {
  it('creates a key for a new dataset and prints it once as JSON', async () => {
    const { code, stdout } = await ocelog(['keys', 'create', '--name', 'feed', '--scopes', 'ingest:write', '--json'])
    expect(code).toBe(0)
    const created = JSON.parse(stdout)
    expect(Object.keys(created).sort()).toEqual(['dataset_id', 'dataset_name', 'key', 'key_id', 'rate_limit_per_minute', 'scopes'])
    expect(created.rate_limit_per_minute).toBeNull()
    expect(created.key).toMatch(/^ocl_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/)
    expect(created.scopes).toEqual(['ingest:write'])
    const list = await ocelog(['keys', 'list', '--json'])
    expect(list.stdout).not.toContain(created.key.slice(-43))
    expect(JSON.parse(list.stdout).map((k: { key_id: string }) => k.key_id)).toContain(created.key_id)
  })

  it('creates a second key for an existing dataset', async () => {
    const a = JSON.parse((await ocelog(['keys', 'create', '--name', 'a', '--json'])).stdout)
    const b = JSON.parse((await ocelog(['keys', 'create', '--name', 'b', '--dataset', a.dataset_id, '--json'])).stdout)
    expect(b.dataset_id).toBe(a.dataset_id)
    const datasets = JSON.parse((await ocelog(['datasets', 'list', '--json'])).stdout)
    expect(datasets.find((d: { id: string }) => d.id === a.dataset_id).keys).toBe(2)
  })

  it('refuses a dataset that does not exist, naming it', async () => {
    const { code, stderr } = await ocelog(['keys', 'create', '--name', 'x', '--dataset', 'nope'])
    expect(code).toBe(1)
    expect(stderr).toContain('dataset "nope" does not exist')
  })

  it('refuses an unknown scope, listing the known ones', async () => {
    const { code, stderr } = await ocelog(['keys', 'create', '--name', 'x', '--scopes', 'admin'])
    expect(code).toBe(1)
    expect(stderr).toContain('unknown scope "admin"; known scopes: ingest:write, process:read')
  })

  it('revokes a key once', async () => {
    const k = JSON.parse((await ocelog(['keys', 'create', '--name', 'r', '--json'])).stdout)
    expect((await ocelog(['keys', 'revoke', k.key_id])).code).toBe(0)
    const again = await ocelog(['keys', 'revoke', k.key_id])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already revoked')
  })

  it('creates a key with its own rate limit, lists it beside the default, changes it and clears it', async () => {
    const bulk = JSON.parse((await ocelog(['keys', 'create', '--name', 'bulk-load', '--rate-limit', '60000', '--json'])).stdout)
    expect(bulk.rate_limit_per_minute).toBe(60_000)
    const live = JSON.parse((await ocelog(['keys', 'create', '--name', 'live', '--dataset', bulk.dataset_id, '--json'])).stdout)
    const listed = JSON.parse((await ocelog(['keys', 'list', '--json'])).stdout) as { key_id: string; rate_limit_per_minute: number | null }[]
    expect(listed.filter((k) => k.key_id === bulk.key_id || k.key_id === live.key_id).map((k) => k.rate_limit_per_minute)).toEqual([60_000, null])
    const text = (await ocelog(['keys', 'list'], { OCELOG_RATE_LIMIT_PER_MINUTE: '900' })).stdout
    expect(text.split('\n')[0]).toContain('RATE LIMIT')
    expect(text.split('\n').find((l) => l.startsWith(bulk.key_id))).toContain('60000/min')
    expect(text.split('\n').find((l) => l.startsWith(live.key_id))).toContain('900/min (default)')

    const updated = await ocelog(['keys', 'update', live.key_id, '--rate-limit', '5'])
    expect([updated.code, updated.stdout]).toEqual([0, `API key ${live.key_id} (live): budget 5/min\n`])
    const cleared = JSON.parse((await ocelog(['keys', 'update', bulk.key_id, '--rate-limit', 'default', '--json'])).stdout)
    expect([cleared.key_id, cleared.rate_limit_per_minute]).toEqual([bulk.key_id, null])
    const after = JSON.parse((await ocelog(['keys', 'list', '--json'])).stdout) as { key_id: string; rate_limit_per_minute: number | null }[]
    expect(after.filter((k) => k.key_id === bulk.key_id || k.key_id === live.key_id).map((k) => k.rate_limit_per_minute)).toEqual([null, 5])
  })

  it('refuses a rate limit that is not a whole number of requests per minute, and a key that does not exist', async () => {
    const zero = await ocelog(['keys', 'create', '--name', 'x', '--rate-limit', '0'])
    expect([zero.code, zero.stderr]).toEqual([1, 'ocelog: --rate-limit 0 must be from 1 to 1000000000 requests per minute, or "default"\n'])
    const words = await ocelog(['keys', 'create', '--name', 'x', '--rate-limit', 'fast'])
    expect(words.stderr).toContain('--rate-limit "fast" must be a whole number of requests per minute')
    const missing = await ocelog(['keys', 'update', 'nosuchkey', '--rate-limit', '10'])
    expect([missing.code, missing.stderr]).toEqual([1, 'ocelog: no API key with id nosuchkey (see: ocelog keys list)\n'])
  })

  it('asks for --name', async () => {
    const { code, stderr } = await ocelog(['keys', 'create'])
    expect(code).not.toBe(0)
    expect(stderr).toContain("required option '--name <name>'")
  })
})

describe('configuration errors', () => {
  it('stop the process with a message naming the variable', async () => {
    const { code, stderr } = await ocelog(['keys', 'list'], { OCELOG_RATE_LIMIT_PER_MINUTE: 'lots' })
    expect(code).toBe(1)
    expect(stderr).toMatch(/^ocelog: OCELOG_RATE_LIMIT_PER_MINUTE=lots/)
  })
})

describe('ocelog replay and project', () => {
  it('replays a dataset in log order and rebuilds the read models', async () => {
    const k = JSON.parse((await ocelog(['keys', 'create', '--name', 'replay', '--json'])).stdout)
    const db = openDatabase(dataDir)
    const log = new SqliteEventLog(db)
    const ctx = { datasetId: k.dataset_id, keyId: k.key_id, requestId: 'req-1', receivedAt: new Date().toISOString() }
    const { accepted } = await new Ingest(log).recordEvents(
      [
        { event: 'A', objects: [{ type: 't', id: '1' }] },
        { event: 'B', objects: [{ type: 't', id: '1' }] },
      ],
      ctx,
    )
    db.close()
    const replay = await ocelog(['replay', '--dataset', k.dataset_id, '--json'])
    const lines = replay.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.data.event_id)).toEqual(accepted.map((e) => e.event_id))
    expect(lines.map((l) => l.type)).toEqual(['EventRecorded', 'EventRecorded'])
    expect(lines[0].data.request_id).toBe('req-1')
    const from = await ocelog(['replay', '--dataset', k.dataset_id, '--json', '--from', String(lines[0].position)])
    expect(from.stdout.trim().split('\n')).toHaveLength(1)
    const rebuilt = await ocelog(['project', '--rebuild'])
    expect(rebuilt.code).toBe(0)
  })

  it('rebuilds with each runner in a thread of its own, one line per runner and one for the run, and names a runner that fails', async () => {
    const head = (JSON.parse((await ocelog(['status', '--json'])).stdout) as { head: number }).head
    const rebuilt = await ocelog(['project', '--rebuild'], { LOG_LEVEL: 'info' })
    expect(rebuilt.code).toBe(0)
    const lines = rebuilt.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; records?: number; position?: number; runners?: number })
      .filter((l) => l.msg.includes(': rebuilt: '))
    expect(lines.map((l) => l.msg.replace(/\d+ record/, 'N record'))).toEqual([
      'read-models/entities: rebuilt: N record(s)',
      'read-models/process: rebuilt: N record(s)',
      'read-models: rebuilt: N record(s), 2 runners side by side',
    ])
    expect(lines.map((l) => [l.records, l.position])).toEqual([
      [head, head],
      [head, head],
      [head, head],
    ])

    // A record the entities runner cannot apply: the run exits 1 naming that runner; the process runner still reached the head.
    const rm = openReadModelsDatabase(dataDir).db
    // The entities runner applies the log again from its start (its checkpoints gone), into rm_events, which refuses every row.
    rm.exec(`DELETE FROM main.rm_checkpoints; DELETE FROM rm_events;
             CREATE TRIGGER poison BEFORE INSERT ON rm_events BEGIN SELECT RAISE(ABORT, 'poisoned'); END`)
    try {
      const failed = await ocelog(['project', '--once'])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('runner entities: projection read-models/entities stopped at the record at position')
      const checkpoint = rm.prepare("SELECT position FROM process.rm_checkpoints WHERE projector = 'directly_follows'").pluck().get()
      expect(checkpoint).toBe(head)
    } finally {
      rm.exec('DROP TRIGGER IF EXISTS poison')
      rm.close()
    }
  })

  it('keeps `ocelog project` running, projects what another process appends, and stops on SIGTERM', async () => {
    const k = JSON.parse((await ocelog(['keys', 'create', '--name', 'worker', '--json'])).stdout)
    const worker = spawn(process.execPath, [CLI, 'project'], { env: { ...process.env, OCELOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, stdio: 'ignore' })
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)))
    try {
      await new Promise((r) => setTimeout(r, 1500))
      expect(worker.exitCode).toBeNull()
      const db = openDatabase(dataDir)
      const rmDb = openReadModelsDatabase(dataDir).db
      try {
        const ctx = { datasetId: k.dataset_id, keyId: k.key_id, requestId: 'req-w', receivedAt: new Date().toISOString() }
        await new Ingest(new SqliteEventLog(db)).recordEvents([{ event: 'Worker Check', objects: [{ type: 't', id: 'w' }] }], ctx)
        const query = new SqliteReadModelQuery(rmDb)
        const events = async () => (await query.events(k.dataset_id, { limit: 10 })).events
        const deadline = Date.now() + 10_000
        while ((await events()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
        expect((await events()).map((e) => e.event_type)).toEqual(['Worker Check'])
      } finally {
        db.close()
        rmDb.close()
      }
    } finally {
      worker.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  })

  it('stops a replay quietly with status 141 when the reader of stdout leaves (`ocelog replay | head`)', async () => {
    const k = JSON.parse((await ocelog(['keys', 'create', '--name', 'replay-head', '--json'])).stdout)
    const db = openDatabase(dataDir)
    const ctx = { datasetId: k.dataset_id, keyId: k.key_id, requestId: 'req-h', receivedAt: new Date().toISOString() }
    await new Ingest(new SqliteEventLog(db)).recordEvents([{ event: 'A', objects: [{ type: 't', id: 'h' }] }], ctx)
    db.close()
    for (const args of [[], ['--json']]) {
      // Without the fix: exit 1 after Node's "Error: write EPIPE" stack, or 0 with the record count on stderr.
      expect(await runCliReaderLeaves(dataDir, ['replay', '--dataset', k.dataset_id, ...args])).toEqual({ code: 141, stderr: '' })
    }
  })

  it('refuses to replay a dataset that does not exist', async () => {
    const { code, stderr } = await ocelog(['replay', '--dataset', 'missing'])
    expect(code).toBe(1)
    expect(stderr).toContain('dataset "missing" does not exist')
  })
})
