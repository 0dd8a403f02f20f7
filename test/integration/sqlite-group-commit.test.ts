/**
 * The SQLite log's group commit on a real file: appends that arrive in one turn share one
 * transaction, and when that transaction fails, each caller's write is retried alone, so one
 * caller's bad write (here: refused by a trigger for one dataset) fails only that caller.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { upsertRecord } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let fx: SqliteFixture
beforeEach(() => {
  fx = openSqliteFixture('ocelog-group-commit-')
  fx.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON records WHEN NEW.dataset_id = 'refused'
              BEGIN SELECT RAISE(ABORT, 'refused dataset'); END`)
})
afterEach(() => fx.close())

describe('SqliteEventLog group commit', () => {
  it('commits the other callers of a group when one caller’s write fails, and fails only that caller', async () => {
    const { log } = fx
    // Three appends in one turn of the event loop: one group commit.
    const results = await Promise.allSettled([
      log.append('ds1', [upsertRecord('ds1', 'order', 'a', {})], ['id-a']),
      log.append('refused', [upsertRecord('refused', 'order', 'x', {})], ['id-x']),
      log.append('ds2', [upsertRecord('ds2', 'order', 'b', {})], ['id-b']),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const [first, , third] = results
    const ok = [first, third].map((r) => (r?.status === 'fulfilled' ? [r.value.positions.length, [...r.value.claimed]] : null))
    expect(ok).toEqual([
      [1, ['id-a']],
      [1, ['id-b']],
    ])
    const rejected = results[1]
    expect(rejected?.status === 'rejected' ? String(rejected.reason) : '').toMatch(/refused dataset/)
    const logged = await log.readAll(null, 10)
    expect(logged.map((r) => r.datasetId)).toEqual(['ds1', 'ds2'])
    // The refused caller claimed nothing: its claim rolled back with its records.
    expect(fx.db.prepare('SELECT object_id FROM object_claims ORDER BY object_id').all()).toEqual([{ object_id: 'id-a' }, { object_id: 'id-b' }])
  })
})
