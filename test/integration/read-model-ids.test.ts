/**
 * Event and object ids in the read models' id columns (storedId, idTextSql, storedIdsSql): a
 * canonical UUID is stored as its 16 bytes and read back as the same string; any other id is kept as
 * its text. Real SQLite (in memory: the conversions are SQL functions of the engine).
 */
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { idTextSql, storedId, storedIdsSql } from '../../src/adapters/sqlite/read-models/read-models-database.js'

const UUID_V7 = '01a21895-2880-7050-8479-7326bc9b9ed0'
const UUID_V5 = '0ab8df73-9d4a-58ad-ab95-99f396de792a'
const OTHERS = ['0AB8DF73-9D4A-58AD-AB95-99F396DE792A', 'order-1', '0ab8df739d4a58adab9599f396de792a', '', 'ünïcode-id']

describe('read-model id columns', () => {
  let db: Database.Database
  beforeEach(() => {
    db = new Database(':memory:')
    db.exec('CREATE TABLE ids (k INTEGER PRIMARY KEY, id BLOB NOT NULL)')
    const put = db.prepare('INSERT INTO ids (k, id) VALUES (?, ?)')
    for (const [k, id] of [UUID_V7, UUID_V5, ...OTHERS].entries()) put.run(k, storedId(id))
  })
  afterEach(() => db.close())

  it('stores a canonical UUID in 16 bytes and any other id as its text', () => {
    const rows = db.prepare('SELECT typeof(id) AS kind, length(id) AS bytes FROM ids ORDER BY k').all()
    expect(rows).toEqual([{ kind: 'blob', bytes: 16 }, { kind: 'blob', bytes: 16 }, ...OTHERS.map((id) => ({ kind: 'text', bytes: id.length }))])
  })

  it('reads every id back as the same string', () => {
    const ids = db
      .prepare(`SELECT ${idTextSql('id')} FROM ids ORDER BY k`)
      .pluck()
      .all()
    expect(ids).toEqual([UUID_V7, UUID_V5, ...OTHERS])
  })

  it('finds ids by a JSON list of their strings, canonical UUIDs and others alike', () => {
    const find = (list: string[]) =>
      db
        .prepare(`SELECT k FROM ids WHERE id IN (${storedIdsSql('?')}) ORDER BY k`)
        .pluck()
        .all(JSON.stringify(list))
    expect(find([UUID_V5, 'order-1'])).toEqual([1, 3])
    expect(find([UUID_V7.toUpperCase()])).toEqual([])
    expect(find(['0AB8DF73-9D4A-58AD-AB95-99F396DE792A'])).toEqual([2])
  })

  it('keeps the order of the strings among canonical UUIDs (byte order is the hex text order)', () => {
    const sorted = db
      .prepare(`SELECT ${idTextSql('id')} FROM ids WHERE typeof(id) = 'blob' ORDER BY id`)
      .pluck()
      .all()
    expect(sorted).toEqual([UUID_V7, UUID_V5].sort())
  })
})
