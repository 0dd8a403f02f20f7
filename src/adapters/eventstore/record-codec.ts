/**
 * Pure reading of EventStoreDB events back into log records: what the EventStoreDB log adapter
 * does with every event it reads (engine fields to an EncodedRecord, then the one record decoder),
 * unit-tested without an engine.
 */
import { decodeRecord } from '../../core/record-decoder.js'
import type { StoredRecord } from '../../schemas/records.js'

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

/** The metadata's own field `name`, or undefined when the metadata is not a JSON object. */
function metadataField(metadata: unknown, name: string): unknown {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || metadata instanceof Uint8Array) return undefined
  return Object.getOwnPropertyDescriptor(metadata, name)?.value
}

/**
 * Turns one event of a `dataset-<id>` stream into a StoredRecord by the one decoder
 * (src/core/record-decoder.ts): position = commit position, type = event type, version = the
 * metadata's `schema_version`, appendedAt = the event's creation time, idempotency = the
 * metadata's `idempotency_key` and `fingerprint` when present.
 * @throws UnreadableRecordError when the stream is not a dataset stream, or the type, schema
 *   version or data is not a record this build can read (skipping it would silently corrupt the read models).
 */
export function toStoredRecord(event: ReadEvent): StoredRecord {
  const record = decodeRecord({
    position: positionToNumber(event.commitPosition),
    stream: event.streamId,
    type: event.type,
    version: metadataField(event.metadata, 'schema_version'),
    data: event.data,
    appendedAt: event.created.toISOString(),
  })
  const key = metadataField(event.metadata, 'idempotency_key')
  const fingerprint = metadataField(event.metadata, 'fingerprint')
  if (typeof key === 'string' && typeof fingerprint === 'string') record.idempotency = { key, fingerprint }
  return record
}
