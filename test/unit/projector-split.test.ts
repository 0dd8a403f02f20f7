import { describe, expect, it } from 'vitest'
import { readCount, recordCost, splitByCost } from '../../src/projector/runner.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from '../../src/core/records.js'
import type { NewRecord, StoredRecord } from '../../src/schemas/records.js'

const ctx: RecordContext = { datasetId: 'ds1', keyId: 'k1', requestId: 'r1', receivedAt: '2026-01-01T00:00:00.000Z' }

function stored(records: NewRecord[]): StoredRecord[] {
  return records.map((r, i) => ({ ...r, position: i + 1, stream: 'dataset-ds1', datasetId: 'ds1', appendedAt: ctx.receivedAt }))
}

function event(objects: number, n = 0): NewRecord {
  return buildEventRecorded({ event: 'E', objects: Array.from({ length: objects }, (_, i) => ({ type: 'o', id: String(i) })) }, `e${String(n)}`, ctx)
}

describe('recordCost', () => {
  it('counts an event with k objects as 1 + k, linear in its objects', () => {
    expect(stored([event(1), event(3), event(50)]).map(recordCost)).toEqual([2, 4, 51])
  })

  it('counts an object upsert as 2', () => {
    expect(stored([buildObjectUpserted({ type: 'o', id: '1' }, ctx)]).map(recordCost)).toEqual([2])
  })
})

describe('splitByCost', () => {
  it('cuts runs before the record that would pass the budget, keeping log order', () => {
    const runs = splitByCost(stored([event(3, 1), event(3, 2), event(3, 3), event(3, 4), event(3, 5)]), 8)
    expect(runs.map((r) => r.map((x) => x.position))).toEqual([[1, 2], [3, 4], [5]])
  })

  it('puts a record costlier than the budget in a run of its own', () => {
    const runs = splitByCost(stored([event(1, 1), event(50, 2), event(1, 3)]), 40)
    expect(runs.map((r) => r.map((x) => x.position))).toEqual([[1], [2], [3]])
  })

  it('returns no runs for no records', () => {
    expect(splitByCost([], 100)).toEqual([])
  })
})

describe('readCount', () => {
  it('asks for about maxCost units of records like the last read, within 1 and maxCount', () => {
    expect(readCount(stored([event(3), event(3)]), 16_000, 4000)).toBe(4000) // 16,000 / 4
    expect(readCount(stored([event(50), event(50)]), 16_000, 4000)).toBe(313) // floor(16,000 / 51)
    expect(readCount(stored([event(3), event(50)]), 16_000, 4000)).toBe(581) // floor(16,000 / 27.5)
    expect(readCount(stored([event(1)]), 16_000, 1000)).toBe(1000) // 8,000 capped at maxCount
    expect(readCount(stored([event(50)]), 10, 4000)).toBe(1) // never 0
  })

  it('assumes events with 15 objects before the first read', () => {
    expect(readCount([], 16_000, 4000)).toBe(1000)
    expect(readCount([], 16_000, 500)).toBe(500)
  })
})
