/**
 * SqliteObjectClaims' memory of committed claims (src/adapters/sqlite/log/sqlite-object-claims.ts): an
 * id whose claim committed is answered "not first" without a statement; an id claimed in a
 * transaction that rolled back is claimed again by the next call.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteObjectClaims } from '../../src/adapters/sqlite/log/sqlite-object-claims.js'

let dir: string
let db: SqliteDatabase

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-claims-'))
  db = openDatabase(dir)
})

afterEach(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const rows = () => (db.prepare('SELECT object_id FROM object_claims ORDER BY object_id').pluck().all() as string[]).join()

describe('SqliteObjectClaims', () => {
  it('answers a committed claim from memory, without reading the table again', async () => {
    const claims = new SqliteObjectClaims(db)
    expect([...(await claims.claim('ds', ['a', 'b']))]).toEqual(['a', 'b'])
    // Taken away behind its back (never done by Ocelog): only the memory can still say "claimed".
    db.prepare("DELETE FROM object_claims WHERE object_id = 'a'").run()
    expect([...(await claims.claim('ds', ['a', 'b', 'c']))]).toEqual(['c'])
    expect(rows()).toBe('b,c')
    // A new instance (another process) has no memory: the table answers.
    expect([...(await new SqliteObjectClaims(db).claim('ds', ['a', 'b']))]).toEqual(['a'])
  })

  it('forgets the claims of a transaction that rolled back, so the next call claims them first', async () => {
    const claims = new SqliteObjectClaims(db)
    let claimedInside: string[] = []
    expect(() =>
      db
        .transaction(() => {
          claimedInside = [...claims.claimWithin('ds', ['x'])]
          throw new Error('the append failed')
        })
        .immediate(),
    ).toThrow('the append failed')
    claims.settle(false)
    expect(claimedInside).toEqual(['x'])
    expect(rows()).toBe('')
    expect([...(await claims.claim('ds', ['x']))]).toEqual(['x'])
    expect(rows()).toBe('x')
  })

  it('keeps an id claimed earlier in the same transaction as not first', () => {
    const claims = new SqliteObjectClaims(db)
    const [first, second] = db.transaction(() => [claims.claimWithin('ds', ['y']), claims.claimWithin('ds', ['y'])]).immediate()
    claims.settle(true)
    expect([[...(first ?? [])], [...(second ?? [])]]).toEqual([['y'], []])
  })
})
