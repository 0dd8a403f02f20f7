/**
 * Integration (README § Operations, verify): `ocelog verify`'s checks of real SQLite files name the
 * first bad position or table: a record moved to another dataset's stream, a record whose data
 * breaks its schema, a record of an unknown version, read models whose checkpoint is beyond the
 * log's head. An intact data dir passes every check.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { verifyLogFile, verifyReadModelsFile } from '../../src/adapters/sqlite/log/verify-files.js'
import { createKey } from '../../src/write/admin.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { Projector } from '../../src/projector/runner.js'
import { eventRecord } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let f: SqliteFixture
let positions: number[]

beforeEach(async () => {
  f = openSqliteFixture('ocelog-verify-files-')
  const keys = new SqliteKeyStore(f.db)
  const a = (await createKey(keys, { name: 'a' })).dataset_id
  const b = (await createKey(keys, { name: 'b' })).dataset_id
  positions = []
  for (let i = 0; i < 12; i++) {
    const ds = i % 3 === 0 ? b : a
    positions.push(...(await f.log.append(ds, [eventRecord(ds, 'Pick', [{ type: 'order', id: `o${String(i)}` }])], [])).positions)
  }
  await new Projector(f.log, f.store).catchUp()
  f.db.pragma('wal_checkpoint(TRUNCATE)')
})
afterEach(() => f.close())

const at = (i: number): number => positions[i] ?? -1

function tamper(sql: string, position: number): void {
  f.db.exec('DROP TRIGGER IF EXISTS records_are_immutable_update')
  f.db.prepare(sql).run(position)
}

describe('verifyLogFile and verifyReadModelsFile', () => {
  it('pass an intact data dir, with the head and the record count', () => {
    const log = verifyLogFile(f.dir)
    expect(log).toMatchObject({ head: at(11), records: 12 })
    expect(log.checks.map((c) => [c.check, c.ok])).toEqual([
      ['integrity_check', true],
      ['records', true],
    ])
    // One check per runner's file.
    expect(verifyReadModelsFile(f.dir, log.head)).toMatchObject([
      { check: 'read models', ok: true, detail: expect.stringMatching(/^read-models\.db: 7 checkpoint/) as unknown },
      { check: 'read models', ok: true, detail: expect.stringMatching(/^read-models-process\.db: 1 checkpoint/) as unknown },
    ])
  })

  it('name the first record that is not in its own dataset’s stream', () => {
    tamper("UPDATE records SET stream = 'dataset-someone-else' WHERE position = ?", at(4))
    tamper("UPDATE records SET stream = 'dataset-someone-else' WHERE position = ?", at(8))
    const records = verifyLogFile(f.dir).checks.find((c) => c.check === 'records')
    expect(records).toMatchObject({ ok: false, position: at(4) })
    expect(records?.detail).toContain('is not the stream of its dataset')
  })

  it('name a record whose data breaks its schema, and one of a version this build cannot read', () => {
    tamper("UPDATE records SET data = json_remove(data, '$.event_type') WHERE position = ?", at(6))
    expect(verifyLogFile(f.dir).checks.find((c) => c.check === 'records')).toMatchObject({ ok: false, position: at(6) })
    tamper('UPDATE records SET version = 9 WHERE position = ?', at(2))
    const records = verifyLogFile(f.dir).checks.find((c) => c.check === 'records')
    expect(records).toMatchObject({ ok: false, position: at(2) })
    expect(records?.detail).toContain('EventRecorded v9')
  })

  it('name rm_checkpoints when the read models are beyond the log’s head', () => {
    const checks = verifyReadModelsFile(f.dir, at(5))
    expect(checks).toMatchObject([
      { check: 'read models', ok: false, table: 'rm_checkpoints', position: at(11), detail: expect.stringMatching(/^read-models\.db: /) as unknown },
      { check: 'read models', ok: false, table: 'rm_checkpoints', position: at(11), detail: expect.stringMatching(/^read-models-process\.db: /) as unknown },
    ])
  })
})
