/**
 * EventLog adapter on EventStoreDB (`@eventstore/db-client` 6.2.1; README § Architecture).
 *
 * - **Streams.** Dataset D's records are JSON events in the stream `dataset-D`: event type = record
 *   type (`EventRecorded` / `ObjectUpserted`), data = record data, metadata = {key_id, request_id,
 *   schema_version}.
 * - **Appends.** One `append` call is split into consecutive appends, each under EventStoreDB's
 *   1 MiB default `MaxAppendSize` (append-chunks.ts), written in order; the call resolves only after
 *   every append was acknowledged. The appends are not one transaction: if a later one fails, the
 *   earlier ones stay in the log while the caller gets LogUnavailableError (a 503, so the client
 *   retries the request and those records appear twice, with new ids). With the API's 512 KiB item
 *   limit and 100 items per batch, a request needs more than one append only above ~1 MiB of records.
 * - **Identity claims** (`created`) go to the KeyStore (MongoDB unique index) BEFORE the append.
 *   Claiming first can only under-report `created`: if the append then fails, the objects stay
 *   claimed, and the retried request reports `created: false` for objects it did create. Claiming
 *   after the append could double-report: an append that succeeded followed by a failed claim would
 *   be retried, appended again, and both answers could say `created: true`.
 * - **Positions** are `$all` commit positions (byte offsets in the transaction log, unique per event
 *   for the implicit transactions of gRPC appends), as numbers below 2^53.
 * - **Reads.** `readAll` and `tail` read `$all` through a catch-up subscription filtered server-side
 *   to the `dataset-` stream prefix (the 6.x client's `readAll` cannot filter). Reading and
 *   subscribing to `$all` needs an admin (or $ops) user: EVENTSTORE_URL carries its credentials,
 *   e.g. `esdb://admin:changeit@host:2113?tls=false`. `readAll` first reads the position of the last
 *   event in `$all` and stops once the subscription has passed it. `readStream` reads the dataset's stream.
 * - **Lag.** `backlog` and `countBetween` read `$all` with plain forward reads, no subscription:
 *   exact up to a bound, then a lower bound from a ruler built in the background (backlog.ts).
 *
 * One operation per file, laid out as the KurrentDB client lays out its own: append.ts,
 * read-all.ts, read-stream.ts, tail.ts, last-position.ts, backlog.ts (client-events.ts holds what
 * they share); this class keeps the state (the client, the claims, the revision cache).
 */
import type { EventStoreDBClient } from '@eventstore/db-client'
import type { AppendResult, Backlog, EventLog, TailOptions } from '../../ports/event-log.js'
import type { IdempotencyClaims } from '../../ports/idempotency-claims.js'
import type { ObjectClaims } from '../../ports/object-claims.js'
import type { NewRecord, StoredRecord } from '../../schemas/records.js'
import { type AppendContext, appendRecords } from './append.js'
import { DEFAULT_APPEND_BUDGET_BYTES } from './append-chunks.js'
import { allEntriesOf, BacklogCounter, countRecordsBetween, type ReadAllEntries } from './backlog.js'
import { lastRecordPosition } from './last-position.js'
import { readAllRecords } from './read-all.js'
import { type RevisionCache, readStreamRecords } from './read-stream.js'
import { tailRecords } from './tail.js'

export interface EventStoreEventLogOptions {
  /** Bytes one append may hold (default: 1 MiB minus 64 KiB headroom). */
  appendBudgetBytes?: number
  /** How long `readAll` waits without any progress before giving up, in ms (default 15000). */
  readIdleTimeoutMs?: number
  /** Deadline of each append, in ms (default 10000). */
  appendDeadlineMs?: number
}

export class EventStoreEventLog implements EventLog {
  private readonly idleMs: number
  private readonly appending: AppendContext
  private readonly revisions: RevisionCache = new Map()
  private readonly entries: ReadAllEntries
  private readonly backlogs: BacklogCounter

  /**
   * @param client a connected client (EVENTSTORE_URL); this log disposes of it on close.
   * @param objectClaims where object identity claims are made (MongoDB in production).
   * @param claims where idempotency keys are claimed (MongoDB in production); without it, records with keys are refused.
   */
  constructor(
    private readonly client: EventStoreDBClient,
    objectClaims: ObjectClaims,
    options: EventStoreEventLogOptions = {},
    claims?: IdempotencyClaims,
  ) {
    this.idleMs = options.readIdleTimeoutMs ?? 15_000
    this.appending = {
      client,
      objectClaims,
      claims,
      budget: options.appendBudgetBytes ?? DEFAULT_APPEND_BUDGET_BYTES,
      appendDeadlineMs: options.appendDeadlineMs ?? 10_000,
    }
    this.entries = allEntriesOf(client)
    this.backlogs = new BacklogCounter(this.entries, async (after) => (await this.readAll(after, 1))[0])
  }

  append(datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult> {
    return appendRecords(this.appending, datasetId, records, claims)
  }

  readAll(after: number | null, maxCount: number): Promise<StoredRecord[]> {
    return readAllRecords(this.client, after, maxCount, this.idleMs)
  }

  readStream(datasetId: string, after: number | null, maxCount: number): Promise<StoredRecord[]> {
    return readStreamRecords(this.client, this.revisions, datasetId, after, maxCount)
  }

  tail(after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]> {
    return tailRecords(this.client, after, options)
  }

  lastPosition(datasetId?: string): Promise<number | null> {
    return lastRecordPosition(this.client, datasetId)
  }

  countBetween(after: number | null, upTo: number, max: number): Promise<number> {
    return countRecordsBetween(this.entries, after, upTo, max)
  }

  backlog(after: number | null, upTo: number): Promise<Backlog> {
    return this.backlogs.backlog(after, upTo)
  }

  async close(): Promise<void> {
    await this.backlogs.stop()
    await this.client.dispose()
  }
}
