/**
 * MultiRowStatement (src/adapters/sqlite/read-models/multi-row.ts) on a real SQLite database: rows
 * given as one flat array of values are written in statements of at most `rowsPerStatement` rows,
 * each row's values in column order, and an array that is not a whole number of rows is refused.
 */
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MultiRowStatement, type SqlValue } from '../../src/adapters/sqlite/read-models/multi-row.js'

describe('MultiRowStatement', () => {
  let db: Database.Database
  beforeEach(() => {
    db = new Database(':memory:')
    db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, name TEXT, n INTEGER, blob BLOB)')
  })
  afterEach(() => db.close())

  it('writes rows of a flat array across several statements, each value in its column', () => {
    const put = new MultiRowStatement(db, 'INSERT INTO t (k, name, n, blob) VALUES', 4, '', 100)
    const values: SqlValue[] = []
    for (let k = 1; k <= 250; k++) values.push(k, `name-${String(k)}`, k % 3 === 0 ? null : k * 10, Buffer.from([k % 256]))
    expect(put.run(values)).toBe(250)
    const rows = db.prepare('SELECT k, name, n, blob FROM t ORDER BY k').all() as { k: number; name: string; n: number | null; blob: Buffer }[]
    expect(rows).toHaveLength(250)
    expect(rows[0]).toEqual({ k: 1, name: 'name-1', n: 10, blob: Buffer.from([1]) })
    // The last row of the first statement, the first of the second and the last of the third.
    expect(rows[99]).toEqual({ k: 100, name: 'name-100', n: 1000, blob: Buffer.from([100]) })
    expect(rows[100]).toEqual({ k: 101, name: 'name-101', n: 1010, blob: Buffer.from([101]) })
    expect(rows[249]).toEqual({ k: 250, name: 'name-250', n: 2500, blob: Buffer.from([250]) })
    expect(rows[2]?.n).toBeNull()
  })

  it('counts only the rows the engine changed, with its tail clause', () => {
    const put = new MultiRowStatement(db, 'INSERT INTO t (k, name, n, blob) VALUES', 4, 'ON CONFLICT (k) DO NOTHING', 2)
    expect(put.run([1, 'a', 1, null, 2, 'b', 2, null, 3, 'c', 3, null])).toBe(3)
    expect(put.run([2, 'x', 9, null, 4, 'd', 4, null])).toBe(1)
    expect(db.prepare('SELECT name FROM t ORDER BY k').pluck().all()).toEqual(['a', 'b', 'c', 'd'])
    expect(put.run([])).toBe(0)
  })

  it('refuses values that are not a whole number of rows, writing none of them', () => {
    const put = new MultiRowStatement(db, 'INSERT INTO t (k, name, n, blob) VALUES', 4)
    expect(() => put.run([1, 'a', 1, null, 2, 'b'])).toThrow('6 values are not rows of 4')
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0)
  })
})
