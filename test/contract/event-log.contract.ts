/**
 * Contract of the EventLog port (src/ports/event-log.ts): the same cases for every adapter.
 * Written for engines shared across runs: every case uses fresh dataset ids, and reads of `$all`
 * start after a marker record the case appended itself.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EventLog } from '../../src/ports/event-log.js'
import type { NewRecord, StoredRecord } from '../../src/schemas/records.js'
import { eventRecord, filler, freshDatasetId, keyed, objectIdsOf, upsertRecord } from './fixtures.js'

export interface EventLogHarness {
  log: EventLog
  /**
   * Appends `count` events to a stream outside the `dataset-` prefix (EventStoreDB only: the
   * port cannot write there), so the suite can check that `$all` reads are filtered to datasets.
   */
  appendForeign?: (stream: string, count: number) => Promise<void>
  close(): Promise<void>
}

export interface EventLogContractOptions {
  /** The harness offers `appendForeign` (runs the filtered-$all cases). */
  foreignStreams?: boolean
}

function withoutPosition(r: StoredRecord): NewRecord & { stream: string; datasetId: string } {
  switch (r.type) {
    case 'EventRecorded':
      return { type: r.type, version: r.version, data: r.data, stream: r.stream, datasetId: r.datasetId }
    case 'ObjectUpserted':
      return { type: r.type, version: r.version, data: r.data, stream: r.stream, datasetId: r.datasetId }
    case 'TypesDeclared':
      return { type: r.type, version: r.version, data: r.data, stream: r.stream, datasetId: r.datasetId }
  }
}

async function collectTail(log: EventLog, after: number | null, until: (seen: StoredRecord[]) => boolean, timeoutMs = 10_000): Promise<StoredRecord[]> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const seen: StoredRecord[] = []
  try {
    for await (const batch of log.tail(after, { signal: controller.signal, maxBatch: 100 })) {
      seen.push(...batch)
      if (until(seen)) break
    }
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  return seen
}

