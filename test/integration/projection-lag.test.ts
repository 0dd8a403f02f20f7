/**
 * A projection's lag is exact past 100,000 records (the bound of earlier builds), on a real SQLite
 * log: the backlog is built by appending through the log port in large transactions, with no
 * projector running, and `ocelog status`'s reader (readStatus) reports it as it is, with the age of
 * the oldest record not yet applied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { foldBatch } from '../../projections/registry.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { readStatus } from '../../src/projector/status.js'
import { upsertRecord } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const DATASETS = ['lag-a', 'lag-b']
/** Records appended in all: well past the 100,000 that the lag was once counted up to. */
const TOTAL = 150_000
const PER_APPEND = 10_000
const CHECKPOINT = 20_000

let fx: SqliteFixture

beforeAll(async () => {
  fx = openSqliteFixture('ocelog-projection-lag-')
  for (let start = 0; start < TOTAL; start += PER_APPEND) {
    const ds = DATASETS[(start / PER_APPEND) % DATASETS.length] ?? 'lag-a'
    const records: NewRecord[] = []
    for (let i = start; i < start + PER_APPEND; i += 1) records.push(upsertRecord(ds, 'order', `o${String(i)}`, { n: i }))
    await fx.log.append(ds, records, [])
  }
}, 120_000)
afterAll(() => fx.close())

describe('readStatus on a backlog of 150,000 records', () => {
  it('reports the lag of a projection with no checkpoint as the whole log, exactly', async () => {
    const status = await readStatus(fx.log, fx.store, ['events'])
    expect(status.head).toBe(TOTAL)
    expect(status.projections.map((p) => [p.projection, p.lag_records, p.lag_records_exact])).toEqual([['events', TOTAL, true]])
  })

  it('reports the records after a checkpoint exactly, and the age of the first of them in seconds', async () => {
    await fx.store.apply(foldBatch([], { events: { checkpoint: 'events', expected: null } }, CHECKPOINT))
    const [oldest] = await fx.log.readAll(CHECKPOINT, 1)
    const appendedMs = Date.parse(oldest?.appendedAt ?? '')
    const before = Date.now()
    const status = await readStatus(fx.log, fx.store, ['events'])
    const after = Date.now()
    const [p] = status.projections
    expect([p?.projection, p?.position, p?.lag_records, p?.lag_records_exact]).toEqual(['events', CHECKPOINT, TOTAL - CHECKPOINT, true])
    expect(p?.lag_seconds).toBeGreaterThanOrEqual((before - appendedMs) / 1000)
    expect(p?.lag_seconds).toBeLessThanOrEqual((after - appendedMs) / 1000)
  })

  it('reports no lag once the checkpoint is at the head', async () => {
    await fx.store.apply(foldBatch([], { events: { checkpoint: 'events', expected: CHECKPOINT } }, TOTAL))
    const [p] = (await readStatus(fx.log, fx.store, ['events'])).projections
    expect([p?.lag_records, p?.lag_records_exact, p?.lag_seconds]).toEqual([0, true, 0])
  })
})
