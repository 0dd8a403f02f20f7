/**
 * Versions (README § Read models; event sourcing: records are never edited, and every version ever
 * written stays readable): a log written by an earlier release, as checked-in rows of the SQLite
 * `records` table (test/fixtures/v1-records.json: `ObjectUpserted` v1 and `EventRecorded` v1, made
 * before records carried idempotency keys), is replayed and projected by this build unchanged:
 * `ObjectUpserted` v1 is upcast on read to v2 (time = received_at, no O2O), which is what it meant.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { sqliteRows } from '../helpers/read-model-rows.js'

interface FixtureRow {
  position: number
  stream: string
  type: string
  version: number
  data: string
  appended_at: string
}

const ROWS = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'v1-records.json'), 'utf8')) as FixtureRow[]

let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-v1-'))
  db = openDatabase(dir)
  rmDb = openReadModelsDatabase(dir).db
  const insert = db.prepare('INSERT INTO records (position, stream, dataset_id, type, version, data, appended_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  for (const r of ROWS) insert.run(r.position, r.stream, r.stream.slice('dataset-'.length), r.type, r.version, r.data, r.appended_at)
})
afterEach(() => {
  db.close()
  rmDb.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('a log of version-1 records', () => {
  it('replays every record as written, ObjectUpserted v1 upcast to v2 (its values took effect when received, no O2O), and no idempotency key', async () => {
    const records = await new SqliteEventLog(db).readStream('v1ds', null, 100)
    expect(records.map((r) => [r.position, r.type, r.version, r.upcastFrom, r.idempotency])).toEqual([
      [1, 'ObjectUpserted', 2, 1, undefined],
      [2, 'EventRecorded', 1, undefined, undefined],
      [3, 'EventRecorded', 1, undefined, undefined],
      [4, 'ObjectUpserted', 2, 1, undefined],
    ])
    const written = ROWS.map((r) => JSON.parse(r.data) as Record<string, unknown>)
    const upcast = (w: Record<string, unknown>, type: string) => (type === 'ObjectUpserted' ? { ...w, time: w.received_at, relationships: [] } : w)
    expect(records.map((r) => r.data)).toEqual(written.map((w, i) => upcast(w, ROWS[i]?.type ?? '')))
  })

  it('projects into the read models this build keeps', async () => {
    const store = new SqliteReadModelStore(rmDb)
    expect(await new Projector(new SqliteEventLog(db), store).catchUp()).toBe(4)
    const rows = await sqliteRows(rmDb)('v1ds')
    expect(rows.eventTypes.map((t) => [t.name, t.count])).toEqual([
      ['pay order', 1],
      ['place order', 1],
    ])
    expect(rows.objects.map((o) => [o.type, o.external_id, o.properties])).toEqual([
      ['item', 'i1', { sku: 'A-1' }],
      ['order', 'o1', { status: 'paid', total: 12.5 }],
    ])
    expect(rows.events.map((e) => [e.event_type, e.timestamp, e.end_timestamp])).toEqual([
      ['place order', '2024-05-01T08:00:00.000Z', '2024-05-01T08:05:00.000Z'],
      ['pay order', '2024-05-01T09:30:00.000Z', null],
    ])
    expect(rows.eventObjects.map((l) => [l.external_id, l.qualifier])).toEqual([
      ['o1', 'placed'],
      ['i1', null],
      ['o1', null],
    ])
  })
})
