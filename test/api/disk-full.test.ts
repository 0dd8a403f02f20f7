/**
 * API (README § Operations, a full disk): when the log's file cannot grow (SQLITE_FULL, here through
 * `PRAGMA max_page_count` on the log's connection to a real file), batches are answered 503
 * problem+json with Retry-After and nothing of them is accepted; health still answers; every
 * acknowledged event is in the log; and once there is room, the same process accepts events again,
 * without a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKey } from '../../src/write/admin.js'
import { memoryRateLimiter } from '../../src/adapters/rate-limiter.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { buildApp } from '../../src/api/app.js'
import { Ingest } from '../../src/write/ingest.js'

describe('a full disk under the log', () => {
  it('answers 503 to what cannot be stored, loses no acknowledged event, and accepts events again once there is room', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-disk-full-'))
    const logDb = openDatabase(dir)
    const keyDb = openDatabase(dir)
    const keys = new SqliteKeyStore(keyDb)
    const log = new SqliteEventLog(logDb)
    const limiter = memoryRateLimiter({ perMinute: 1_000_000 })
    const app = await buildApp({ ingest: new Ingest(log), keys, rateLimiter: limiter, logger: false })
    try {
      const k = await createKey(keys, { name: 'full' })
      const headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' }
      let sent = 0
      const batch = () => ({
        events: Array.from({ length: 100 }, () => {
          sent += 1
          return {
            event: 'Pick',
            timestamp: '2024-05-01T10:00:00Z',
            objects: [{ type: 'order', id: `o${String(sent)}` }],
            properties: { text: 'x'.repeat(300) },
          }
        }),
      })
      // About 50 batches' worth of room (4 KiB pages), as the 12 MB file system of the report held.
      const room = Number(logDb.pragma('page_count', { simple: true })) + 1500
      logDb.pragma(`max_page_count = ${String(room)}`)
      let acknowledged = 0
      const statuses: number[] = []
      for (let b = 0; b < 200 && statuses.filter((s) => s === 503).length < 5; b++) {
        const res = await app.inject({ method: 'POST', url: '/v1/event/batch', headers, payload: JSON.stringify(batch()) })
        statuses.push(res.statusCode)
        if (res.statusCode === 200) {
          expect(res.json()).toMatchObject({ success: true, processed: 100, failed: 0 })
          acknowledged += 100
        } else {
          expect(res.statusCode).toBe(503)
          expect(res.headers['retry-after']).toBe('1')
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
          expect(res.json().detail).toContain('nothing of it was accepted')
        }
      }
      expect(acknowledged).toBeGreaterThan(0)
      // The disk filled: five refusals (a WAL checkpoint may free a page or two between them, so one batch can still fit).
      expect(statuses.filter((s) => s === 503)).toHaveLength(5)
      expect(statuses[statuses.length - 1]).toBe(503)
      expect((await app.inject({ method: 'GET', url: '/v1/health', headers })).statusCode).toBe(200)
      // Every acknowledged event, and nothing of the refused batches.
      const stored = await log.readStream(k.dataset_id, null, 100_000)
      expect(stored).toHaveLength(acknowledged)

      // Room again (the file system grew): the same process, no restart.
      logDb.pragma(`max_page_count = ${String(room * 4)}`)
      const again = await app.inject({ method: 'POST', url: '/v1/event/batch', headers, payload: JSON.stringify(batch()) })
      expect(again.statusCode).toBe(200)
      expect(await log.readStream(k.dataset_id, null, 100_000)).toHaveLength(acknowledged + 100)
    } finally {
      await app.close()
      await limiter.close()
      await log.close()
      logDb.close()
      keyDb.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
