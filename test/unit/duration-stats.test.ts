/**
 * The duration statistics of the directly-follows read model (src/core/duration-stats.ts;
 * docs/process-map.md): against the definition over the multiset itself. Count, sum, min and max
 * are exact; the median is exact while the multiset never held more than EXACT_MAX values, and
 * past that within MEDIAN_RELATIVE_ERROR of the exact median (DDSketch's guarantee, Masson et al.,
 * VLDB 2019). Seeded: the same values every run.
 */
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import {
  addDuration,
  type DurationStats,
  EXACT_MAX,
  EXTREMES,
  emptiedEnds,
  emptyStats,
  MEDIAN_RELATIVE_ERROR,
  refillEnd,
  refillSize,
  removeDuration,
  summarize,
} from '../../src/core/duration-stats.js'

/** The summary by the definition: the multiset sorted, the median of an even count the mean of the two middle values. */
function definition(values: readonly number[]) {
  if (values.length === 0) return null
  const s = [...values].sort((a, b) => a - b)
  const lo = s[Math.floor((s.length - 1) / 2)] as number
  const hi = s[Math.ceil((s.length - 1) / 2)] as number
  return { count: s.length, sum: s.reduce((a, b) => a + b, 0), min: s[0] as number, max: s[s.length - 1] as number, median: (lo + hi) / 2 }
}

/** Asserts `stats` summarises `values`; `everExceeded`: the multiset once held more than EXACT_MAX values (its median may be sketched). */
function expectSummary(stats: DurationStats, values: readonly number[], everExceeded: boolean): void {
  const want = definition(values)
  const got = summarize(stats)
  if (want === null) {
    expect(got).toBeNull()
    return
  }
  if (got === null) throw new Error('summarize gave null for a non-empty multiset')
  expect({ count: got.count, sum: got.sum, min: got.min, max: got.max }).toEqual({ count: want.count, sum: want.sum, min: want.min, max: want.max })
  if (!everExceeded || got.exactMedian) {
    expect(got.median).toBe(want.median)
    if (!everExceeded) expect(got.exactMedian).toBe(true)
  } else {
    expect(Math.abs(got.median - want.median)).toBeLessThanOrEqual(MEDIAN_RELATIVE_ERROR * want.median)
  }
}

const shuffled = <T>(random: () => number, xs: readonly T[]): T[] => {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j] as T, a[i] as T]
  }
  return a
}

/** Durations as the map meets them: many short, some long (ms), a few zeros. */
const duration = (random: () => number) => (random() < 0.05 ? 0 : Math.floor(Math.exp(random() * 16)))

