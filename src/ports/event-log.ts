/**
 * Port: the append-only log (README § Architecture). One stream per dataset
 * (`dataset-<id>`), positions in one global order. Adapters: SQLite (embedded default),
 * EventStoreDB (production). Contract tests: test/contract/event-log.contract.ts.
 *
 * Reads (`readAll`, `readStream`, `tail`) return durable records only, as durable as an
 * acknowledged append: a projector never applies, and a replay never shows, a record that a crash
 * could still take from the log. SQLite: a read past what it knows to be on disk waits for an
 * fdatasync of the WAL (sqlite-event-log.ts). EventStoreDB: the adapter relies on the server, whose
 * readers follow its transaction file up to what the writer has flushed (not checked here, for want
 * of an engine).
 */
import type { NewRecord, StoredRecord } from '../schemas/records.js'

/**
 * What `append` did with one record (README § Exactly once): appended at `position`; or not
 * appended because its idempotency key is already recorded in the dataset with the same content
 * (`duplicate`, with the record first recorded) or with other content (`conflict`).
 */
export type AppendOutcome = { kind: 'appended'; position: number } | { kind: 'duplicate'; original: StoredRecord } | { kind: 'conflict'; key: string }

export interface AppendResult {
  /** Positions of the appended records, in the order given (duplicates and conflicts have none). */
  positions: number[]
  /** One per record given, in order. */
  outcomes: AppendOutcome[]
  /**
   * The object ids among `claims` that this append claimed first (the objects it created).
   * Claims are write-side identity claims for the `created` flag of object results
   * (docs/architecture.md#records-and-ids); an id already claimed is not in the set.
   */
  claimed: ReadonlySet<string>
}

/**
 * What a projection has still to apply: the records after its checkpoint up to a head (README §
 * Operations: lag). `records` is exact on SQLite at a cost that does not grow with the lag
 * (positions are dense row ids: a difference of positions); EventStoreDB counts by reading `$all`
 * (its positions are byte offsets) and stops at a bound, then `exact` is false and `records` is a
 * lower bound.
 */
export interface Backlog {
  /** Records of every dataset stream with `after` < position ≤ `upTo`. */
  records: number
  /** False when the engine stopped counting at a bound: then there are at least `records`. */
  exact: boolean
  /** Append time (UTC ISO 8601, ms) of the first of those records, the oldest not yet applied; null when there is none. */
  oldestAppendedAt: string | null
}

export interface TailOptions {
  /** Stop tailing when aborted; the iterator then returns. */
  signal: AbortSignal
  /**
   * Largest batch to yield (records), read again before each read of the log: a caller may change
   * it between batches (the projector asks for fewer records when they are costly).
   */
  maxBatch: number
}

export interface EventLog {
  /**
   * Appends `records` to the stream of `datasetId`, in order, and claims the object ids in `claims`.
   * A record with an idempotency key already recorded in the dataset is not appended (see
   * AppendOutcome; the rule is decideKey in src/core/idempotency.ts), and the check is exact under
   * concurrency: two appends of one key record it once. Only the claims of appended records are taken.
   * Resolves only once the records are durable (SQLite: committed, then its WAL fdatasynced;
   * EventStoreDB: every append acknowledged). Rejects with LogUnavailableError when the engine
   * cannot take the write; then no record of this call was acknowledged to the client. (When SQLite
   * committed but the WAL's fdatasync failed, the records may be in the log though the call
   * rejects: a retry with the same idempotency keys is then answered as a duplicate.)
   */
  append(datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult>

  /** Records of every dataset stream after `after` (exclusive; null = from the start), ascending, at most `maxCount`. */
  readAll(after: number | null, maxCount: number): Promise<StoredRecord[]>

  /** Records of one dataset's stream after `after` (exclusive; null = from the start), ascending, at most `maxCount`. */
  readStream(datasetId: string, after: number | null, maxCount: number): Promise<StoredRecord[]>

  /**
   * Follows the log from `after`: yields non-empty batches of records (ascending) as they are
   * appended, catching up first. Returns when `options.signal` aborts.
   */
  tail(after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]>

  /**
   * Position of the last record in the log (the head), or of the last record of `datasetId`'s
   * stream when given; null when there is none. For lag: a projection's lag is the records between
   * its checkpoint and the head.
   */
  lastPosition(datasetId?: string): Promise<number | null>

  /**
   * How many records (of every dataset) have `after` < position ≤ `upTo` (after null = from the
   * start), counting at most `max`: a projection's lag in records, whatever the positions' unit.
   */
  countBetween(after: number | null, upTo: number, max: number): Promise<number>

  /**
   * The records after `after` (exclusive; null = from the start) up to `upTo` (inclusive, e.g.
   * `lastPosition()`): how many, and when the first of them was appended (see Backlog). Reads no
   * more than a few index entries on SQLite, whatever the lag.
   */
  backlog(after: number | null, upTo: number): Promise<Backlog>

  close(): Promise<void>
}

/** The log engine could not take or serve the request (maps to 503); one of Ocelog's error union. */
export { LogUnavailableError } from '../core/errors.js'
