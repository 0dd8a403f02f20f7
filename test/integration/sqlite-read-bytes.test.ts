/**
 * The SQLite log's reads bounded in bytes (SqliteEventLogOptions.readBytesMax), which the
 * projector worker uses so that a read of large records fits its heap: a read stops after the
 * record that reaches the bound, always holds at least one record, and `tail` goes on from there
 * without skipping or repeating a record.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { upsertRecord } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let fx: SqliteFixture | undefined
afterEach(() => fx?.close())

/** Ten upserts of one dataset, each with a 10,000-character attribute, so each stored record is just over 10,000 characters. */
async function tenLargeRecords(f: SqliteFixture): Promise<number[]> {
  const records = Array.from({ length: 10 }, (_, i) => upsertRecord('ds', 'order', `o-${String(i)}`, { note: 'x'.repeat(10_000) }))
  const { positions } = await f.log.append('ds', records, [])
  return positions
}

describe('SqliteEventLog readBytesMax', () => {
  it('stops a read after the record that reaches the bound, short of maxCount', async () => {
    fx = openSqliteFixture('ocelog-read-bytes-', { readBytesMax: 25_000 })
    const positions = await tenLargeRecords(fx)
    const first = await fx.log.readAll(null, 100)
    // 10,0xx + 10,0xx < 25,000 ≤ three records: the third one reaches the bound.
    expect(first.map((r) => r.position)).toEqual(positions.slice(0, 3))
    const next = await fx.log.readAll(first[2]?.position ?? null, 2)
    expect(next.map((r) => r.position)).toEqual(positions.slice(3, 5))
  })

  it('returns one record when that record alone is over the bound', async () => {
    fx = openSqliteFixture('ocelog-read-bytes-', { readBytesMax: 100 })
    const positions = await tenLargeRecords(fx)
    expect((await fx.log.readAll(null, 100)).map((r) => r.position)).toEqual(positions.slice(0, 1))
  })

  it('lets tail yield every record once, in order, in reads within the bound', async () => {
    fx = openSqliteFixture('ocelog-read-bytes-', { readBytesMax: 25_000 })
    const positions = await tenLargeRecords(fx)
    const abort = new AbortController()
    const seen: number[][] = []
    for await (const batch of fx.log.tail(null, { signal: abort.signal, maxBatch: 100 })) {
      seen.push(batch.map((r) => r.position))
      if (seen.flat().length >= positions.length) abort.abort()
    }
    expect(seen.map((b) => b.length)).toEqual([3, 3, 3, 1])
    expect(seen.flat()).toEqual(positions)
  })

  it('reads maxCount records when no bound is set', async () => {
    fx = openSqliteFixture('ocelog-read-bytes-')
    const positions = await tenLargeRecords(fx)
    expect((await fx.log.readAll(null, 100)).map((r) => r.position)).toEqual(positions)
  })
})