describe('duration statistics', () => {
  it('hold nothing when empty', () => {
    expect(summarize(emptyStats())).toBeNull()
  })

  it('give the definition after adds and removes in any order, exact up to EXACT_MAX values and within the bound past it', () => {
    const random = seededRandom(26)
    for (let round = 0; round < 60; round += 1) {
      const size = 1 + Math.floor(random() * (round < 30 ? EXACT_MAX : 400))
      const values = Array.from({ length: size }, () => duration(random))
      // The same multiset added in two orders gives the same summary.
      const a = emptyStats()
      const b = emptyStats()
      for (const v of values) addDuration(a, v)
      for (const v of shuffled(random, values)) addDuration(b, v)
      expect(summarize(a)).toEqual(summarize(b))
      expectSummary(a, values, size > EXACT_MAX)
      // Interleaved adds and removes (a value removed is one present), checked after each step.
      const held = [...values]
      let ever = size > EXACT_MAX
      for (let step = 0; step < 150; step += 1) {
        if (held.length > 0 && random() < 0.5) {
          const i = Math.floor(random() * held.length)
          const v = held[i] as number
          held.splice(i, 1)
          removeDuration(a, v)
        } else {
          const v = duration(random)
          held.push(v)
          addDuration(a, v)
          if (held.length > EXACT_MAX) ever = true
        }
        expectSummary(a, held, ever)
      }
    }
  })

  it('count zeros as values: their median, min and sum', () => {
    const s = emptyStats()
    for (let i = 0; i < 5; i += 1) addDuration(s, 0)
    addDuration(s, 7)
    expect(summarize(s)).toEqual({ count: 6, sum: 7, min: 0, max: 7, median: 0, exactMedian: true })
    const sketched = emptyStats()
    for (let i = 0; i < 100; i += 1) addDuration(sketched, 0)
    for (let i = 1; i <= 60; i += 1) addDuration(sketched, i * 1000)
    expect(summarize(sketched)).toMatchObject({ count: 160, sum: 1830 * 1000, min: 0, max: 60_000, median: 0 })
  })

  it('empty to nothing when every value is removed, exact or sketched, and start again from there', () => {
    for (const size of [3, EXACT_MAX, EXACT_MAX + 1, 500]) {
      const s = emptyStats()
      const values = Array.from({ length: size }, (_, i) => (i * 7919) % 10_007)
      for (const v of values) addDuration(s, v)
      for (const v of [...values].reverse()) removeDuration(s, v)
      expect(summarize(s)).toBeNull()
      expect({ n: s.n, sum: s.sum }).toEqual({ n: 0, sum: 0 })
      addDuration(s, 42)
      addDuration(s, 8)
      expect(summarize(s)).toEqual({ count: 2, sum: 50, min: 8, max: 42, median: 25, exactMedian: true })
    }
  })

  it('switch from exact to sketch at EXACT_MAX + 1 values, the median then within the bound', () => {
    const s = emptyStats()
    const values: number[] = []
    for (let i = 1; i <= EXACT_MAX; i += 1) {
      values.push(i * 1013)
      addDuration(s, i * 1013)
    }
    expect(s.exact).toHaveLength(EXACT_MAX)
    expect(summarize(s)).toEqual({ ...definition(values), exactMedian: true })
    values.push(500_000)
    addDuration(s, 500_000)
    expect(s.exact).toBeUndefined()
    expect(s.lo).toHaveLength(EXTREMES)
    expect(s.hi).toHaveLength(EXTREMES)
    expectSummary(s, values, true)
    // 65 values: the median (rank 32) is just past the 32 smallest kept and the 32 largest kept.
    const got = summarize(s)
    expect(got?.exactMedian).toBe(false)
    expect(got?.median).not.toBe(definition(values)?.median)
  })

  it('keep min within the bound, not a larger value added later, once every kept smallest value was removed and not refilled (and likewise max)', () => {
    const s = emptyStats()
    const values = Array.from({ length: 200 }, (_, i) => 1000 + i * 10)
    for (const v of values) addDuration(s, v)
    // Remove the EXTREMES + 8 smallest: none of the kept smallest is left.
    const removed = values.splice(0, EXTREMES + 8)
    for (const v of removed) removeDuration(s, v)
    values.push(50_000)
    addDuration(s, 50_000)
    const want = definition(values)
    const got = summarize(s)
    expect(got?.count).toBe(want?.count)
    // The smallest value left (1400) is no longer kept exactly: its bucket's value, within the bound, never the 50,000 just added.
    expect(Math.abs((got?.min ?? Number.NaN) - 1400)).toBeLessThanOrEqual(MEDIAN_RELATIVE_ERROR * 1400)
    expect(Math.abs((got?.median ?? Number.NaN) - (want?.median ?? 0))).toBeLessThanOrEqual(MEDIAN_RELATIVE_ERROR * (want?.median ?? 0))

    const t = emptyStats()
    const top = Array.from({ length: 200 }, (_, i) => 1000 + i * 10)
    for (const v of top) addDuration(t, v)
    for (const v of top.splice(top.length - EXTREMES - 8)) removeDuration(t, v)
    addDuration(t, 5)
    // The largest value left (2590) comes from its bucket, never the 5 just added.
    expect(Math.abs((summarize(t)?.max ?? Number.NaN) - 2590)).toBeLessThanOrEqual(MEDIAN_RELATIVE_ERROR * 2590)
    expect(summarize(t)?.min).toBe(5)
  })

  it('name the end that removals emptied, and give exact min and max again once the owner refills it, whatever it removes', () => {
    const random = seededRandom(41)
    const s = emptyStats()
    const values: number[] = []
    let refills = 0
    // Adds, removals of a random value, and runs of removals of the largest or the smallest (what late events do to an edge).
    for (let step = 0; step < 6000; step += 1) {
      const r = random()
      if (values.length < 70 || r < 0.45) {
        const v = duration(random)
        values.push(v)
        addDuration(s, v)
      } else if (r < 0.7) {
        const [v] = values.splice(Math.floor(random() * values.length), 1)
        removeDuration(s, v as number)
      } else {
        values.sort((a, b) => a - b)
        const run = 1 + Math.floor(random() * 40)
        for (const v of r < 0.85 ? values.splice(-run) : values.splice(0, run)) removeDuration(s, v)
      }
      // The owner, who keeps every value (a store's steps), puts back what emptiedEnds names.
      for (const end of emptiedEnds(s)) {
        const sorted = [...values].sort((a, b) => a - b)
        const n = refillSize(s)
        expect(n).toBe(Math.min(EXTREMES, values.length))
        refillEnd(s, end, shuffled(random, end === 'lo' ? sorted.slice(0, n) : sorted.slice(sorted.length - n)))
        refills += 1
      }
      expect(emptiedEnds(s)).toEqual([])
      expectSummary(s, values, true)
    }
    expect(refills).toBeGreaterThan(20)
  })

  it('need no refill while exact or empty, and refuse a refill of the wrong size or of exact statistics', () => {
    const exact = emptyStats()
    for (const v of [5, 1, 9]) addDuration(exact, v)
    expect(emptiedEnds(exact)).toEqual([])
    expect(() => refillEnd(exact, 'lo', [1, 5, 9])).toThrow(/exact/)
    const s = emptyStats()
    const values = Array.from({ length: 100 }, (_, i) => 1000 + i)
    for (const v of values) addDuration(s, v)
    for (const v of values.slice(60)) removeDuration(s, v)
    expect(emptiedEnds(s)).toEqual(['hi'])
    expect(() => refillEnd(s, 'hi', values.slice(29, 60))).toThrow(/32 largest values, got 31/)
    expect(() => refillEnd(s, 'hi', [...values.slice(29, 59), -1])).toThrow(RangeError)
    refillEnd(s, 'hi', values.slice(28, 60))
    expect(summarize(s)?.max).toBe(1059)
    for (const v of values.slice(0, 60)) removeDuration(s, v)
    expect(emptiedEnds(s)).toEqual([])
  })

  it('keep a sketched median, within the bound, once the multiset held more than EXACT_MAX values, even back at EXACT_MAX', () => {
    // The same 64 values reached two ways: straight, or through a 65th value added and removed.
    const values = Array.from({ length: EXACT_MAX }, (_, i) => 1000 + i * 37)
    const straight = emptyStats()
    const through = emptyStats()
    for (const v of values) {
      addDuration(straight, v)
      addDuration(through, v)
    }
    addDuration(through, 5000)
    removeDuration(through, 5000)
    const want = definition(values)
    expect(summarize(straight)).toEqual({ ...want, exactMedian: true })
    const got = summarize(through)
    expect(got).toMatchObject({ count: want?.count, sum: want?.sum, min: want?.min, max: want?.max, exactMedian: false })
    expect(Math.abs((got?.median ?? Number.NaN) - 2165.5)).toBeLessThanOrEqual(MEDIAN_RELATIVE_ERROR * 2165.5)
  })

  it('refuse a negative or fractional duration, and a removal from empty statistics', () => {
    expect(() => addDuration(emptyStats(), -1)).toThrow(RangeError)
    expect(() => addDuration(emptyStats(), 1.5)).toThrow(RangeError)
    expect(() => removeDuration(emptyStats(), 1)).toThrow(/empty/)
  })
})
