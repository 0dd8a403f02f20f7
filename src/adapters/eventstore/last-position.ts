/** `lastPosition` of the EventStoreDB log (eventstore-event-log.ts): the head of `$all` or of one dataset. */
import { BACKWARDS, END, type EventStoreDBClient, StreamNotFoundError } from '@eventstore/db-client'
import { LogUnavailableError } from '../../ports/event-log.js'
import { STREAM_PREFIX, streamName } from '../../schemas/records.js'
import { readEvent } from './client-events.js'
import { toStoredRecord } from './record-codec.js'
import { messageOf } from '../../core/errors.js'

/**
 * The position of the last dataset record in `$all`, or of the last record of `datasetId`'s
 * stream; null when there is none.
 * @throws LogUnavailableError when EventStoreDB fails.
 */
export async function lastRecordPosition(client: EventStoreDBClient, datasetId?: string): Promise<number | null> {
  try {
    // The 6.x client's readAll cannot filter: read $all backwards to the last dataset record.
    const read =
      datasetId === undefined
        ? client.readAll({ fromPosition: END, direction: BACKWARDS })
        : client.readStream(streamName(datasetId), { fromRevision: END, direction: BACKWARDS, maxCount: 1 })
    for await (const resolved of read) {
      const e = readEvent(resolved)
      if (e === null || !e.streamId.startsWith(STREAM_PREFIX)) continue
      await read.cancel()
      return toStoredRecord(e).position
    }
    return null
  } catch (error) {
    if (error instanceof StreamNotFoundError) return null
    throw new LogUnavailableError(`reading the last position failed: ${messageOf(error)}`)
  }
}
