/**
 * What every operation of the EventStoreDB log adapter shares (eventstore-event-log.ts): reading a
 * client event into a ReadEvent, the `$all` read position after a log position, and the catch-up
 * subscription to `$all` filtered server-side to the `dataset-` streams.
 */
import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  type Position,
  type ReadPosition,
  type ResolvedEvent,
  START,
  streamNameFilter,
} from '@eventstore/db-client'
import { STREAM_PREFIX } from '../../schemas/records.js'
import type { ReadEvent } from './record-codec.js'

/** The `$all` position to read from after log position `after` (null: the start). */
export function readPosition(after: number | null): ReadPosition {
  return after === null ? START : { commit: BigInt(after), prepare: BigInt(after) }
}

/**
 * A resolved client event as a ReadEvent; null for a link to a deleted event.
 * @throws Error when the event has no commit position (EventStoreDB older than 22.6).
 */
export function readEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): ReadEvent | null {
  const e = resolved.event
  if (e === undefined) return null
  const commit = e.position?.commit ?? resolved.commitPosition
  if (commit === undefined) throw new Error(`log: event ${e.id} in ${e.streamId} has no commit position (EventStoreDB older than 22.6?)`)
  return { streamId: e.streamId, type: e.type, data: e.data, metadata: e.metadata, commitPosition: commit, created: e.created }
}

/**
 * A catch-up subscription to `$all` from `after`, filtered server-side to the `dataset-` prefix.
 * @param onCheckpoint called with the filter's checkpoints: positions up to which `$all` was scanned.
 */
export function subscribeToDatasets(client: EventStoreDBClient, after: number | null, onCheckpoint?: (position: Position) => void): AllStreamSubscription {
  const filter =
    onCheckpoint === undefined
      ? streamNameFilter({ prefixes: [STREAM_PREFIX] })
      : streamNameFilter({ prefixes: [STREAM_PREFIX], checkpointInterval: 1, checkpointReached: (_subscription, position) => onCheckpoint(position) })
  return client.subscribeToAll({ fromPosition: readPosition(after), filter })
}
