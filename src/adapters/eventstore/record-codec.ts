/**
 * Pure decoding of EventStoreDB events back into log records (README § Architecture: records): what the
 * EventStoreDB log adapter does with every event it reads, unit-tested without an engine.
 */
import { Compile } from 'typebox/compile'
import { EventRecordedV1, ObjectUpsertedV1, STREAM_PREFIX, type StoredRecord } from '../../schemas/records.js'

const checkEventRecorded = Compile(EventRecordedV1)
const checkObjectUpserted = Compile(ObjectUpsertedV1)

/** An event as read from EventStoreDB, reduced to what a record needs. */
export interface ReadEvent {
  streamId: string
  type: string
  /** Parsed JSON data (the client parses JSON events). */
  data: unknown
  /** Parsed JSON metadata, raw bytes when it was not JSON, or undefined. */
  metadata: unknown
  /** The event's commit position in `$all`. */
  commitPosition: bigint
  created: Date
}

/**
 * Converts an EventStoreDB commit position to a log position (StoredRecord.position).
 * @throws RangeError above Number.MAX_SAFE_INTEGER (2^53 − 1 bytes of transaction log: 8 PiB).
 */
export function positionToNumber(commit: bigint): number {
  if (commit < 0n || commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`EventStoreDB commit position ${commit.toString()} is outside 0…2^53−1; Ocelog positions are JavaScript numbers`)
  }
  return Number(commit)
}

function schemaVersion(metadata: unknown): unknown {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || metadata instanceof Uint8Array) return undefined
  return Object.getOwnPropertyDescriptor(metadata, 'schema_version')?.value
}

/**
 * Turns one event of a `dataset-<id>` stream into a StoredRecord: position = commit position,
 * datasetId = stream name minus `dataset-`, appendedAt = the event's creation time.
 * @throws Error when the stream is not a dataset stream, or the type, schema version or data is
 *   not a record this build can read (skipping it would silently corrupt the read models).
 */
export function toStoredRecord(event: ReadEvent): StoredRecord {
  if (!event.streamId.startsWith(STREAM_PREFIX)) throw new Error(`log: event in stream ${event.streamId} is not in a dataset stream`)
  const base = {
    position: positionToNumber(event.commitPosition),
    stream: event.streamId,
    datasetId: event.streamId.slice(STREAM_PREFIX.length),
    appendedAt: event.created.toISOString(),
  }
  const version = schemaVersion(event.metadata)
  if (event.type === 'EventRecorded' && version === 1 && checkEventRecorded.Check(event.data)) {
    return { ...base, type: 'EventRecorded', version: 1, data: event.data }
  }
  if (event.type === 'ObjectUpserted' && version === 1 && checkObjectUpserted.Check(event.data)) {
    return { ...base, type: 'ObjectUpserted', version: 1, data: event.data }
  }
  throw new Error(
    `log: event at position ${event.commitPosition.toString()} in ${event.streamId} is not a readable record (type ${event.type}, schema_version ${String(version)})`,
  )
}
