/**
 * Types of the Ocelog client: its options, hooks and results. Request and response shapes are the
 * contract's TypeBox types (./contract/schemas.ts, shared with the service), imported as types only,
 * so the client loads no schema at run time.
 */
import type { OcelogQueueError } from './errors.js'
import type { EventInput, ItemErrorDetail, ObjectUpsertInput } from './api.js'
import type { RetryCause, RetryPolicy } from './retry.js'

export type { RetryCause, RetryPolicy } from './retry.js'

/** A request is about to be sent again. Delays in milliseconds. */
export interface RetryNotice {
  cause: RetryCause
  /** e.g. `/v1/event/batch` */
  path: string
  /** The attempt that failed, 1-based. 429 waits and other failures are counted separately. */
  attempt: number
  /** How long the client waits before the next attempt. */
  delayMs: number
  /** Items in the request that is retried (1 for single-item endpoints and health). */
  items: number
  /** HTTP status of the failed attempt; null for network errors and timeouts. */
  status: number | null
  message: string
}

/** One batch request settled (accepted items, failed items, or both). */
export interface BatchNotice {
  path: string
  items: number
  accepted: number
  failed: number
  /** HTTP requests this batch took, retries and splits included. */
  requests: number
  durationMs: number
}

export interface OcelogClientOptions {
  /** Base URL of the service, e.g. `http://localhost:8080` (a path prefix is kept; /v1/… is appended). */
  baseUrl: string
  /** The API key; sent as `Authorization: Bearer <key>`. */
  apiKey: string
  /** Most HTTP requests in flight at once, over all calls of this client (default 4). */
  concurrency?: number
  /** Retry bounds; missing fields take the defaults of DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>
  /**
   * Time limit of one HTTP request in ms (default 120 000). A request that times out is retried
   * with the same idempotency keys, so items it had recorded are answered as first recorded.
   */
  timeoutMs?: number
  /** Called before every retry and every Retry-After wait. */
  onRetry?: (notice: RetryNotice) => void
  /**
   * A fetch to send requests with instead of the default transport (Node's http/https with a
   * keep-alive agent of `concurrency` connections; see transport.ts): a test double, or a fetch with
   * a proxy dispatcher. Redirects are then what that fetch does with them.
   */
  fetch?: typeof fetch
  /** The random source of the back-off jitter (default Math.random). */
  random?: () => number
  /** Value of the User-Agent header (default `ocelog-client`). */
  userAgent?: string
  /**
   * Gzip request bodies larger than `compressMinBytes`, sent with `Content-Encoding: gzip`
   * (RFC 9110 § 8.4). Default true: the Ocelog service accepts gzip, deflate and br request bodies;
   * turn it off for a proxy in between that does not pass compressed bodies on.
   */
  compress?: boolean
  /** Smallest JSON body, in bytes of UTF-8, that `compress` gzips (default 65 536 = 64 KiB). */
  compressMinBytes?: number
  /**
   * Queue and flush (enqueueEvent, enqueueObject): a queue batch is sent as soon as this many items
   * are queued, without waiting for the timer (1–100, default 100).
   */
  flushAt?: number
  /** Queue and flush: the background timer sends whatever is queued at least this often, in ms (default 1000). */
  flushIntervalMs?: number
  /** Queue and flush: most items waiting in the queue, the batch in flight not counted (default 10 000). */
  maxQueueSize?: number
  /**
   * Queue and flush, when the queue is full: `block` (default) makes the promise of enqueueEvent /
   * enqueueObject wait for room, so a loop that awaits it loses nothing; `drop` discards the item at
   * once, counts it in `stats().dropped` and reports it to `onError` with kind `dropped`.
   */
  whenFull?: 'block' | 'drop'
  /**
   * Queue and flush: called once for every enqueued item that was not recorded (rejected, retries
   * exhausted, dropped, …). Default: one line on stderr. An exception thrown here is ignored.
   */
  onError?: (error: OcelogQueueError) => void
}

/** One item of the queue: what enqueueEvent or enqueueObject was given. */
export type QueuedItem = { type: 'event'; item: EventInput } | { type: 'object'; item: ObjectUpsertInput }

