/**
 * MultiRowStatement (src/adapters/sqlite/read-models/multi-row.ts) on a real SQLite database: rows
 * given as one flat array of values, or value by value, are written in statements of at most
 * `rowsPerStatement` rows, each row's values in column order, and values that are not a whole number
 * of rows are refused.
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

  it('writes rows added value by value, a statement each time one is full, the rest at the end', () => {
    const put = new MultiRowStatement(db, 'INSERT INTO t (k, name, n, blob) VALUES', 4, '', 3)
    const rows = put.rows()
    for (let k = 1; k <= 7; k++) {
      rows.add(k)
      rows.add(`r${String(k)}`)
      rows.add(k * 2)
      rows.add(null)
      // Two statements of three rows run as their last values come in; the seventh row waits for end().
      expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(k < 3 ? 0 : k < 6 ? 3 : 6)
    }
    expect(rows.end()).toBe(7)
    expect(db.prepare('SELECT k, name, n FROM t ORDER BY k').raw().all()).toEqual(
      Array.from({ length: 7 }, (_, i) => [i + 1, `r${String(i + 1)}`, (i + 1) * 2]),
    )
  })

  it('refuses an end inside a row, and drops a run left unended at the next rows()', () => {
    const put = new MultiRowStatement(db, 'INSERT INTO t (k, name, n, blob) VALUES', 4, '', 3)
    const broken = put.rows()
    broken.add(1)
    broken.add('a')
    expect(() => broken.end()).toThrow('2 values left are not rows of 4')
    const left = put.rows()
    left.add(5)
    left.add('left')
    const rows = put.rows()
    for (const v of [9, 'b', 1, null]) rows.add(v)
    expect(rows.end()).toBe(1)
    expect(db.prepare('SELECT k, name FROM t').raw().all()).toEqual([[9, 'b']])
  })
})
