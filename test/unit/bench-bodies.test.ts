/**
 * The bench's request bodies (bench/bodies.ts): the single and batch scenarios are a live feed whose
 * timestamps move on at each cycle of their pool, each load of the typical scenarios after the one
 * before it, and the worst case rewinds them (its events then arrive late for their objects).
 */
import { describe, expect, it } from 'vitest'
import { bodySource, TYPICAL_FEED_FIRST_CYCLE } from '../../bench/bodies.js'

/** The timestamps of one body, in ms. */
const timesOf = (body: string): number[] => {
  const parsed = JSON.parse(body) as { events?: { timestamp: string }[]; timestamp?: string }
  const items = parsed.events ?? [parsed]
  return items.map((e) => Date.parse(e.timestamp ?? ''))
}

/** The timestamps of `cycles` whole cycles of a pool of `pool` bodies, per cycle. */
const cyclesOf = (next: () => string, pool: number, cycles: number): number[][] =>
  Array.from({ length: cycles }, () => Array.from({ length: pool }, () => timesOf(next())).flat())

describe('bench bodies', () => {
  it('moves the batch pool one year on per cycle, so every event comes after the previous cycle', () => {
    const [first, second, third] = cyclesOf(bodySource('batch', 2, 't'), 200, 3)
    expect(first?.length).toBe(20_000)
    expect(Math.min(...(second ?? []))).toBeGreaterThan(Math.max(...(first ?? [])))
    expect(Math.min(...(third ?? []))).toBeGreaterThan(Math.max(...(second ?? [])))
    expect(new Date(Math.min(...(second ?? []))).toISOString()).toBe('2025-05-01T08:00:00.000Z')
    expect(second?.map((t) => new Date(t).toISOString().slice(4))).toEqual(first?.map((t) => new Date(t).toISOString().slice(4)))
  })

  it('starts a later load of the feed `firstCycle` years on, after every event of the loads before it', () => {
    const [earlier] = cyclesOf(bodySource('batch', 2, 't'), 200, 1)
    const [later] = cyclesOf(bodySource('batch', 3, 't', 100), 200, 1)
    expect(new Date(Math.min(...(later ?? []))).toISOString()).toBe('2124-05-01T08:00:00.000Z')
    expect(Math.min(...(later ?? []))).toBeGreaterThan(Math.max(...(earlier ?? [])))
    expect(later?.map((t) => new Date(t).toISOString().slice(4))).toEqual(earlier?.map((t) => new Date(t).toISOString().slice(4)))
  })

  it('starts each load of the typical scenarios after every cycle the load before it can reach, in years of four digits', () => {
    const { single, batch, halfRate } = TYPICAL_FEED_FIRST_CYCLE
    // The last cycle of a load's span is the one before the next load's first.
    const [singleLast] = cyclesOf(bodySource('single', 1, 't', batch - 1), 2000, 1)
    const [batchFirst] = cyclesOf(bodySource('batch', 2, 't', batch), 200, 1)
    const [batchLast] = cyclesOf(bodySource('batch', 2, 't', halfRate - 1), 200, 1)
    const [halfRateFirst] = cyclesOf(bodySource('batch', 2, 't', halfRate), 200, 1)
    expect(single).toBe(0)
    expect(batch - single).toBeGreaterThanOrEqual(500)
    expect(halfRate - batch).toBeGreaterThanOrEqual(500)
    expect(Math.min(...(batchFirst ?? []))).toBeGreaterThan(Math.max(...(singleLast ?? [])))
    expect(Math.min(...(halfRateFirst ?? []))).toBeGreaterThan(Math.max(...(batchLast ?? [])))
    // The half-rate load's own span stays in years that ISO 8601's four digits write.
    const [halfRateLast] = cyclesOf(bodySource('batch', 2, 't', halfRate + 999), 200, 1)
    expect(new Date(Math.max(...(halfRateLast ?? []))).getUTCFullYear()).toBeLessThan(10_000)
  })

  it('moves the single-event pool on too', () => {
    const [first, second] = cyclesOf(bodySource('single', 1, 't'), 2000, 2)
    expect(Math.min(...(second ?? []))).toBeGreaterThan(Math.max(...(first ?? [])))
  })

  it('rewinds the worst case at each cycle: its second cycle repeats the first one’s times', () => {
    const [first, second] = cyclesOf(bodySource('worst', 4, 't'), 20, 2)
    expect(first?.length).toBe(2000)
    expect(second).toEqual(first)
  })
})