/** Counters of one client since it was made. */
export interface ClientStats {
  /** Items enqueueEvent / enqueueObject took (dropped ones excluded), including any still waiting for room. */
  enqueued: number
  /** Items waiting in the queue or for room in it, not yet sent. */
  queued: number
  /** Queued items the service has: recorded by this send, or already recorded under their idempotency keys (`duplicates` included). */
  recorded: number
  /**
   * Of the `recorded` items, those the service had already recorded under their idempotency keys and answered as first recorded
   * (the batch answers' `duplicates`, docs/api.md#idempotency-keys), e.g. a backlog sent again after a crash; `recorded - duplicates`
   * items are new in the log.
   */
  duplicates: number
  /** Queued items that were sent and not recorded (each reported to onError). */
  failed: number
  /** Items discarded because the queue was full (`whenFull: 'drop'`). */
  dropped: number
  /** HTTP requests of every call of the client, retries and splits included. */
  requests: number
  /** Requests sent again after a 429, a network error, a timeout or a 5xx. */
  retries: number
  /** 429 answers the client got; each is waited out for its Retry-After (up to `retry.maxRateLimitWaits` per request). */
  rateLimited: number
}

/** Options of one bulk call (sendEvents, upsertObjects). */
export interface BulkOptions {
  /** Called after each batch request settles. */
  onBatch?: (notice: BatchNotice) => void
  /**
   * Stops the call: no new request is started after the signal fires, waits end at once, and
   * requests in flight finish (their items may already be recorded). Items not sent are reported
   * as failures of kind `aborted`.
   */
  signal?: AbortSignal
}

/**
 * Why an item was not recorded.
 * - `rejected`: the service rejected the item itself (a validation failure in a 200 batch body,
 *   or a 4xx problem answer to a single-item request). Sending it again cannot succeed.
 * - `request-rejected`: the whole request was answered with a permanent error (400, 401, 403,
 *   413 for a single item, 415, …).
 * - `retries-exhausted`: network errors, timeouts, 5xx or 429 outlasted the retry policy.
 * - `aborted`: never sent, because the call was aborted (signal) or an earlier request showed
 *   that the key cannot write (401/403).
 * - `protocol`: the answer could not be read (not JSON, or not accounting for the item); the item
 *   may or may not be recorded, so it is not sent again.
 */
export type FailureKind = 'rejected' | 'request-rejected' | 'retries-exhausted' | 'aborted' | 'protocol'

/** Why a queued item was not recorded: a FailureKind, or `dropped` when the queue was full (`whenFull: 'drop'`). */
export type QueueFailureKind = FailureKind | 'dropped'

/** One item that was not recorded: the item, its index in the caller's array, and why. */
export interface ItemFailure<T> {
  /** 0-based index in the array passed to the call. */
  index: number
  item: T
  kind: FailureKind
  /** One human-readable line, e.g. the service's `Event 3: /timestamp: is not a valid ISO 8601 …`. */
  reason: string
  /** HTTP status that decided the failure; null for network errors and never-sent items. */
  status: number | null
  /** Field errors (`path` is a JSON pointer inside the item), when the service named them. */
  errors: Pick<ItemErrorDetail, 'path' | 'message'>[]
}

/** An accepted item: its index in the caller's array and what the service answered for it. */
export interface Accepted<R> {
  index: number
  value: R
}

/** Result of sendEvents (R = event_id) and upsertObjects (R = the object result). */
export interface BulkResult<T, R> {
  /** Accepted items in input order. */
  accepted: Accepted<R>[]
  /** Of the accepted items, those the service had already recorded under their idempotency keys (answered as first recorded). */
  duplicates: number
  /** Items not recorded, in input order. */
  failures: ItemFailure<T>[]
  /** HTTP requests made, retries and splits included. */
  requests: number
  /** Requests sent again after a retryable failure (429, network, timeout, 5xx). */
  retries: number
  /** Set when the call stopped early: the reason (401/403 answer, or the abort signal). */
  aborted: string | null
}
