/** `readAll` of the EventStoreDB log (eventstore-event-log.ts): the dataset streams through `$all`. */
import { type AllStreamResolvedEvent, BACKWARDS, END, type EventStoreDBClient } from '@eventstore/db-client'
import { LogUnavailableError } from '../../ports/event-log.js'
import type { StoredRecord } from '../../schemas/records.js'
import { readEvent, subscribeToDatasets } from './client-events.js'
import { toStoredRecord } from './record-codec.js'
import { messageOf } from '../../core/errors.js'

/**
 * Reads the dataset streams through `$all` from `after` (exclusive), at most `maxCount` records:
 * a catch-up subscription filtered server-side to `dataset-`. It stops at `maxCount`, or once it
 * has passed the end of `$all` as it was when the read began (the last event's position, read
 * first): at an event or a filter checkpoint at or past that end, or at the server's "caught up"
 * (EventStoreDB ≥ 23.10), whichever comes first.
 * @param idleMs how long to wait without any progress before giving up, in ms.
 * @throws LogUnavailableError when EventStoreDB fails or sends nothing for `idleMs`.
 */
export async function readAllRecords(client: EventStoreDBClient, after: number | null, maxCount: number, idleMs: number): Promise<StoredRecord[]> {
  let end: bigint | undefined
  try {
    for await (const resolved of client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 })) {
      end = resolved.event?.position.commit ?? resolved.commitPosition
    }
  } catch (error) {
    throw new LogUnavailableError(`reading the end of $all failed: ${messageOf(error)}`)
  }
  if (end === undefined || (after !== null && BigInt(after) >= end)) return []
  const last = end
  return new Promise<StoredRecord[]>((resolve, reject) => {
    const out: StoredRecord[] = []
    let done = false
    let idle: NodeJS.Timeout | undefined
    const finish = (error?: unknown) => {
      if (done) return
      done = true
      clearTimeout(idle)
      subscription.unsubscribe().catch(() => {})
      if (error === undefined) resolve(out)
      else reject(error instanceof LogUnavailableError ? error : new LogUnavailableError(`reading $all failed: ${messageOf(error)}`))
    }
    // An end signal can overtake events still buffered in the stream: let them flow first.
    const finishSoon = () => setImmediate(() => finish())
    const subscription = subscribeToDatasets(client, after, (position) => {
      if (position.commit >= last) finishSoon()
    })
    const armIdle = () => {
      clearTimeout(idle)
      idle = setTimeout(
        () => finish(new LogUnavailableError(`reading $all: EventStoreDB sent nothing for ${String(idleMs)} ms before the end of $all`)),
        idleMs,
      )
    }
    armIdle()
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      if (done) return
      try {
        const e = readEvent(resolved)
        if (e === null) return
        armIdle()
        const record = toStoredRecord(e)
        if (after !== null && record.position <= after) return
        out.push(record)
        if (out.length >= maxCount) finish()
        else if (e.commitPosition >= last) finishSoon()
      } catch (error) {
        finish(error)
      }
    })
    subscription.on('caughtUp', finishSoon)
    subscription.on('error', (error: Error) => finish(error))
    subscription.on('end', () => finish())
  })
}