/** Runs the EventLog contract against the adapter `open` builds (one fresh harness per case). */
export function eventLogContract(adapter: string, open: () => Promise<EventLogHarness>, options: EventLogContractOptions = {}): void {
  describe(`EventLog contract: ${adapter}`, () => {
    let h: EventLogHarness
    let log: EventLog
    beforeEach(async () => {
      h = await open()
      log = h.log
    })
    afterEach(async () => {
      await h.close()
    })

    /** Appends one record to a fresh dataset and returns its position: reads of $all start after it. */
    async function marker(): Promise<number> {
      const ds = freshDatasetId()
      const { positions } = await log.append(ds, [upsertRecord(ds, 'marker', 'm', {})], [])
      const p = positions[0]
      if (p === undefined) throw new Error('marker append returned no position')
      return p
    }

    it('appends records in order and answers one ascending position per record', async () => {
      const ds = freshDatasetId()
      const records = [
        eventRecord(ds, 'Create Order', [{ type: 'order', id: 'o1' }]),
        upsertRecord(ds, 'order', 'o1', { status: 'open' }),
        eventRecord(ds, 'Pay Order', [{ type: 'order', id: 'o1' }]),
      ]
      const { positions } = await log.append(ds, records, [])
      expect(positions).toHaveLength(3)
      expect([...positions].sort((a, b) => a - b)).toEqual(positions)
      expect(new Set(positions).size).toBe(3)
      const read = await log.readStream(ds, null, 100)
      expect(read.map((r) => r.position)).toEqual(positions)
      expect(read.map(withoutPosition)).toEqual(records.map((r) => ({ ...r, stream: `dataset-${ds}`, datasetId: ds })))
    })

    it('answers the last position of a stream and of the log, and null for an empty stream', async () => {
      const ds = freshDatasetId()
      expect(await log.lastPosition(ds)).toBeNull()
      const { positions } = await log.append(ds, [upsertRecord(ds, 'order', 'a', {}), upsertRecord(ds, 'order', 'b', {})], [])
      expect(await log.lastPosition(ds)).toBe(positions[1])
      const other = freshDatasetId()
      const later = await log.append(other, [upsertRecord(other, 'order', 'c', {})], [])
      expect(await log.lastPosition(ds)).toBe(positions[1])
      expect(await log.lastPosition()).toBeGreaterThanOrEqual(later.positions[0] ?? Infinity)
    })

    it('counts the records between two positions, of every stream, up to a maximum, and answers their backlog with the first append time', async () => {
      const a = freshDatasetId()
      const b = freshDatasetId()
      const first = await log.append(a, [upsertRecord(a, 'order', 'a1', {})], [])
      await log.append(b, [upsertRecord(b, 'order', 'b1', {})], [])
      const third = await log.append(a, [upsertRecord(a, 'order', 'a2', {}), upsertRecord(a, 'order', 'a3', {})], [])
      const from = first.positions[0] ?? 0
      const to = third.positions[1] ?? 0
      expect(await log.countBetween(from, to, 100)).toBe(3)
      expect(await log.countBetween(from, third.positions[0] ?? 0, 100)).toBe(2)
      expect(await log.countBetween(from, to, 2)).toBe(2)
      expect(await log.countBetween(to, to, 100)).toBe(0)
      const [second] = await log.readAll(from, 1)
      expect(await log.backlog(from, to)).toEqual({ records: 3, exact: true, oldestAppendedAt: second?.appendedAt })
      expect((await log.backlog(from, third.positions[0] ?? 0)).records).toBe(2)
      expect(await log.backlog(to, to)).toEqual({ records: 0, exact: true, oldestAppendedAt: null })
    })

    it('gives a later append higher positions than an earlier one', async () => {
      const ds = freshDatasetId()
      const first = await log.append(ds, [upsertRecord(ds, 'order', 'a', {})], [])
      const second = await log.append(ds, [upsertRecord(ds, 'order', 'b', {})], [])
      expect(second.positions[0]).toBeGreaterThan(first.positions[0] ?? Infinity)
    })

    it('stamps every stored record with its stream, dataset and an ISO append time', async () => {
      const ds = freshDatasetId()
      await log.append(ds, [upsertRecord(ds, 'order', 'a', {})], [])
      const [r] = await log.readStream(ds, null, 10)
      expect(r?.stream).toBe(`dataset-${ds}`)
      expect(r?.datasetId).toBe(ds)
      expect(r?.appendedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    })

    it("reads one dataset's stream without the records of another", async () => {
      const a = freshDatasetId()
      const b = freshDatasetId()
      await log.append(a, [upsertRecord(a, 'order', 'a1', {})], [])
      await log.append(b, [upsertRecord(b, 'order', 'b1', {})], [])
      await log.append(a, [upsertRecord(a, 'order', 'a2', {})], [])
      const readA = await log.readStream(a, null, 100)
      const readB = await log.readStream(b, null, 100)
      expect(readA.map((r) => (r.type === 'ObjectUpserted' ? r.data.id : ''))).toEqual(['a1', 'a2'])
      expect(readB.map((r) => (r.type === 'ObjectUpserted' ? r.data.id : ''))).toEqual(['b1'])
    })

    it('reads an unknown dataset as an empty stream', async () => {
      expect(await log.readStream(freshDatasetId(), null, 10)).toEqual([])
    })

    it('pages a stream: after is exclusive and maxCount caps the page', async () => {
      const ds = freshDatasetId()
      const { positions } = await log.append(
        ds,
        [0, 1, 2, 3, 4].map((i) => upsertRecord(ds, 'order', `o${String(i)}`, {})),
        [],
      )
      const page1 = await log.readStream(ds, null, 2)
      const page2 = await log.readStream(ds, page1[1]?.position ?? null, 2)
      const page3 = await log.readStream(ds, page2[1]?.position ?? null, 2)
      expect([...page1, ...page2, ...page3].map((r) => r.position)).toEqual(positions)
      expect(page3).toHaveLength(1)
      expect(await log.readStream(ds, positions[4] ?? null, 2)).toEqual([])
    })

    it('reads every dataset after a position in ascending order, at most maxCount', async () => {
      const after = await marker()
      const a = freshDatasetId()
      const b = freshDatasetId()
      const pa = (await log.append(a, [upsertRecord(a, 'order', 'a1', {})], [])).positions
      const pb = (await log.append(b, [upsertRecord(b, 'order', 'b1', {}), upsertRecord(b, 'order', 'b2', {})], [])).positions
      const all = (await log.readAll(after, 1000)).filter((r) => r.datasetId === a || r.datasetId === b)
      expect(all.map((r) => r.position)).toEqual([...pa, ...pb])
      expect(all.map((r) => r.datasetId)).toEqual([a, b, b])
      const capped = await log.readAll(after, 2)
      expect(capped).toHaveLength(2)
      expect(capped[0]?.position).toBeGreaterThan(after)
      expect((capped[0]?.position ?? 0) < (capped[1]?.position ?? 0)).toBe(true)
    })

    it('reads nothing after the last position', async () => {
      const ds = freshDatasetId()
      const { positions } = await log.append(ds, [upsertRecord(ds, 'order', 'a', {})], [])
      const last = positions[0] ?? null
      expect((await log.readAll(last, 100)).filter((r) => r.datasetId === ds)).toEqual([])
    })

    it('tails: wakes on an append made after it started and yields the new records', async () => {
      const after = await marker()
      const ds = freshDatasetId()
      const tailing = collectTail(log, after, (seen) => seen.some((r) => r.datasetId === ds))
      await new Promise((resolve) => setTimeout(resolve, 200))
      const { positions } = await log.append(ds, [upsertRecord(ds, 'order', 'late', { n: 1 })], [])
      const seen = (await tailing).filter((r) => r.datasetId === ds)
      expect(seen.map((r) => r.position)).toEqual(positions)
    })

    it('tails: catches up on records appended before it started', async () => {
      const after = await marker()
      const ds = freshDatasetId()
      const { positions } = await log.append(ds, [upsertRecord(ds, 'order', 'a', {}), upsertRecord(ds, 'order', 'b', {})], [])
      const seen = (await collectTail(log, after, (s) => s.filter((r) => r.datasetId === ds).length >= 2)).filter((r) => r.datasetId === ds)
      expect(seen.map((r) => r.position)).toEqual(positions)
    })

    it('tails: reads maxBatch again before each batch, so a caller can change it between batches', async () => {
      const after = await marker()
      const ds = freshDatasetId()
      const { positions } = await log.append(
        ds,
        Array.from({ length: 10 }, (_, i) => upsertRecord(ds, 'order', `o${String(i)}`, {})),
        [],
      )
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), 10_000)
      const options = { signal: controller.signal, maxBatch: 3 }
      const batches: { size: number; maxBatch: number }[] = []
      const seen: number[] = []
      try {
        for await (const batch of log.tail(after, options)) {
          batches.push({ size: batch.length, maxBatch: options.maxBatch })
          seen.push(...batch.filter((r) => r.datasetId === ds).map((r) => r.position))
          if (seen.length >= positions.length) break
          options.maxBatch = 5
          // A subscription (EventStoreDB) yields what has arrived: let the rest arrive before the next batch.
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      } finally {
        clearTimeout(timer)
        controller.abort()
      }
      expect(seen).toEqual(positions)
      expect(batches[0]?.maxBatch).toBe(3)
      expect(batches.every((b) => b.size > 0 && b.size <= b.maxBatch)).toBe(true)
      expect(batches.slice(1).some((b) => b.size > 3)).toBe(true)
    })

    it('tails: returns when its signal aborts', async () => {
      const controller = new AbortController()
      const last = await marker()
      const iterate = (async () => {
        let batches = 0
        for await (const _ of log.tail(last, { signal: controller.signal, maxBatch: 10 })) batches += 1
        return batches
      })()
      await new Promise((resolve) => setTimeout(resolve, 100))
      controller.abort()
      // Nothing was appended after the marker: the iterator returns without a batch.
      await expect(iterate).resolves.toBe(0)
    })

    it('claims object ids: the first claim wins, a later one claims only new ids', async () => {
      const ds = freshDatasetId()
      const r1 = eventRecord(ds, 'Create Order', [
        { type: 'order', id: 'o1' },
        { type: 'item', id: 'i1' },
      ])
      const [order, item] = objectIdsOf(r1)
      const first = await log.append(ds, [r1], objectIdsOf(r1))
      expect([...first.claimed].sort()).toEqual([order, item].sort())
      const r2 = eventRecord(ds, 'Add Item', [
        { type: 'order', id: 'o1' },
        { type: 'item', id: 'i2' },
      ])
      const second = await log.append(ds, [r2], objectIdsOf(r2))
      expect([...second.claimed]).toEqual([objectIdsOf(r2)[1]])
    })

    it('claims an object id once among concurrent appends', async () => {
      const ds = freshDatasetId()
      const records = Array.from({ length: 8 }, () => upsertRecord(ds, 'order', 'contended', {}))
      const results = await Promise.all(records.map((r) => log.append(ds, [r], objectIdsOf(r))))
      const winners = results.filter((r) => r.claimed.size === 1)
      expect(winners).toHaveLength(1)
      expect(await log.readStream(ds, null, 100)).toHaveLength(8)
    })

    it('keeps records immutable: changing the objects given or read does not change the log', async () => {
      const ds = freshDatasetId()
      const record = upsertRecord(ds, 'order', 'o1', { status: 'open', lines: [1, 2] })
      await log.append(ds, [record], [])
      if (record.type === 'ObjectUpserted') record.data.properties.status = 'changed by the caller'
      const [first] = await log.readStream(ds, null, 10)
      if (first?.type === 'ObjectUpserted') first.data.properties.status = 'changed by a reader'
      await log.append(ds, [upsertRecord(ds, 'order', 'o1', { status: 'closed' })], [])
      const [again] = await log.readStream(ds, null, 10)
      expect(again?.type === 'ObjectUpserted' ? again.data.properties : null).toEqual({ status: 'open', lines: [1, 2] })
    })

    it('appends a call larger than one 1 MiB EventStoreDB append, in order, as separate appends', async () => {
      const ds = freshDatasetId()
      // 6 records of ~400 KiB: 2.4 MiB in one call, so at least three appends under MaxAppendSize.
      const records = Array.from({ length: 6 }, (_, i) => upsertRecord(ds, 'document', `d${String(i)}`, { body: filler(400 * 1024), i }))
      const { positions } = await log.append(ds, records, [])
      expect(positions).toHaveLength(6)
      expect([...positions].sort((a, b) => a - b)).toEqual(positions)
      const read = await log.readStream(ds, null, 10)
      expect(read.map((r) => (r.type === 'ObjectUpserted' ? r.data.properties.i : null))).toEqual([0, 1, 2, 3, 4, 5])
      expect(read.map((r) => r.position)).toEqual(positions)
    })

    describe.skipIf(options.foreignStreams !== true)('reads of $all filtered to dataset streams', () => {
      it('readAll leaves out streams without the dataset- prefix', async () => {
        const after = await marker()
        await h.appendForeign?.(`other-${freshDatasetId()}`, 3)
        const ds = freshDatasetId()
        await log.append(ds, [upsertRecord(ds, 'order', 'a', {})], [])
        const all = await log.readAll(after, 1000)
        expect(all.every((r) => r.stream.startsWith('dataset-'))).toBe(true)
        expect(all.filter((r) => r.datasetId === ds)).toHaveLength(1)
      })

      it('tail leaves out streams without the dataset- prefix', async () => {
        const after = await marker()
        await h.appendForeign?.(`other-${freshDatasetId()}`, 3)
        const ds = freshDatasetId()
        await log.append(ds, [upsertRecord(ds, 'order', 'a', {})], [])
        const seen = await collectTail(log, after, (s) => s.some((r) => r.datasetId === ds))
        expect(seen.every((r) => r.stream.startsWith('dataset-'))).toBe(true)
      })
    })

    describe('idempotency keys', () => {
      it('appends a keyed record once and answers a second append of its key and content with the record first recorded', async () => {
        const ds = freshDatasetId()
        const first = await log.append(ds, [keyed(eventRecord(ds, 'Create Order', [{ type: 'order', id: 'o1' }]), 'k1', 'f1')], [])
        expect(first.outcomes.map((o) => o.kind)).toEqual(['appended'])
        const again = keyed(eventRecord(ds, 'Create Order', [{ type: 'order', id: 'o1' }]), 'k1', 'f1')
        const second = await log.append(ds, [again], [])
        const outcome = second.outcomes[0]
        expect([second.positions, outcome?.kind]).toEqual([[], 'duplicate'])
        if (outcome?.kind !== 'duplicate' || outcome.original.type !== 'EventRecorded' || again.type !== 'EventRecorded')
          throw new Error('not a duplicate event')
        expect([outcome.original.position, outcome.original.idempotency]).toEqual([first.positions[0], { key: 'k1', fingerprint: 'f1' }])
        expect(outcome.original.data.event_id).not.toBe(again.data.event_id)
        const stored = await log.readStream(ds, null, 10)
        expect(stored.map((r) => [r.position, r.idempotency])).toEqual([[first.positions[0], { key: 'k1', fingerprint: 'f1' }]])
      })

      it("refuses a key recorded with other content as a conflict, appends the rest of the call, and claims only the appended records' objects", async () => {
        const ds = freshDatasetId()
        await log.append(ds, [keyed(upsertRecord(ds, 'order', 'o1', {}), 'k1', 'f1')], [])
        const conflicting = keyed(upsertRecord(ds, 'item', 'i9', {}), 'k1', 'f2')
        const other = upsertRecord(ds, 'order', 'o2', {})
        const claims = [...objectIdsOf(conflicting), ...objectIdsOf(other)]
        const result = await log.append(ds, [conflicting, other], claims)
        expect(result.outcomes.map((o) => (o.kind === 'conflict' ? `conflict ${o.key}` : o.kind))).toEqual(['conflict k1', 'appended'])
        expect([...result.claimed]).toEqual(objectIdsOf(other))
        expect((await log.readStream(ds, null, 10)).map((r) => (r.type === 'ObjectUpserted' ? r.data.id : ''))).toEqual(['o1', 'o2'])
      })

      it('records a key given twice in one append by its first record', async () => {
        const ds = freshDatasetId()
        const a = keyed(upsertRecord(ds, 'order', 'o1', { n: 1 }), 'k', 'same')
        const b = keyed(upsertRecord(ds, 'order', 'o1', { n: 1 }), 'k', 'same')
        const c = keyed(upsertRecord(ds, 'order', 'o1', { n: 2 }), 'k', 'other')
        const result = await log.append(ds, [a, b, c], [])
        expect(result.outcomes.map((o) => o.kind)).toEqual(['appended', 'duplicate', 'conflict'])
        expect(await log.readStream(ds, null, 10)).toHaveLength(1)
      })

      it('keeps keys apart per dataset', async () => {
        const [d1, d2] = [freshDatasetId(), freshDatasetId()]
        const r1 = await log.append(d1, [keyed(upsertRecord(d1, 'order', 'o1', {}), 'k', 'f')], [])
        const r2 = await log.append(d2, [keyed(upsertRecord(d2, 'order', 'o1', {}), 'k', 'f')], [])
        expect([r1.outcomes[0]?.kind, r2.outcomes[0]?.kind]).toEqual(['appended', 'appended'])
      })

      it('records one of two concurrent appends of one key, and answers the other as its duplicate', async () => {
        const ds = freshDatasetId()
        const results = await Promise.all([1, 2].map(() => log.append(ds, [keyed(upsertRecord(ds, 'order', 'o1', {}), 'k', 'f')], [])))
        expect(results.map((r) => r.outcomes[0]?.kind).sort()).toEqual(['appended', 'duplicate'])
        expect(await log.readStream(ds, null, 10)).toHaveLength(1)
      })
    })
  })
}
