/**
 * `countBetween` and `backlog` of the EventStoreDB log (eventstore-event-log.ts): a projection's lag
 * (README § Operations: lag), read without subscriptions.
 *
 * EventStoreDB positions are byte offsets in its transaction file, so no difference of two
 * positions counts records, and the 6.x client has no count of `$all`. Each `/metrics` scrape asks
 * every projection's backlog, so the cost of one answer is bounded:
 * - **exact when small:** `$all` is read forwards (plain reads, no subscription) from the
 *   checkpoint, at most EXACT_SCAN_EVENTS events of any stream; when the head is within them, the
 *   count of dataset records is exact, and so is the oldest one's append time (when those events
 *   hold no record at all, the oldest record comes from one filtered read, `readAll(after, 1)`);
 * - **a lower bound past that:** a ruler of `$all`, the position of every RULER_STEP-th dataset
 *   record, built in the background from the start of `$all` by reads of at most
 *   RULER_REFRESH_EVENTS events, one at a time, each started by a backlog asked past what the
 *   ruler has read. With `c` marks in (after, upTo], at least (c − 1) · RULER_STEP + 1 records are
 *   there; the answer is the larger of that and what the scan counted, with `exact: false`.
 * The ruler lives in memory: after a restart it is built again, and until it has read up to a
 * checkpoint the lower bound of a long backlog is only what the scan counted.
 */
import { type EventStoreDBClient, FORWARDS } from '@eventstore/db-client'
import type { Backlog } from '../../ports/event-log.js'
import { LogUnavailableError } from '../../ports/event-log.js'
import { STREAM_PREFIX, type StoredRecord } from '../../schemas/records.js'
import { readPosition } from './client-events.js'
import { positionToNumber } from './record-codec.js'
import { messageOf } from '../../core/errors.js'

/** Events of `$all` (any stream) one backlog reads to count exactly, at most. */
export const EXACT_SCAN_EVENTS = 2000

/** The ruler keeps the position of every RULER_STEP-th dataset record of `$all`. */
export const RULER_STEP = 1000

/** Events of `$all` one background extension of the ruler reads, at most. */
export const RULER_REFRESH_EVENTS = 100_000

/** Events of `$all` one plain read asks for. */
const PAGE = 1000

/** One event of `$all` as the count needs it. */
export interface AllEntry {
  /** Its commit position (a log position). */
  position: number
  /** Whether it is in a `dataset-` stream (a record); system and foreign events are not. */
  dataset: boolean
  /** Its creation time, UTC ISO 8601. */
  appendedAt: string
}

/** Up to `maxCount` events of `$all` after `after` (exclusive; null = from the start), ascending. */
export type ReadAllEntries = (after: number | null, maxCount: number) => Promise<AllEntry[]>

/** The first dataset record after `after` (EventLog.readAll with maxCount 1): the fallback when the scan found none. */
export type ReadFirstRecord = (after: number | null) => Promise<StoredRecord | undefined>

/**
 * ReadAllEntries on a client: plain forward reads of `$all` (the read starts at `after` itself,
 * which it skips; it needs the admin or $ops user that reading `$all` always needs).
 * @throws LogUnavailableError when EventStoreDB fails.
 */
export function allEntriesOf(client: EventStoreDBClient): ReadAllEntries {
  return async (after, maxCount) => {
    const out: AllEntry[] = []
    try {
      const read = client.readAll({ fromPosition: readPosition(after), direction: FORWARDS, maxCount: maxCount + (after === null ? 0 : 1) })
      for await (const resolved of read) {
        const e = resolved.event
        if (e === undefined) continue
        const position = positionToNumber(e.position.commit)
        if (after !== null && position <= after) continue
        out.push({ position, dataset: e.streamId.startsWith(STREAM_PREFIX), appendedAt: e.created.toISOString() })
      }
    } catch (error) {
      throw new LogUnavailableError(`reading $all forwards failed: ${messageOf(error)}`)
    }
    return out.slice(0, maxCount)
  }
}

/**
 * Counts the dataset records with `after` < position ≤ `upTo`, reading `$all` forwards in pages,
 * at most `max` records (EventLog.countBetween).
 */
export async function countRecordsBetween(read: ReadAllEntries, after: number | null, upTo: number, max: number): Promise<number> {
  let cursor = after
  let n = 0
  while (n < max) {
    const page = await read(cursor, PAGE)
    for (const e of page) {
      if (e.position > upTo) return n
      if (e.dataset) n += 1
      if (n >= max) return n
    }
    const last = page[page.length - 1]
    if (last === undefined || page.length < PAGE) return n
    cursor = last.position
  }
  return n
}

