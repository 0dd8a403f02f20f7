/**
 * The SQLite store keeps what it holds between its transactions true: the directly-follows write's
 * memory of objects (src/core/df-object-memory.ts) and the objects' identity rows
 * (sqlite-read-model-store.ts, IdentityCache). After another connection changed the file, and after
 * a transaction that did not commit, the next batch reads the file again. A stale memory would take
 * the steps of these tests for replays (they are the steps it remembers) and write none of them; a
 * stale identity row would skip an object's attributes as applied, or name a row the file lacks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import type { NewRecord, StoredRecord } from '../../src/schemas/records.js'
import { batchOf, eventRecord, freshDatasetId, upsertRecord } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

describe('what the SQLite store keeps between its transactions', () => {
  let fx: SqliteFixture
  let other: SqliteDatabase
  let ds: string
  beforeEach(() => {
    fx = openSqliteFixture('ocelog-store-caches-')
    // A second connection to read-models.db, as another process would hold.
    other = openReadModelsDatabase(fx.dir).db
    ds = freshDatasetId()
  })
  afterEach(async () => {
    other.close()
    await fx.log.close()
    fx.close()
  })

  /** Appends `news` to the log and reads them back. */
  const appendAll = async (news: NewRecord[]): Promise<StoredRecord[]> => {
    await fx.log.append(ds, news, [])
    const records = await fx.log.readAll(null, 10)
    expect(records).toHaveLength(news.length)
    return records
  }

  /** Applies the records one batch each, as projector `name`: from the second on, the store holds what the first named. */
  const applyEach = async (name: string, records: readonly StoredRecord[]) => {
    for (let i = 0; i < records.length; i += 1)
      await fx.store.apply(batchOf(name, i === 0 ? null : (records[i - 1]?.position ?? null), records[i]?.position ?? 0, records.slice(i, i + 1)))
  }

  /** Checkpoints named `failing.*` cannot be written: such a batch's transaction fails after its slices' writes. */
  const refuseFailing = () =>
    other.exec(`CREATE TRIGGER refuse_failing BEFORE INSERT ON rm_checkpoints WHEN NEW.projector LIKE 'failing.%' BEGIN SELECT RAISE(ABORT, 'refused'); END`)

  describe('the directly-follows memory', () => {
    let records: StoredRecord[]
    beforeEach(async () => {
      const objects = [
        { type: 'order', id: 'o1' },
        { type: 'item', id: 'i1' },
      ]
      const at = (minute: number) => ({ timestamp: `2024-05-01T10:0${String(minute)}:00.000Z` })
      records = await appendAll([eventRecord(ds, 'A', objects, at(1)), eventRecord(ds, 'B', objects, at(2)), eventRecord(ds, 'C', objects, at(3))])
    })

    const steps = () => (fx.rmDb.prepare('SELECT count(*) AS n FROM rm_df_steps').get() as { n: number }).n
    const position = (i: number) => (records[i] as StoredRecord).position

    it('reads the file again after another connection changed it', async () => {
      await applyEach('first', records)
      expect(steps()).toBe(6)
      // Another process empties the directly-follows tables (as its clear of that projection does).
      other.exec('DELETE FROM rm_df_steps; DELETE FROM rm_df_memberships; DELETE FROM rm_df_aggregates')
      expect(steps()).toBe(0)
      // Steps the memory holds: a stale memory would take them for replays.
      await fx.store.apply(batchOf('second', null, position(2), records.slice(1)))
      expect(steps()).toBe(4)
    })

    it('forgets what a transaction that did not commit wrote', async () => {
      refuseFailing()
      await applyEach('kept', records.slice(0, 2))
      expect(steps()).toBe(4)
      await expect(fx.store.apply(batchOf('failing', null, position(2), records.slice(2)))).rejects.toThrow(/refused/)
      expect(steps()).toBe(4)
      await fx.store.apply(batchOf('kept', position(1), position(2), records.slice(2)))
      expect(steps()).toBe(6)
    })
  })

  describe("the objects' identity rows", () => {
    const objectRows = () =>
      fx.rmDb.prepare('SELECT external_id, properties, position FROM rm_objects ORDER BY external_id').all() as {
        external_id: string
        properties: string
        position: number
      }[]

    it('reads the file again after another connection changed it', async () => {
      const records = await appendAll([upsertRecord(ds, 'order', 'o1', { a: 1 }), upsertRecord(ds, 'order', 'o1', { b: 2 })])
      await applyEach('first', records)
      const last = records[1]?.position ?? 0
      expect(objectRows()).toEqual([{ external_id: 'o1', properties: '{"a":1,"b":2}', position: last }])
      // Another process clears the objects projection (as its clear of that projection does) ...
      other.exec(`UPDATE rm_objects SET properties = '{}', updated_at = created_at, position = 0; DELETE FROM rm_object_changes`)
      // ... and applies the log again: rows the store held as applied must be applied again.
      await fx.store.apply(batchOf('second', null, last, records))
      expect(objectRows()).toEqual([{ external_id: 'o1', properties: '{"a":1,"b":2}', position: last }])
    })

    it('forgets the rows of a transaction that did not commit', async () => {
      refuseFailing()
      const records = await appendAll([
        upsertRecord(ds, 'order', 'o1', { a: 1 }),
        eventRecord(ds, 'Add Item', [
          { type: 'order', id: 'o1' },
          { type: 'item', id: 'i1' },
        ]),
      ])
      const [first, second] = records as [StoredRecord, StoredRecord]
      await applyEach('kept', [first])
      // The failed transaction made i1's row: a store that kept it would name a row the file lacks.
      await expect(fx.store.apply(batchOf('failing', null, second.position, [second]))).rejects.toThrow(/refused/)
      expect(objectRows().map((r) => r.external_id)).toEqual(['o1'])
      await fx.store.apply(batchOf('kept', first.position, second.position, [second]))
      expect(objectRows().map((r) => r.external_id)).toEqual(['i1', 'o1'])
    })
  })
})
