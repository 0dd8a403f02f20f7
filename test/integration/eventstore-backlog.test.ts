/**
 * The EventStoreDB log's lag without subscriptions (src/adapters/eventstore/backlog.ts), against a
 * fake `$all`: an array of events of dataset and other streams, read forwards in pages as the
 * client's plain `readAll` reads them. Checks the Backlog contract (src/ports/event-log.ts): exact
 * when the scan reaches the head, otherwise `exact: false` with a true lower bound, and the cost of
 * one answer bounded. No engine answers, but the adapter loads the EventStoreDB client (gRPC, sockets),
 * so the test is of the integration tier.
 */
import { describe, expect, it } from 'vitest'
import {
  type AllEntry,
  BacklogCounter,
  countRecordsBetween,
  EXACT_SCAN_EVENTS,
  type ReadAllEntries,
  RULER_REFRESH_EVENTS,
  RULER_STEP,
} from '../../src/adapters/eventstore/backlog.js'
import { stored, upsertRecord } from '../contract/fixtures.js'

const T0 = Date.parse('2024-05-01T10:00:00.000Z')

/**
 * A fake `$all` of `kinds` ('d' a dataset record, 'x' a system or foreign event), positions
 * 100, 200, …, with the reads it served (events handed out per call).
 */
function fakeAll(kinds: string) {
  const events: AllEntry[] = [...kinds].map((k, i) => ({
    position: (i + 1) * 100,
    dataset: k === 'd',
    appendedAt: new Date(T0 + i * 1000).toISOString(),
  }))
  const reads: number[] = []
  const read: ReadAllEntries = async (after, maxCount) => {
    const page = events.filter((e) => after === null || e.position > after).slice(0, maxCount)
    reads.push(page.length)
    return page
  }
  const firsts: (number | null)[] = []
  const readFirst = async (after: number | null) => {
    firsts.push(after)
    const e = events.find((x) => x.dataset && (after === null || x.position > after))
    const [record] = e === undefined ? [] : stored('ds', [upsertRecord('ds', 'order', 'o1', {})], e.position)
    return record === undefined || e === undefined ? undefined : { ...record, appendedAt: e.appendedAt }
  }
  return { events, read, reads, readFirst, firsts }
}

/** The true number of dataset records with after < position ≤ upTo. */
function truth(events: readonly AllEntry[], after: number | null, upTo: number): number {
  return events.filter((e) => e.dataset && (after === null || e.position > after) && e.position <= upTo).length
}