/** The index of the first of ascending `marks` above `position`. */
function firstAbove(marks: readonly number[], position: number): number {
  let lo = 0
  let hi = marks.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((marks[mid] ?? 0) <= position) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** EventLog.backlog on EventStoreDB: see this file's header for what is exact and what is a lower bound. */
export class BacklogCounter {
  /** Positions of the RULER_STEP-th, 2·RULER_STEP-th, … dataset records of `$all`, ascending. */
  private readonly marks: number[] = []
  /** The last `$all` position the ruler has read (null: none yet). */
  private scannedTo: number | null = null
  /** Dataset records read since the last mark. */
  private sinceMark = 0
  private extending: Promise<void> | null = null
  private stopped = false
  /** The last failure of a background extension (retried by the next backlog), for logs and tests. */
  lastError: unknown = null

  constructor(
    private readonly read: ReadAllEntries,
    private readonly readFirst: ReadFirstRecord,
  ) {}

  /**
   * The records with `after` < position ≤ `upTo` (see Backlog): exact when the scan reaches
   * `upTo`, else a lower bound. Starts extending the ruler in the background when `upTo` is past it.
   * @throws LogUnavailableError when EventStoreDB fails.
   */
  async backlog(after: number | null, upTo: number): Promise<Backlog> {
    let cursor = after
    let scanned = 0
    let counted = 0
    let oldest: string | null = null
    let reached = false
    while (!reached && scanned < EXACT_SCAN_EVENTS) {
      const want = Math.min(PAGE, EXACT_SCAN_EVENTS - scanned)
      const page = await this.read(cursor, want)
      for (const e of page) {
        if (e.position > upTo) {
          reached = true
          break
        }
        scanned += 1
        if (!e.dataset) continue
        counted += 1
        oldest ??= e.appendedAt
      }
      const last = page[page.length - 1]
      if (last === undefined || page.length < want) reached = true
      else cursor = last.position
    }
    this.extendRuler(upTo)
    if (reached) return { records: counted, exact: true, oldestAppendedAt: oldest }
    // Only events of other streams within the scan: the first record comes from a filtered read.
    if (oldest === null) {
      const first = await this.readFirst(after)
      if (first === undefined || first.position > upTo) return { records: 0, exact: true, oldestAppendedAt: null }
      oldest = first.appendedAt
    }
    return { records: Math.max(counted, this.rulerBound(after, upTo), 1), exact: false, oldestAppendedAt: oldest }
  }

  /** At least how many records the ruler proves in (after, upTo]: (c − 1) · RULER_STEP + 1 for c marks there, 0 for none. */
  rulerBound(after: number | null, upTo: number): number {
    const from = after === null ? 0 : firstAbove(this.marks, after)
    const marks = firstAbove(this.marks, upTo) - from
    return marks <= 0 ? 0 : (marks - 1) * RULER_STEP + 1
  }

  /** Resolves when no extension of the ruler is running (for tests). */
  async idle(): Promise<void> {
    await this.extending
  }

  /** Stops extending the ruler: a running extension ends after its current page (at most one read); resolves then. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.extending
  }

  /** Starts one background extension of the ruler towards `upTo`, unless one runs or the ruler is there. */
  private extendRuler(upTo: number): void {
    if (this.stopped || this.extending !== null || (this.scannedTo !== null && this.scannedTo >= upTo)) return
    this.extending = this.extend(upTo)
      .then(() => {
        this.lastError = null
      })
      .catch((error: unknown) => {
        this.lastError = error
      })
      .finally(() => {
        this.extending = null
      })
  }

  private async extend(upTo: number): Promise<void> {
    let read = 0
    while (read < RULER_REFRESH_EVENTS && !this.stopped) {
      const page = await this.read(this.scannedTo, Math.min(PAGE, RULER_REFRESH_EVENTS - read))
      for (const e of page) {
        read += 1
        this.scannedTo = e.position
        if (!e.dataset) continue
        this.sinceMark += 1
        if (this.sinceMark === RULER_STEP) {
          this.marks.push(e.position)
          this.sinceMark = 0
        }
      }
      if (page.length < PAGE || (this.scannedTo !== null && this.scannedTo >= upTo)) return
    }
  }
}
