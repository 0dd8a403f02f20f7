import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKey } from '../../src/write/admin.js'
import { buildApp } from '../../src/api/app.js'
import { memoryRateLimiter } from '../../src/adapters/rate-limiter.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { Ingest } from '../../src/write/ingest.js'
import { eventBody } from '../helpers/test-app.js'

describe('when the log cannot take a write', () => {
  it('answers 503 problem+json with Retry-After, and says nothing was accepted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-503-'))
    // Two connections to one real file: the key store keeps answering, the log's connection is lost.
    const logDb = openDatabase(dir)
    const keyDb = openDatabase(dir)
    const keys = new SqliteKeyStore(keyDb)
    const limiter = memoryRateLimiter({ perMinute: 100 })
    const app = await buildApp({ ingest: new Ingest(new SqliteEventLog(logDb)), keys, rateLimiter: limiter, logger: false })
    try {
      const k = await createKey(keys, { name: 'outage' })
      logDb.close()
      const res = await app.inject({
        method: 'POST',
        url: '/v1/event',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(eventBody(1)),
      })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json().detail).toContain('nothing of it was accepted')
      const health = await app.inject({ method: 'GET', url: '/v1/health', headers: { authorization: `Bearer ${k.key}` } })
      expect(health.statusCode).toBe(200)
    } finally {
      await app.close()
      await limiter.close()
      keyDb.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