describe('BacklogCounter', () => {
  it('counts exactly, skipping other streams, when the head is within the scan', async () => {
    const all = fakeAll('dxdxxdd')
    const counter = new BacklogCounter(all.read, all.readFirst)
    expect(await counter.backlog(100, 600)).toEqual({ records: 2, exact: true, oldestAppendedAt: all.events[2]?.appendedAt })
    expect(await counter.backlog(null, 700)).toEqual({ records: 4, exact: true, oldestAppendedAt: all.events[0]?.appendedAt })
    expect(await counter.backlog(700, 700)).toEqual({ records: 0, exact: true, oldestAppendedAt: null })
    expect(await counter.backlog(300, 500)).toEqual({ records: 0, exact: true, oldestAppendedAt: null })
    await counter.idle()
  })

  it('reads at most EXACT_SCAN_EVENTS events of $all for a long backlog and answers a lower bound', async () => {
    const all = fakeAll('d'.repeat(EXACT_SCAN_EVENTS * 3))
    const counter = new BacklogCounter(all.read, all.readFirst)
    const head = EXACT_SCAN_EVENTS * 3 * 100
    const first = await counter.backlog(null, head)
    expect(first).toEqual({ records: EXACT_SCAN_EVENTS, exact: false, oldestAppendedAt: all.events[0]?.appendedAt })
    // The answer itself read EXACT_SCAN_EVENTS events; the rest is the ruler in the background.
    await counter.idle()
    expect(all.reads.slice(0, 2).reduce((s, n) => s + n, 0)).toBe(EXACT_SCAN_EVENTS)
    expect(counter.lastError).toBe(null)
  })

  it('answers from the ruler once it has read the backlog: a lower bound within RULER_STEP of the truth', async () => {
    const kinds = Array.from({ length: 12_345 }, (_, i) => (i % 7 === 3 ? 'x' : 'd')).join('')
    const all = fakeAll(kinds)
    const counter = new BacklogCounter(all.read, all.readFirst)
    const head = kinds.length * 100
    await counter.backlog(null, head)
    await counter.idle()
    for (const after of [null, 150_000, 333_300]) {
      const b = await counter.backlog(after, head)
      const n = truth(all.events, after, head)
      expect(b.exact).toBe(false)
      expect(b.records).toBeLessThanOrEqual(n)
      expect(b.records).toBeGreaterThan(n - 2 * RULER_STEP)
    }
  })

  it('extends the ruler by at most RULER_REFRESH_EVENTS per backlog, one extension at a time', async () => {
    const all = fakeAll('d'.repeat(RULER_REFRESH_EVENTS + 5000))
    const counter = new BacklogCounter(all.read, all.readFirst)
    const head = (RULER_REFRESH_EVENTS + 5000) * 100
    await Promise.all([counter.backlog(null, head), counter.backlog(null, head)])
    await counter.idle()
    const afterOne = counter.rulerBound(null, head)
    expect(afterOne).toBe((RULER_REFRESH_EVENTS / RULER_STEP - 1) * RULER_STEP + 1)
    await counter.backlog(null, head)
    await counter.idle()
    expect(counter.rulerBound(null, head)).toBe(((RULER_REFRESH_EVENTS + 5000) / RULER_STEP - 1) * RULER_STEP + 1)
  })

  it('finds the oldest record by one filtered read when the scan met only other streams', async () => {
    const all = fakeAll(`${'x'.repeat(EXACT_SCAN_EVENTS + 10)}dd`)
    const counter = new BacklogCounter(all.read, all.readFirst)
    const b = await counter.backlog(null, (EXACT_SCAN_EVENTS + 12) * 100)
    expect(b).toEqual({ records: 1, exact: false, oldestAppendedAt: all.events[EXACT_SCAN_EVENTS + 10]?.appendedAt })
    expect(all.firsts).toEqual([null])
    await counter.idle()
  })

  it('stops extending the ruler after the page under way when stopped', async () => {
    const all = fakeAll('d'.repeat(RULER_REFRESH_EVENTS))
    const counter = new BacklogCounter(all.read, all.readFirst)
    await counter.backlog(null, RULER_REFRESH_EVENTS * 100)
    const before = all.reads.length
    await counter.stop()
    expect(all.reads.length - before).toBeLessThanOrEqual(1)
    expect(counter.rulerBound(null, RULER_REFRESH_EVENTS * 100)).toBeLessThan(RULER_REFRESH_EVENTS / 2)
  })

  it('keeps answering when the background extension fails, and says why', async () => {
    const all = fakeAll('d'.repeat(EXACT_SCAN_EVENTS + 1))
    let calls = 0
    const flaky: ReadAllEntries = async (after, n) => {
      calls += 1
      if (calls > 2) throw new Error('engine away')
      return all.read(after, n)
    }
    const counter = new BacklogCounter(flaky, all.readFirst)
    expect((await counter.backlog(null, (EXACT_SCAN_EVENTS + 1) * 100)).exact).toBe(false)
    await counter.idle()
    expect(String(counter.lastError)).toContain('engine away')
  })
})

describe('countRecordsBetween', () => {
  it('counts the dataset records in (after, upTo], up to max, through plain reads', async () => {
    const all = fakeAll('dxd'.repeat(1500))
    expect(await countRecordsBetween(all.read, null, 4500 * 100, 10_000)).toBe(3000)
    expect(await countRecordsBetween(all.read, 300, 900, 10_000)).toBe(truth(all.events, 300, 900))
    expect(await countRecordsBetween(all.read, null, 4500 * 100, 1234)).toBe(1234)
  })
})
