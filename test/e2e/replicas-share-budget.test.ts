/**
 * e2e: two API replicas (the built service, two processes) on one SQLite file share each key's
 * rate budget through a real redis-server (docs/api.md#rate-limit; REDIS_URL), and write one stream.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisServerInstalled, startRedisServer, type RedisServer } from '../helpers/redis-server.js'
import { startService, type RunningService } from '../helpers/service.js'

const installed = redisServerInstalled()
if (!installed) console.warn('[skipped] replicas sharing a budget: redis-server is not on PATH (.ci/run installs it)')

describe.skipIf(!installed)('two replicas with REDIS_URL', () => {
  let redis: RedisServer
  let sharedDir: string
  let replicas: RunningService[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    sharedDir = mkdtempSync(join(tmpdir(), 'ocelog-replicas-'))
    const env = { OCELOG_DATA_DIR: sharedDir, REDIS_URL: redis.url, OCELOG_RATE_LIMIT_PER_MINUTE: '6' }
    replicas = await Promise.all([startService({ env }), startService({ env })])
  })
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()))
    await redis?.stop()
    rmSync(sharedDir, { recursive: true, force: true })
  })

  function health(replica: RunningService, key: string) {
    return fetch(`${replica.url}/v1/health`, { headers: { authorization: `Bearer ${key}` } })
  }

  it('counts one budget per key across both replicas', async () => {
    const [a, b] = replicas
    if (a === undefined || b === undefined) throw new Error('replicas did not start')
    const key = (await a.createKey({ name: 'shared-budget' })).key
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      statuses.push((await health(a, key)).status)
      statuses.push((await health(b, key)).status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200])
    const over = await health(a, key)
    expect(over.status).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await health(b, key)).status).toBe(429)
  })

  it("shares a key's own budget (--rate-limit) across both replicas, while the other keys keep the default, and applies a change made while they run", async () => {
    const [a, b] = replicas
    if (a === undefined || b === undefined) throw new Error('replicas did not start')
    const bulk = await a.createKey({ name: 'bulk', rateLimit: 10 })
    const live = (await a.createKey({ name: 'live', datasetId: bulk.dataset_id })).key
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      statuses.push((await health(a, bulk.key)).status)
      statuses.push((await health(b, bulk.key)).status)
    }
    expect(statuses).toEqual(Array.from({ length: 10 }, () => 200))
    const over = await health(b, bulk.key)
    expect([over.status, over.headers.get('ratelimit-limit'), over.headers.get('ratelimit-remaining')]).toEqual([429, '10', '0'])
    const other = await health(a, live)
    expect([other.status, other.headers.get('ratelimit-limit'), other.headers.get('ratelimit-remaining')]).toEqual([200, '6', '5'])

    // Raised by the CLI while both replicas run: 11 requests counted, so a budget of 20 leaves 8 after the next.
    const update = await a.cli(['keys', 'update', bulk.key_id, '--rate-limit', '20'])
    expect(update.code).toBe(0)
    const raised = await health(b, bulk.key)
    expect([raised.status, raised.headers.get('ratelimit-limit'), raised.headers.get('ratelimit-remaining')]).toEqual([200, '20', '8'])
    const onA = await health(a, bulk.key)
    expect([onA.status, onA.headers.get('ratelimit-remaining')]).toEqual([200, '7'])
  })

  it('keeps budgets of other keys whole', async () => {
    const [a, b] = replicas
    if (a === undefined || b === undefined) throw new Error('replicas did not start')
    const spent = (await a.createKey({ name: 'spent' })).key
    for (let i = 0; i < 7; i++) await health(a, spent)
    const fresh = (await b.createKey({ name: 'fresh' })).key
    expect((await health(b, fresh)).status).toBe(200)
  })

  it('appends what both replicas accept to one stream of the dataset', async () => {
    const [a, b] = replicas
    if (a === undefined || b === undefined) throw new Error('replicas did not start')
    const k = await a.createKey({ name: 'two-writers' })
    const ids: string[] = []
    for (const replica of [a, b]) {
      const res = await fetch(`${replica.url}/v1/event`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'Replica Write', objects: [{ type: 'order', id: 'o1' }] }),
      })
      expect(res.status).toBe(200)
      ids.push(((await res.json()) as { event_id: string }).event_id)
    }
    const replay = await a.cli(['replay', '--dataset', k.dataset_id, '--json'])
    const replayed = replay.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { data: { event_id: string } }).data.event_id)
    expect(replayed).toEqual(ids)
  })
})
