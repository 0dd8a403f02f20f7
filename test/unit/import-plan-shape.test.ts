/**
 * planShape (bench/plan-batches.ts): the batches, items per batch and critical path of an import
 * plan (docs/import.md § Two bounds: the plan's critical path, and the CPU of two cores), on
 * hand-made batch lists and on the plan of a small log.
 */
import { describe, expect, it } from 'vitest'
import { newNotes, type OcelLog } from '../../src/ocel/import/model.js'
import { planShape } from '../../bench/plan-batches.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import type { PlannedBatch } from '../../src/ocel/import/plan.js'

const events = (n: number, after: number[]): PlannedBatch => ({
  kind: 'events',
  items: Array.from({ length: n }, () => ({ event: 'pay', timestamp: '2024-01-01T00:00:00.000Z', objects: [{ type: 'order', id: 'o1' }] })),
  sources: Array.from({ length: n }, (_, i) => `e${String(i)}`),
  after,
})
const upserts = (n: number, after: number[]): PlannedBatch => ({
  kind: 'objects',
  items: Array.from({ length: n }, (_, i) => ({ type: 'order', id: `o${String(i)}` })),
  sources: Array.from({ length: n }, (_, i) => `o${String(i)} @ initial`),
  firsts: Array.from({ length: n }, () => true),
  after,
})

describe('planShape', () => {
  it('counts batches and items of each kind, and the longest chain of batches through `after`', () => {
    // 0 ← 1 ← 3 and 2 ← 3: the longest chain is 0, 1, 3; batch 4 waits for nothing.
    const shape = planShape([upserts(10, []), events(4, [0]), upserts(6, []), events(2, [1, 2]), events(3, [])])
    expect(shape).toEqual({ batches: 5, eventBatches: 3, upsertBatches: 2, meanEvents: 3, meanUpserts: 8, criticalPath: 3 })
  })

  it('gives a critical path of 1 to batches that wait for nothing, and 0 to an empty plan', () => {
    expect(planShape([events(1, []), events(1, []), upserts(1, [])]).criticalPath).toBe(1)
    expect(planShape([])).toEqual({ batches: 0, eventBatches: 0, upsertBatches: 0, meanEvents: 0, meanUpserts: 0, criticalPath: 0 })
  })

  it('refuses a batch that waits for one that does not come before it', () => {
    expect(() => planShape([events(1, []), events(1, [1])])).toThrow(/batch 1 waits for batch 1/)
  })

  it("measures a plan's chain: an object changed between two of its events puts its change between them", () => {
    const T = (h: number) => Date.UTC(2024, 0, 1, h)
    const log: OcelLog = {
      format: 'json',
      eventTypes: [],
      objectTypes: [],
      notes: newNotes('UTC'),
      objects: [
        {
          id: 'o1',
          type: 'order',
          attributes: [
            { name: 'status', time: 0, value: 'new' },
            { name: 'status', time: T(2), value: 'paid' },
          ],
          relationships: [],
        },
      ],
      events: [
        { id: 'e1', type: 'pay', time: T(1), attributes: {}, relationships: [{ objectId: 'o1', qualifier: null }] },
        { id: 'e2', type: 'ship', time: T(3), attributes: {}, relationships: [{ objectId: 'o1', qualifier: null }] },
      ],
    }
    const plan = planImport(log)
    // The initial values, e1, the change at T(2), e2: each waits for the one before.
    expect(plan.batches.map((b) => b.kind)).toEqual(['objects', 'events', 'objects', 'events'])
    expect(planShape(plan.batches)).toEqual({ batches: 4, eventBatches: 2, upsertBatches: 2, meanEvents: 1, meanUpserts: 1, criticalPath: 4 })
  })
})
