import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { LogUnavailableError } from '../../src/ports/event-log.js'
import type { NewRecord } from '../../src/schemas/records.js'

let dir: string
let db: SqliteDatabase
let log: SqliteEventLog

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-append-'))
  db = openDatabase(dir)
  log = new SqliteEventLog(db)
})
afterEach(async () => {
  await log.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

function upsert(id: string, properties: Record<string, unknown>): NewRecord {
  return {
    type: 'ObjectUpserted',
    version: 2,
    data: {
      object_id: id,
      type: 't',
      id,
      properties,
      time: '2024-01-01T00:00:00.000Z',
      relationships: [],
      received_at: '2024-01-01T00:00:00.000Z',
      key_id: 'k',
      request_id: 'r',
    },
  }
}

/** A value JSON.stringify cannot encode without overflowing the call stack. */
function tooDeep(): Record<string, unknown> {
  let v: unknown[] = []
  for (let i = 0; i < 200_000; i++) v = [v]
  return { a: v }
}

describe('SqliteEventLog.append when a record cannot be encoded', () => {
  it('rejects with the encoding error, not LogUnavailableError (a bad record is no outage)', async () => {
    const error = await log.append('d1', [upsert('x', tooDeep())], []).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RangeError)
    expect(error).not.toBeInstanceOf(LogUnavailableError)
  })

  it('still records the other callers of the same group commit', async () => {
    const [bad, good] = await Promise.allSettled([log.append('d1', [upsert('x', tooDeep())], []), log.append('d1', [upsert('y', { ok: true })], [])])
    expect(bad.status).toBe('rejected')
    expect(good.status).toBe('fulfilled')
    expect((await log.readStream('d1', null, 10)).map((r) => (r.type === 'ObjectUpserted' ? r.data.id : null))).toEqual(['y'])
  })
})
