/**
 * e2e (README § Exactly once; docs/api.md#idempotency-keys): a retry after the
 * service was killed between commit and answer records each item once.
 *
 * A TCP proxy stands between the client and the built service. When the service's answer to the
 * armed request arrives, the proxy kills the service (SIGKILL) and drops the client's connection
 * without passing on a byte: the append had committed (the service answers only once the record is
 * durable), and the client never learns it. The service is started again on the same data dir, and
 * the retry of the same items (with the same idempotency keys) is answered as first recorded.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OcelogClient } from '@ocelog/client'
import { requireBuild, runCliOk } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { exited, spawnServe, waitUntilUp } from '../helpers/serve-process.js'

let dataDir: string
let port: number
let env: NodeJS.ProcessEnv
let service: ChildProcess | null = null

/** The proxy: passes bytes both ways, except that the armed request's answer kills the service instead. */
interface KillingProxy {
  port: number
  /** The next answer from the service kills it and is never delivered. */
  arm(): void
  /** Resolves when an armed answer has killed the service. */
  killed(): Promise<void>
  close(): Promise<void>
}

async function startProxy(): Promise<KillingProxy> {
  let armed = false
  let onKilled: () => void = () => {}
  let killedPromise = new Promise<void>((r) => {
    onKilled = r
  })
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1')
    sockets.add(client).add(upstream)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => {
      if (!armed) {
        client.write(chunk)
        return
      }
      armed = false
      service?.kill('SIGKILL')
      client.destroy()
      upstream.destroy()
      onKilled()
    })
  })
  const proxyPort = await freePort()
  await new Promise<void>((resolve) => server.listen(proxyPort, '127.0.0.1', resolve))
  return {
    port: proxyPort,
    arm() {
      armed = true
      killedPromise = new Promise<void>((r) => {
        onKilled = r
      })
    },
    killed: () => killedPromise,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

const cli = (args: string[]): Promise<string> => runCliOk(dataDir, args)

async function newKey(): Promise<{ key: string; datasetId: string }> {
  const created = JSON.parse(await cli(['keys', 'create', '--name', 'exactly-once', '--json'])) as { key: string; dataset_id: string }
  return { key: created.key, datasetId: created.dataset_id }
}

/** The dataset's records as `ocelog replay --json` prints them: type, idempotency key and event id. */
async function replay(datasetId: string): Promise<{ type: string; key: string | undefined; eventId: string | undefined }[]> {
  const out = (await cli(['replay', '--dataset', datasetId, '--json'])).trim()
  if (out === '') return []
  return out.split('\n').map((line) => {
    const r = JSON.parse(line) as { type: string; data: { event_id?: string }; idempotency_key?: string }
    return { type: r.type, key: r.idempotency_key, eventId: r.data.event_id }
  })
}

async function startService(key: string): Promise<void> {
  service = spawnServe(env)
  await waitUntilUp(port, key)
}

async function stopService(): Promise<void> {
  const s = service
  if (s === null) return
  service = null
  if (s.exitCode === null && s.signalCode === null) s.kill('SIGTERM')
  await exited(s)
}

function events(n: number, tag: string) {
  return Array.from({ length: n }, (_, i) => ({
    event: 'Place Order',
    timestamp: '2024-05-01T10:00:00Z',
    objects: [
      { type: 'order', id: `${tag}-${String(i)}`, qualifier: 'placed' },
      { type: 'customer', id: `c-${String(i % 7)}` },
    ],
    idempotency_key: `${tag}-${String(i)}`,
  }))
}

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-exactly-once-'))
  port = await freePort()
  env = { ...process.env, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' }
})
afterAll(async () => {
  await stopService()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('a retry after the service was killed between commit and answer', () => {
  it('is answered as first recorded, item by item, and the log holds each item once', async () => {
    const { key, datasetId } = await newKey()
    await startService(key)
    const proxy = await startProxy()
    try {
      const body = JSON.stringify({ events: events(100, 'raw') })
      const post = (to: number) =>
        fetch(`http://127.0.0.1:${String(to)}/v1/event/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        })
      proxy.arm()
      await expect(post(proxy.port)).rejects.toThrow()
      await proxy.killed()
      expect(await exited(service as ChildProcess)).toBe('SIGKILL')
      // The batch committed before the kill: its 100 records are in the log, though nobody was told.
      const committed = await replay(datasetId)
      expect(committed.map((r) => r.key)).toEqual(events(100, 'raw').map((e) => e.idempotency_key))

      await startService(key)
      const retry = await post(port)
      expect(retry.status).toBe(200)
      const answer = (await retry.json()) as { processed: number; failed: number; duplicates: number; event_ids: string[] }
      expect([answer.processed, answer.failed, answer.duplicates]).toEqual([100, 0, 100])
      expect(answer.event_ids).toEqual(committed.map((r) => r.eventId))
      expect(await replay(datasetId)).toEqual(committed)
    } finally {
      await proxy.close()
      await stopService()
    }
  }, 60_000)

  it('is what the TypeScript client does by itself: its retry lands once the service is back, and nothing is recorded twice', async () => {
    const { key, datasetId } = await newKey()
    await startService(key)
    const proxy = await startProxy()
    try {
      // One request at a time, so that exactly the first batch is in flight when the service dies.
      const client = new OcelogClient({ baseUrl: `http://127.0.0.1:${String(proxy.port)}`, apiKey: key, concurrency: 1 })
      const items = events(250, 'client').map(({ idempotency_key: _, ...e }) => e)
      proxy.arm()
      const sending = client.sendEvents(items)
      await proxy.killed()
      await exited(service as ChildProcess)
      await startService(key)
      const result = await sending
      expect([result.accepted.length, result.failures.length, result.aborted]).toEqual([250, 0, null])
      // One batch of 100 had committed before the kill: the client's retry found it recorded.
      expect(result.duplicates).toBe(100)
      const records = await replay(datasetId)
      expect(records).toHaveLength(250)
      expect(new Set(records.map((r) => r.key)).size).toBe(250)
      expect(new Set(result.accepted.map((a) => a.value))).toEqual(new Set(records.map((r) => r.eventId)))
    } finally {
      await proxy.close()
      await stopService()
    }
  }, 60_000)
})
