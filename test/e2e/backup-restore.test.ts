/**
 * e2e (README § Operations, backup and restore; digests): a backup of the built service's log taken
 * while a load runs, restored into a fresh data directory, replays as a prefix of the live log and
 * verifies against the digest of the live dataset at the backup's position. A restore refuses a
 * log in use and, without --force, an existing one.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { type RunningService, startService } from '../helpers/service.js'

let service: RunningService
let spare: string
let key: string
let datasetId: string

beforeAll(async () => {
  service = await startService({ env: { OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' } })
  const created = await service.createKey({ name: 'backup' })
  key = created.key
  datasetId = created.dataset_id
  spare = mkdtempSync(join(tmpdir(), 'ocelog-restored-'))
})
afterAll(async () => {
  await service.stop()
  rmSync(spare, { recursive: true, force: true })
})

async function postBatch(b: number): Promise<void> {
  const res = await fetch(`${service.url}/v1/event/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      events: Array.from({ length: 100 }, (_, i) => ({
        event: i % 2 === 0 ? 'Pick' : 'Ship',
        timestamp: new Date(Date.UTC(2024, 4, 1, 8, b % 60, i % 60)).toISOString(),
        objects: [{ type: 'order', id: `o-${String(b)}-${String(i % 7)}` }],
        properties: { batch: b },
      })),
    }),
  })
  expect(res.status).toBe(200)
}

function json<T>(text: string): T {
  return JSON.parse(text) as T
}

describe('ocelog backup and restore', () => {
  it('copies the log while a load runs; the copy, restored, replays as a prefix of the live log and verifies against its digest', async () => {
    const file = join(spare, 'backup.db')
    let loading = true
    let batches = 0
    // The load runs until the backup is done (bounded: 400 batches, 120 s), then sends two more.
    const load = (async () => {
      const deadline = Date.now() + 120_000
      while (loading && batches < 400 && Date.now() < deadline) await postBatch(batches++)
    })()
    // Let the load get going, then back up in the middle of it.
    for (let i = 0; i < 400; i++) {
      const status = json<{ head: number | null }>((await service.cli(['status', '--json'])).stdout)
      if ((status.head ?? 0) >= 500) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const backup = await service.cli(['backup', '--out', file, '--json'])
    loading = false
    await load
    await postBatch(batches++)
    await postBatch(batches++)
    expect(backup.code, backup.stderr).toBe(0)
    const summary = json<{ head: number; records: number; bytes: number }>(backup.stdout)
    expect(summary.head).toBeGreaterThanOrEqual(500)
    expect(summary.bytes).toBeGreaterThan(0)
    // One self-contained file: no -wal, -shm or .partial beside it.
    expect(readdirSync(spare).filter((n) => n.startsWith('backup.db'))).toEqual(['backup.db'])

    const live = json<{ head: number }>((await service.cli(['status', '--json'])).stdout)
    expect(live.head).toBeGreaterThan(summary.head)
    const digest = json<{ position: number; hash: string; records: number }>(
      (await service.cli(['digest', '--dataset', datasetId, '--position', String(summary.head), '--json'])).stdout,
    )
    expect(digest).toMatchObject({ position: summary.head, records: summary.records })

    const restoredDir = join(spare, 'data')
    const restored = await runCli(restoredDir, ['restore', file, '--data-dir', restoredDir, '--json'])
    expect(restored.code, restored.stderr).toBe(0)
    expect(json<{ head: number }>(restored.stdout).head).toBe(summary.head)
    expect(readdirSync(spare).filter((n) => n.startsWith('backup.db'))).toEqual(['backup.db'])

    const liveReplay = (await service.cli(['replay', '--dataset', datasetId, '--json'])).stdout.trim().split('\n')
    const restoredReplay = (await runCli(restoredDir, ['replay', '--dataset', datasetId, '--json'])).stdout.trim().split('\n')
    expect(restoredReplay).toHaveLength(summary.records)
    expect(restoredReplay).toEqual(liveReplay.slice(0, restoredReplay.length))

    const verified = await runCli(restoredDir, ['verify', '--dataset', datasetId, '--position', String(summary.head), '--digest', digest.hash, '--json'])
    expect(verified.code, verified.stderr).toBe(0)
    expect(json<{ ok: boolean; unchanged: boolean; records: number }>(verified.stdout)).toMatchObject({ ok: true, unchanged: true, records: summary.records })
    const files = await runCli(restoredDir, ['verify', '--json'])
    expect(files.code, files.stdout).toBe(0)
    expect(json<{ ok: boolean; head: number }>(files.stdout)).toMatchObject({ ok: true, head: summary.head })
  }, 180_000)

  it('refuses to restore over a log in use, and over an existing one without --force', async () => {
    const file = join(spare, 'backup.db')
    const live = await runCli(service.dataDir, ['restore', file, '--data-dir', service.dataDir, '--force'])
    expect(live.code).toBe(1)
    expect(live.stderr).toContain('is in use')
    const restoredDir = join(spare, 'data')
    const existing = await runCli(restoredDir, ['restore', file, '--data-dir', restoredDir])
    expect(existing.code).toBe(1)
    expect(existing.stderr).toContain('exists; a restore replaces it only with --force')
    const forced = await runCli(restoredDir, ['restore', file, '--data-dir', restoredDir, '--force', '--json'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(json<{ movedAside: string }>(forced.stdout).movedAside).toMatch(/ocelog\.db\.before-restore-\d{8}T\d{9}Z$/)
  }, 60_000)

  it('refuses a file that is not a usable backup', async () => {
    const notDb = join(spare, 'not-a-db')
    writeFileSync(notDb, 'x'.repeat(8192))
    const r = await runCli(spare, ['restore', notDb, '--data-dir', join(spare, 'other')])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is not a usable backup')
  })
})
