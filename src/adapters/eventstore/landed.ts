/**
 * The exact duplicate check of a resumed append (append.ts; README § Exactly once). A record whose
 * idempotency key was claimed but never committed is resumed under the event id it was claimed
 * with. Whether that event already landed cannot be left to EventStoreDB: under `expectedRevision:
 * any` its check of a re-appended event id is best effort (a cache of recent ids), so the event
 * could be written twice. Instead the stream is read backwards from its end for those event ids,
 * down to the oldest claim's time less CLOCK_SKEW_MS: an event appended after its claim was made
 * cannot be older than that. A claim without its time (made before claims kept one) is looked for
 * down to the start of the stream.
 *
 * What it cannot see: an append still in flight. A second request with the same key, made while
 * the first one's append has not landed yet, finds nothing and appends again under the same event
 * id; only EventStoreDB's check of recent event ids then drops the second copy.
 */
import { BACKWARDS, END, type EventStoreDBClient, StreamNotFoundError } from '@eventstore/db-client'
import { positionToNumber } from './record-codec.js'

/**
 * How far apart the clocks of Ocelog (which stamps a claim's `claimedAt`) and of EventStoreDB
 * (which stamps an event's `created`) may be, in ms, for the backward read to stop soon enough.
 */
export const CLOCK_SKEW_MS = 5 * 60_000

/** An event of a stream, read backwards, as the check needs it. */
export interface TailEvent {
  id: string
  /** Its commit position (the record's log position). */
  position: number
  created: Date
}

/**
 * Reads `tail` (a stream from its end backwards) until every id in `ids` is found or an event is
 * older than `since` (null: to the start of the stream).
 * @returns the position of each id found; an id not in it did not land.
 */
export async function findLanded(tail: AsyncIterable<TailEvent>, ids: ReadonlySet<string>, since: Date | null): Promise<Map<string, number>> {
  const found = new Map<string, number>()
  if (ids.size === 0) return found
  for await (const e of tail) {
    if (since !== null && e.created.getTime() < since.getTime()) break
    if (ids.has(e.id)) found.set(e.id, e.position)
    if (found.size === ids.size) break
  }
  return found
}

/**
 * Where the backward read may stop for claims made at `claimedAt` (UTC ISO 8601, undefined when a
 * claim has no time): the oldest of them less CLOCK_SKEW_MS, or null to read the whole stream.
 */
export function searchSince(claimedAt: readonly (string | undefined)[]): Date | null {
  let oldest = Number.POSITIVE_INFINITY
  for (const at of claimedAt) {
    const t = at === undefined ? Number.NaN : Date.parse(at)
    if (Number.isNaN(t)) return null
    oldest = Math.min(oldest, t)
  }
  return Number.isFinite(oldest) ? new Date(oldest - CLOCK_SKEW_MS) : null
}

/** The events of `stream` from its end backwards (none when it does not exist); stopping early cancels the read. */
export async function* streamTail(client: Pick<EventStoreDBClient, 'readStream'>, stream: string): AsyncIterable<TailEvent> {
  const read = client.readStream(stream, { fromRevision: END, direction: BACKWARDS, requiresLeader: true })
  try {
    for await (const resolved of read) {
      const e = resolved.event
      if (e === undefined) continue
      const commit = e.position?.commit ?? resolved.commitPosition
      if (commit === undefined) throw new Error(`log: event ${e.id} in ${e.streamId} has no commit position (EventStoreDB older than 22.6?)`)
      yield { id: e.id, position: positionToNumber(commit), created: e.created }
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error
  } finally {
    await read.cancel().catch(() => {})
  }
}
