/**
 * e2e: the built service as a real process over HTTP. Every event_id answered with a 2xx must be
 * in `ocelog replay` and in `ocelog export` after the process is killed (SIGKILL) mid-load and
 * started again: a 2xx means durable (README § The API).
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCliOk } from '../helpers/cli.js'
import { spawnServe, waitUntilUp as waitUntilUpOn } from '../helpers/serve-process.js'
import { freePort } from '../helpers/free-port.js'

let dataDir: string
let port: number
let env: NodeJS.ProcessEnv
let key: string
let datasetId: string

function startService(): ChildProcess {
  return spawnServe(env)
}

const waitUntilUp = () => waitUntilUpOn(port, key)

const cli = (args: string[]): Promise<string> => runCliOk(dataDir, args)

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-e2e-'))
  port = await freePort()
  env = { ...process.env, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' }
  const created = JSON.parse(await cli(['keys', 'create', '--name', 'e2e', '--json'])) as { key: string; dataset_id: string }
  key = created.key
  datasetId = created.dataset_id
})
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the built service', () => {
  it('loses no acknowledged event when killed mid-load and restarted', async () => {
    const first = startService()
    await waitUntilUp()
    const acknowledged: string[] = []
    let stop = false
    const sender = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        const events = Array.from({ length: 20 }, (_, j) => ({
          event: 'Load Test',
          timestamp: new Date().toISOString(),
          objects: [
            { type: 'order', id: `w${String(worker)}-${String(i)}-${String(j)}`, qualifier: 'target' },
            { type: 'worker', id: String(worker) },
          ],
        }))
        try {
          const res = await fetch(`http://127.0.0.1:${String(port)}/v1/event/batch`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ events }),
          })
          if (res.status === 200) acknowledged.push(...((await res.json()) as { event_ids: string[] }).event_ids)
        } catch {
          return // the connection died with the process: that batch was never acknowledged
        }
      }
    }
    const senders = Array.from({ length: 6 }, (_, w) => sender(w))
    await new Promise((r) => setTimeout(r, 1500))
    first.kill('SIGKILL')
    stop = true
    await Promise.all(senders)
    await new Promise<void>((resolve) => (first.exitCode !== null || first.signalCode !== null ? resolve() : first.once('exit', () => resolve())))
    expect(acknowledged.length).toBeGreaterThan(100)

    const second = startService()
    try {
      await waitUntilUp()
      const replayed = new Set(
        (await cli(['replay', '--dataset', datasetId, '--json']))
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { type: string; data: { event_id?: string } })
          .flatMap((r) => (r.type === 'EventRecorded' && r.data.event_id !== undefined ? [r.data.event_id] : [])),
      )
      const missingFromLog = acknowledged.filter((id) => !replayed.has(id))
      expect(missingFromLog).toEqual([])

      const exported = JSON.parse(await cli(['export', '--dataset', datasetId])) as { events: { id: string }[] }
      const inExport = new Set(exported.events.map((e) => e.id))
      expect(acknowledged.filter((id) => !inExport.has(id))).toEqual([])
      console.info(
        `durability: ${String(acknowledged.length)} acknowledged event ids, all in replay (${String(replayed.size)} records) and export (${String(inExport.size)} events) after SIGKILL`,
      )
    } finally {
      second.kill('SIGTERM')
      await new Promise((r) => second.once('exit', r))
    }
  })

  it('stops cleanly on SIGTERM', async () => {
    const p = startService()
    await waitUntilUp()
    p.kill('SIGTERM')
    const code = await new Promise<number | null>((resolve) => p.once('exit', (c) => resolve(c)))
    expect(code).toBe(0)
  })

  it('brings the read models level with the log after the load stops', async () => {
    const p = startService()
    try {
      await waitUntilUp()
      const res = await fetch(`http://127.0.0.1:${String(port)}/v1/event`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'Quiet Check', objects: [{ type: 'order', id: 'q1' }] }),
      })
      expect(res.status).toBe(200)
      const { default: Database } = await import('better-sqlite3')
      const db = new Database(join(dataDir, 'ocelog.db'), { readonly: true })
      const rmDb = new Database(join(dataDir, 'read-models.db'), { readonly: true })
      try {
        const head = () => (db.prepare('SELECT max(position) AS p FROM records').get() as { p: number }).p
        const applied = () => (rmDb.prepare("SELECT position AS p FROM rm_checkpoints WHERE projector = 'events'").get() as { p: number } | undefined)?.p
        const deadline = Date.now() + 10_000
        while (applied() !== head() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
        expect(applied()).toBe(head())
      } finally {
        db.close()
        rmDb.close()
      }
    } finally {
      p.kill('SIGTERM')
      await new Promise((r) => p.once('exit', r))
    }
  })
})
