/**
 * The pure side of the analysis reads (src/core/analysis-rows.ts): the per-event fold that the
 * SQLite and MongoDB adapters stream their events into (PerformanceFold), on the hand-computed shop of the
 * contract suite, and the variants' order and paging. No I/O.
 */
import { describe, expect, it } from 'vitest'
import { assemblePerformance, compareSequences, type EventInputs, pageVariants, performanceRowsOfEvents } from '../../src/core/analysis-rows.js'
import type { Stats } from '../../src/schemas/process.js'

const MIN = 60_000
const T0 = Date.parse('2024-05-01T10:00:00.000Z')

function stats(seconds: number[]): Stats {
  const v = [...seconds].sort((a, b) => a - b)
  const n = v.length
  const sum = v.reduce((a, b) => a + b, 0)
  return {
    count: n,
    mean: Math.round((sum / n) * 1000) / 1000,
    median: ((v[Math.floor((n - 1) / 2)] ?? 0) + (v[Math.ceil((n - 1) / 2)] ?? 0)) / 2,
    min: v[0] ?? 0,
    max: v[n - 1] ?? 0,
    sum,
  }
}

/**
 * The shop's events in the window with their inputs: Create Order (0, ends 0:30) with o1, i1, i2;
 * Pay (10) with o1; Picks (5; i1's ends at 25) with i1 and i2; Ship (20) with o1, i1, i2.
 * Positions: create 1, pay 2, pick1 3, pick2 4, ship 5.
 */
const SHOP: EventInputs[] = [
  {
    event_id: 'create',
    act: 'Create Order',
    t: T0,
    position: 1,
    inputs: [
      { ot: 'order', ext: 'o1', p_r: null, p_pos: null },
      { ot: 'item', ext: 'i1', p_r: null, p_pos: null },
      { ot: 'item', ext: 'i2', p_r: null, p_pos: null },
    ],
  },
  { event_id: 'pay', act: 'Pay', t: T0 + 10 * MIN, position: 2, inputs: [{ ot: 'order', ext: 'o1', p_r: T0 + 30_000, p_pos: 1 }] },
  { event_id: 'pick1', act: 'Pick', t: T0 + 5 * MIN, position: 3, inputs: [{ ot: 'item', ext: 'i1', p_r: T0 + 30_000, p_pos: 1 }] },
  { event_id: 'pick2', act: 'Pick', t: T0 + 5 * MIN, position: 4, inputs: [{ ot: 'item', ext: 'i2', p_r: T0 + 30_000, p_pos: 1 }] },
  {
    event_id: 'ship',
    act: 'Ship',
    t: T0 + 20 * MIN,
    position: 5,
    inputs: [
      { ot: 'order', ext: 'o1', p_r: T0 + 10 * MIN, p_pos: 2 },
      { ot: 'item', ext: 'i1', p_r: T0 + 25 * MIN, p_pos: 3 },
      { ot: 'item', ext: 'i2', p_r: T0 + 5 * MIN, p_pos: 4 },
    ],
  },
]

describe('performanceRowsOfEvents', () => {
  it('gives the same measures as the hand-computed contract cases', () => {
    const answer = assemblePerformance(performanceRowsOfEvents(SHOP, 5))
    expect(answer.map((a) => [a.activity, a.events, a.events_with_predecessors])).toEqual([
      ['Create Order', 1, 0],
      ['Pay', 1, 1],
      ['Pick', 2, 2],
      ['Ship', 1, 1],
    ])
    const [create, pay, pick, ship] = answer
    expect(create?.object_types).toEqual([
      { object_type: 'item', pooling: null, lagging: null, readying: null, delaying: 0 },
      { object_type: 'order', pooling: null, lagging: null, readying: null, delaying: 0 },
    ])
    expect(pay?.sojourn).toEqual(stats([570]))
    expect(pick?.slowest.map((s) => [s.event_id, s.sojourn, s.delaying_object.id])).toEqual([
      ['pick2', 270, 'i2'],
      ['pick1', 270, 'i1'],
    ])
    expect(ship).toEqual({
      activity: 'Ship',
      events: 1,
      events_with_predecessors: 1,
      sojourn: stats([0]),
      flow: stats([900]),
      synchronization: stats([1200]),
      object_types: [
        { object_type: 'item', pooling: stats([1200]), lagging: stats([1200]), readying: stats([0]), delaying: 1 },
        { object_type: 'order', pooling: stats([0]), lagging: stats([300]), readying: stats([900]), delaying: 0 },
      ],
      slowest: [{ event_id: 'ship', timestamp: '2024-05-01T10:20:00.000Z', sojourn: 0, delaying_object: { type: 'item', id: 'i1' } }],
    })
  })

  it('keeps only the slowest asked for, whatever the number of events', () => {
    const many: EventInputs[] = Array.from({ length: 500 }, (_, i) => ({
      event_id: `e${String(i)}`,
      act: 'Wait',
      t: T0 + (i % 7) * MIN,
      position: i,
      inputs: [{ ot: 'o', ext: String(i), p_r: T0, p_pos: 0 }],
    }))
    const [wait] = assemblePerformance(performanceRowsOfEvents(many, 3))
    // Sojourn 6 min for i % 7 === 6; the latest positions first: 496, 489, 482.
    expect(wait?.slowest.map((s) => [s.event_id, s.sojourn])).toEqual([
      ['e496', 360],
      ['e489', 360],
      ['e482', 360],
    ])
  })
})

describe('variants order and paging', () => {
  it('orders sequences element by element, a prefix first', () => {
    expect([['b'], ['a', 'b', 'c'], ['a'], ['a', 'b']].sort(compareSequences)).toEqual([['a'], ['a', 'b'], ['a', 'b', 'c'], ['b']])
  })

  it('pages after a variant, with shares of all objects and examples in code-unit order', () => {
    const row = (seq: string[], n: number, examples: string[]) => ({ seq, examples, c3: n, c4: 0, c5: 0, c6: 0, c7: 0 })
    const rows = [row(['b'], 2, ['z', 'B']), row(['a'], 1, ['x']), row(['a', 'b'], 2, ['é', 'e', 'E'])]
    const first = pageVariants(rows, 2)
    expect(first.variants.map((v) => [v.activities, v.share, v.examples])).toEqual([
      [['a', 'b'], 0.4, ['E', 'e', 'é']],
      [['b'], 0.4, ['B', 'z']],
    ])
    expect([first.total, first.objects, first.next]).toEqual([3, 5, { objects: 2, activities: ['b'] }])
    const second = pageVariants(rows, 2, first.next ?? undefined)
    expect([second.variants.map((v) => v.activities), second.next]).toEqual([[['a']], null])
  })
})
