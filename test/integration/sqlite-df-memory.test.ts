/**
 * The SQLite store keeps the directly-follows write's memory of objects true
 * (src/core/df-object-memory.ts): after another connection changed the file, and after a
 * transaction that did not commit, the next batch reads the file again. A stale memory would take
 * the steps of these tests for replays (they are the steps it remembers) and write none of them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import type { StoredRecord } from '../../src/schemas/records.js'
import { batchOf, eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

describe('the directly-follows memory of the SQLite store', () => {
  let fx: SqliteFixture
  let other: SqliteDatabase
  let records: StoredRecord[]
  beforeEach(async () => {
    fx = openSqliteFixture('ocelog-df-memory-')
    // A second connection to read-models.db, as another process would hold.
    other = openReadModelsDatabase(fx.dir).db
    const ds = freshDatasetId()
    const objects = [
      { type: 'order', id: 'o1' },
      { type: 'item', id: 'i1' },
    ]
    const at = (minute: number) => ({ timestamp: `2024-05-01T10:0${String(minute)}:00.000Z` })
    await fx.log.append(ds, [eventRecord(ds, 'A', objects, at(1)), eventRecord(ds, 'B', objects, at(2)), eventRecord(ds, 'C', objects, at(3))], [])
    records = await fx.log.readAll(null, 10)
    expect(records).toHaveLength(3)
  })
  afterEach(async () => {
    other.close()
    await fx.log.close()
    fx.close()
  })

  const steps = () => (fx.rmDb.prepare('SELECT count(*) AS n FROM rm_df_steps').get() as { n: number }).n
  const position = (i: number) => (records[i] as StoredRecord).position

  /** Applies the records one batch each, as projector `name`: from the second on, the store remembers o1 and i1. */
  const applyEach = async (name: string, count: number) => {
    for (let i = 0; i < count; i += 1) await fx.store.apply(batchOf(name, i === 0 ? null : position(i - 1), position(i), records.slice(i, i + 1)))
  }

  it('reads the file again after another connection changed it', async () => {
    await applyEach('first', 3)
    expect(steps()).toBe(6)
    // Another process empties the directly-follows tables (as its clear of that projection does).
    other.exec('DELETE FROM rm_df_steps; DELETE FROM rm_df_memberships; DELETE FROM rm_df_aggregates')
    expect(steps()).toBe(0)
    // Steps the memory holds: a stale memory would take them for replays.
    await fx.store.apply(batchOf('second', null, position(2), records.slice(1)))
    expect(steps()).toBe(4)
  })

  it('forgets what a transaction that did not commit wrote', async () => {
    // Checkpoints named `failing.*` cannot be written: that batch's transaction fails after its slices' writes.
    other.exec(`CREATE TRIGGER refuse_failing BEFORE INSERT ON rm_checkpoints WHEN NEW.projector LIKE 'failing.%' BEGIN SELECT RAISE(ABORT, 'refused'); END`)
    await applyEach('kept', 2)
    expect(steps()).toBe(4)
    await expect(fx.store.apply(batchOf('failing', null, position(2), records.slice(2)))).rejects.toThrow(/refused/)
    expect(steps()).toBe(4)
    await fx.store.apply(batchOf('kept', position(1), position(2), records.slice(2)))
    expect(steps()).toBe(6)
  })
})
