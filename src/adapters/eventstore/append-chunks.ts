/**
 * Pure helpers of the EventStoreDB log adapter: how a record becomes a proposed EventStoreDB event,
 * how big the server will count it, and how one `append` call is split into consecutive appends
 * that each stay under EventStoreDB's `MaxAppendSize` (1 MiB by default).
 * No I/O here, so the split is unit-tested without an engine (test/unit/eventstore-chunks.test.ts).
 */
import { AppendTooLargeError } from '../../core/errors.js'
import type { NewRecord, RecordType } from '../../schemas/records.js'
import { chunkByWeight } from '../../core/chunk.js'

/** EventStoreDB's default `MaxAppendSize`, in bytes: one append larger than this is refused whole. */
export const EVENTSTORE_MAX_APPEND_SIZE = 1024 * 1024

/**
 * Bytes kept free below `MaxAppendSize` in every append. Servers count an event as its data, its
 * metadata and (since 24.x) twice its type name; older ones count the data alone. The headroom
 * covers our per-event estimate of whatever else a server version might add.
 */
export const APPEND_HEADROOM_BYTES = 64 * 1024

/** Bytes added to every event's measured size for its id, content type and protobuf framing. */
export const EVENT_OVERHEAD_BYTES = 256

/** The default budget of one append, in bytes: 1 MiB minus the headroom (983,040 bytes). */
export const DEFAULT_APPEND_BUDGET_BYTES = EVENTSTORE_MAX_APPEND_SIZE - APPEND_HEADROOM_BYTES

/** The custom metadata of every Ocelog event in EventStoreDB (docs/architecture.md#records-and-ids). */
export interface RecordMetadata {
  key_id: string
  request_id: string
  /** The record type's version (`EventRecorded` v1 → 1). */
  schema_version: number
  /** The item's idempotency key and fingerprint, when it had a key (README § Exactly once). */
  idempotency_key?: string
  fingerprint?: string
}

/** One record as EventStoreDB will store it: event type = record type, JSON data and metadata. */
export interface ProposedEvent {
  /** EventStoreDB event id (a UUID): the `event_id` of an EventRecorded, a random UUID otherwise. */
  id: string
  type: RecordType
  data: NewRecord['data']
  metadata: RecordMetadata
  /** Estimated bytes this event counts against `MaxAppendSize` (see `proposedEventSize`). */
  size: number
}

/**
 * Estimated size of one event against EventStoreDB's append limit, in bytes: UTF-8 bytes of the
 * JSON data and metadata (as the client serialises them, `JSON.stringify`), twice the type name,
 * plus EVENT_OVERHEAD_BYTES.
 */
export function proposedEventSize(type: string, data: unknown, metadata: RecordMetadata): number {
  return (
    Buffer.byteLength(JSON.stringify(data), 'utf8') +
    Buffer.byteLength(JSON.stringify(metadata), 'utf8') +
    2 * Buffer.byteLength(type, 'utf8') +
    EVENT_OVERHEAD_BYTES
  )
}

/**
 * Turns a record into the event to append: type = record type, data = record data, metadata =
 * {key_id, request_id, schema_version}. `newId` supplies ids for records that carry none (object upserts).
 */
export function toProposedEvent(record: NewRecord, newId: () => string): ProposedEvent {
  const metadata: RecordMetadata = { key_id: record.data.key_id, request_id: record.data.request_id, schema_version: record.version }
  if (record.idempotency !== undefined) {
    metadata.idempotency_key = record.idempotency.key
    metadata.fingerprint = record.idempotency.fingerprint
  }
  const id = record.type === 'EventRecorded' ? record.data.event_id : newId()
  return { id, type: record.type, data: record.data, metadata, size: proposedEventSize(record.type, record.data, metadata) }
}

/** A single item is larger than one append may be: it can never be appended. */
export { AppendTooLargeError }

/**
 * Splits `items` into consecutive chunks, in order, each with a total `sizeOf` of at most
 * `budgetBytes` (a chunk may reach the budget exactly). Greedy: a chunk is closed when the next
 * item would overflow it, so every chunk but the last is as full as the order allows.
 * @param budgetBytes bytes one chunk may hold (default: DEFAULT_APPEND_BUDGET_BYTES).
 * @returns non-empty chunks whose concatenation is `items`; [] for no items.
 * @throws AppendTooLargeError when one item alone is larger than the budget.
 */
export function splitIntoAppends<T>(items: readonly T[], sizeOf: (item: T) => number, budgetBytes = DEFAULT_APPEND_BUDGET_BYTES): T[][] {
  const sized = items.map((item, index) => {
    const size = sizeOf(item)
    if (size > budgetBytes) {
      throw new AppendTooLargeError(`item ${String(index)} is ${String(size)} bytes; one append may hold at most ${String(budgetBytes)}`)
    }
    return { item, size }
  })
  return chunkByWeight(sized, (s) => s.size, budgetBytes).map((chunk) => chunk.map((s) => s.item))
}
