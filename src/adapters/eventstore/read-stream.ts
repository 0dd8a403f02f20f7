/** `readStream` of the EventStoreDB log (eventstore-event-log.ts): one dataset's stream by revision. */
import { type EventStoreDBClient, START, StreamNotFoundError } from '@eventstore/db-client'
import { LogUnavailableError } from '../../ports/event-log.js'
import { type StoredRecord, streamName } from '../../schemas/records.js'
import { readEvent } from './client-events.js'
import { toStoredRecord } from './record-codec.js'
import { messageOf } from '../../core/errors.js'
import { joinKey } from '../../core/keys.js'

/** Remembers, per stream, the revision of the last record a `readStream` page returned. */
const REVISION_CACHE_SIZE = 1024

/** The revision that follows each page's last record, by stream and position (at most REVISION_CACHE_SIZE, oldest dropped first). */
export type RevisionCache = Map<string, bigint>

/**
 * Reads `dataset-<id>` by revision. `after` is a global position: the revision that follows it is
 * remembered from the previous page (`revisions`); otherwise the stream is read from its start, skipping.
 * @throws LogUnavailableError when EventStoreDB fails (a missing stream reads as empty).
 */
export async function readStreamRecords(
  client: EventStoreDBClient,
  revisions: RevisionCache,
  datasetId: string,
  after: number | null,
  maxCount: number,
): Promise<StoredRecord[]> {
  const stream = streamName(datasetId)
  const cacheKey = (position: number) => joinKey(stream, position)
  const known = after === null ? undefined : revisions.get(cacheKey(after))
  const out: StoredRecord[] = []
  let lastRevision: bigint | undefined
  try {
    const read = client.readStream(stream, {
      fromRevision: known === undefined ? START : known + 1n,
      ...(after === null || known !== undefined ? { maxCount } : {}),
    })
    for await (const resolved of read) {
      const e = readEvent(resolved)
      if (e === null || resolved.event === undefined) continue
      const record = toStoredRecord(e)
      if (after !== null && record.position <= after) continue
      out.push(record)
      lastRevision = resolved.event.revision
      if (out.length >= maxCount) {
        await read.cancel()
        break
      }
    }
  } catch (error) {
    if (error instanceof StreamNotFoundError) return []
    throw new LogUnavailableError(`reading ${stream} failed: ${messageOf(error)}`)
  }
  const last = out[out.length - 1]
  if (last !== undefined && lastRevision !== undefined) {
    if (revisions.size >= REVISION_CACHE_SIZE) {
      const oldest = revisions.keys().next()
      if (oldest.done !== true) revisions.delete(oldest.value)
    }
    revisions.set(cacheKey(last.position), lastRevision)
  }
  return out
}
