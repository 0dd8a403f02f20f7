/** `tail` of the EventStoreDB log (eventstore-event-log.ts): following the dataset streams live. */
import type { AllStreamResolvedEvent, EventStoreDBClient } from '@eventstore/db-client'
import { LogUnavailableError, type TailOptions } from '../../ports/event-log.js'
import type { StoredRecord } from '../../schemas/records.js'
import { readEvent, subscribeToDatasets } from './client-events.js'
import { toStoredRecord } from './record-codec.js'
import { messageOf } from '../../core/errors.js'

/**
 * Follows the dataset streams from `after` with one filtered catch-up subscription to `$all`.
 * Buffers at most 2 × maxBatch records (the subscription is paused beyond that; maxBatch as it is at
 * each arrival), yields what has arrived as one batch, and throws LogUnavailableError when the
 * subscription drops (the projector then resumes from its checkpoint).
 */
export async function* tailRecords(client: EventStoreDBClient, after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]> {
  // options.maxBatch is read at each use: the caller may change it between batches (TailOptions).
  const { signal } = options
  const queue: StoredRecord[] = []
  let failure: unknown
  let ended = false
  let wake: (() => void) | undefined
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  let cursor = after
  const subscription = subscribeToDatasets(client, after)
  subscription.on('data', (resolved: AllStreamResolvedEvent) => {
    try {
      const e = readEvent(resolved)
      if (e === null) return
      const record = toStoredRecord(e)
      if (cursor !== null && record.position <= cursor) return
      cursor = record.position
      queue.push(record)
      if (queue.length >= 2 * options.maxBatch) subscription.pause()
    } catch (error) {
      failure = error
    }
    notify()
  })
  subscription.on('error', (error: Error) => {
    failure = error
    notify()
  })
  subscription.on('end', () => {
    ended = true
    notify()
  })
  signal.addEventListener('abort', notify, { once: true })
  try {
    while (!signal.aborted) {
      if (queue.length === 0) {
        if (failure !== undefined) throw new LogUnavailableError(`subscription to $all failed: ${messageOf(failure)}`)
        if (ended) throw new LogUnavailableError('subscription to $all ended')
        await new Promise<void>((resolve) => {
          wake = resolve
        })
        // Let a burst of catch-up events gather into one batch.
        if (queue.length > 0 && queue.length < options.maxBatch) await new Promise((resolve) => setImmediate(resolve))
        continue
      }
      const batch = queue.splice(0, options.maxBatch)
      if (subscription.isPaused() && queue.length < options.maxBatch) subscription.resume()
      yield batch
    }
  } finally {
    signal.removeEventListener('abort', notify)
    await subscription.unsubscribe().catch(() => {})
  }
}
