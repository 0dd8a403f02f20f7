/** `countBetween` and `backlog` of the EventStoreDB log (eventstore-event-log.ts): a projection's lag. */
import type { Backlog } from '../../ports/event-log.js'
import type { StoredRecord } from '../../schemas/records.js'

/** `backlog` counts records by reading `$all` up to this many, then reports a lower bound. */
export const BACKLOG_COUNT_MAX = 100_000

/** Reads the dataset records after a position (EventLog.readAll). */
export type ReadAll = (after: number | null, maxCount: number) => Promise<StoredRecord[]>

/** Counts by reading `$all` forwards in pages (positions are byte offsets here, not record numbers). */
export async function countRecordsBetween(readAll: ReadAll, after: number | null, upTo: number, max: number): Promise<number> {
  let cursor = after
  let n = 0
  while (n < max) {
    const want = Math.min(1000, max - n)
    const page = await readAll(cursor, want)
    for (const r of page) {
      if (r.position > upTo) return n
      n += 1
    }
    const last = page[page.length - 1]
    if (last === undefined || page.length < want) return n
    cursor = last.position
  }
  return n
}

/**
 * The oldest record after `after` is one read of `$all`. The count reads `$all` forwards up to
 * BACKLOG_COUNT_MAX records: positions here are byte offsets, so no difference of them counts
 * records, and the 6.x client has no count of `$all`; past the bound `exact` is false.
 */
export async function backlogOf(readAll: ReadAll, after: number | null, upTo: number): Promise<Backlog> {
  const [first] = await readAll(after, 1)
  if (first === undefined || first.position > upTo) return { records: 0, exact: true, oldestAppendedAt: null }
  const records = await countRecordsBetween(readAll, after, upTo, BACKLOG_COUNT_MAX)
  return { records, exact: records < BACKLOG_COUNT_MAX, oldestAppendedAt: first.appendedAt }
}
