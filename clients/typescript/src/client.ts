/**
 * OcelogClient: the Node.js / TypeScript client of the ingestion API (docs/clients.md#typescript),
 * which handles authentication, batching and retries. It wraps the five
 * /v1 endpoints and adds no behaviour beyond the HTTP contract:
 * - authentication: `Authorization: Bearer <key>` on every request;
 * - batching: sendEvents / upsertObjects take any number of items and send batches of at most 100
 *   (docs/api.md#limits), with at most `concurrency` requests in flight over the whole client;
 * - retries (docs/api.md#errors, docs/api.md#batches): a 429 is waited out for its Retry-After seconds, and
 *   all requests of the client pause with it, since the budget is per key; network errors,
 *   timeouts and 5xx are retried with exponential back-off and jitter, a bounded number of times.
 *   A whole-request failure means none of its items was recorded, so the same items are sent again;
 *   item failures inside a 200 batch answer are validation failures and permanent, so they are
 *   reported, never re-sent; accepted items are never sent again. A 413 splits the batch in two.
 *   A 401/403 stops the call: no other request with that key would do better.
 * - queue and flush (enqueueEvent, enqueueObject, flush, close): see queue.ts;
 * - compression (option `compress`): request bodies of at least `compressMinBytes` are gzipped and
 *   sent with `Content-Encoding: gzip` (RFC 9110 § 8.4.1.3).
 *
 * Exactly once: every item is sent with an idempotency key (the caller's, or a UUIDv7 made once,
 * before the first attempt: withIdempotencyKey), so when a response is lost after the service
 * recorded the request (a dropped connection, a timeout), the retry is answered as first recorded
 * and records nothing twice (docs/api.md#idempotency-keys).
 *
 * Transport: Node's http/https modules with a keep-alive agent (transport.ts), or the `fetch` option.
 */
import { v7 as uuidv7 } from 'uuid'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import type { EventInput, EventResponse, HealthResponse, ObjectResult, ObjectUpsertInput, ObjectUpsertResponse, TypesInput, TypesResponse } from './api.js'
import { messageOf, OcelogRequestError } from './errors.js'
import { Semaphore, sleep } from './limit.js'
import { SendQueue } from './queue.js'
import { fetchTransport, nodeTransport, type Transport } from './transport.js'
import { describeAnswer, isObjectResult, isRecord, problemFieldErrors, readBatchAnswer } from './response.js'
import { backoffDelayMs, classifyStatus, DEFAULT_RETRY_POLICY, parseRetryAfterMs, type RetryCause, type RetryPolicy } from './retry.js'
import type { BatchNotice, BulkOptions, BulkResult, ClientStats, ItemFailure, OcelogClientOptions, RetryNotice } from './types.js'

/** Events per event batch and objects per object batch (docs/api.md#limits). */
export const BATCH_MAX = 100
const DEFAULT_CONCURRENCY = 4
const DEFAULT_TIMEOUT_MS = 120_000
const DEFAULT_COMPRESS_MIN_BYTES = 64 * 1024
const DEFAULT_FLUSH_INTERVAL_MS = 1000
const DEFAULT_MAX_QUEUE_SIZE = 10_000

const gzipAsync = promisify(gzip)

/** A request body as sent: JSON text, or its gzip. */
type Payload = { data: string; encoding: null } | { data: Buffer; encoding: 'gzip' }

/** One HTTP exchange: an answer, or no answer at all. */
type Exchange =
  | { kind: 'answer'; status: number; retryAfter: string | null; body: unknown; text: string }
  | { kind: 'no-answer'; cause: 'network' | 'timeout'; message: string }

/** How a request ended after its retries. */
type Settled =
  | { kind: 'answer'; status: number; body: unknown; text: string }
  | { kind: 'exhausted'; status: number | null; message: string }
  | { kind: 'aborted'; message: string }

interface Counters {
  requests: number
  retries: number
}

/** A whole number in [min, max], or a RangeError naming the option. */
function wholeIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be a whole number from ${String(min)} to ${String(max)}, got ${String(value)}`)
  return value
}

interface BatchEndpoint<T, R> {
  path: string
  envelope(items: readonly T[]): unknown
  valuesField: 'event_ids' | 'objects'
  isValue(v: unknown): v is R
}

const EVENTS: BatchEndpoint<EventInput, string> = {
  path: '/v1/event/batch',
  envelope: (events) => ({ events }),
  valuesField: 'event_ids',
  isValue: (v): v is string => typeof v === 'string',
}

const OBJECTS: BatchEndpoint<ObjectUpsertInput, ObjectResult> = {
  path: '/v1/object/batch',
  envelope: (objects) => ({ objects }),
  valuesField: 'objects',
  isValue: isObjectResult,
}

interface Indexed<T> {
  index: number
  item: T
}

/** Shared state of one bulk call. */
interface BulkRun<T, R> {
  result: BulkResult<T, R>
  options: BulkOptions
}

function notSent<T>(
  items: readonly Indexed<T>[],
  kind: ItemFailure<T>['kind'],
  reason: string,
  status: number | null,
  errors: ItemFailure<T>['errors'] = [],
): ItemFailure<T>[] {
  return items.map(({ index, item }) => ({ index, item, kind, reason, status, errors }))
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/**
 * The item with an idempotency key: the caller's, or a new UUIDv7 (RFC 9562). The key is set once,
 * before the first attempt, so every retry of the item sends the same key and the service records
 * it once (docs/api.md#idempotency-keys). A failure's `item` carries the key, to re-send it later unchanged.
 */
export function withIdempotencyKey<T extends { idempotency_key?: string }>(item: T): T {
  return item.idempotency_key === undefined ? { ...item, idempotency_key: uuidv7() } : item
}

export class OcelogClient {
  private readonly baseUrl: string
  private readonly apiKey: string
  private readonly policy: RetryPolicy
  private readonly timeoutMs: number
  private readonly requests: Semaphore
  private readonly concurrency: number
  private readonly transport: Transport
  private readonly random: () => number
  private readonly userAgent: string
  private readonly onRetry: ((notice: RetryNotice) => void) | undefined
  private readonly compress: boolean
  private readonly compressMinBytes: number
  private readonly queue: SendQueue
  /** Epoch ms until which no request starts: set by a 429's Retry-After, for the whole client. */
  private pausedUntil = 0
  /** Counters over every call of the client (see ClientStats). */
  private readonly totals = { requests: 0, retries: 0, rateLimited: 0 }

  /**
   * @throws RangeError for a baseUrl that is not an http(s) URL, an empty key, concurrency < 1,
   *   flushAt outside 1–100, a flushIntervalMs or maxQueueSize < 1, or a negative compressMinBytes.
   */
  constructor(options: OcelogClientOptions) {
    let url: URL
    try {
      url = new URL(options.baseUrl)
    } catch {
      throw new RangeError(`baseUrl "${options.baseUrl}" is not a URL (e.g. http://localhost:8080)`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RangeError(`baseUrl "${options.baseUrl}" must be http:// or https://`)
    if (options.apiKey.trim() === '') throw new RangeError('apiKey is empty')
    this.baseUrl = url.href.replace(/\/+$/, '')
    this.apiKey = options.apiKey.trim()
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry }
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
    this.requests = new Semaphore(this.concurrency)
    this.transport = options.fetch === undefined ? nodeTransport(this.concurrency) : fetchTransport(options.fetch)
    this.random = options.random ?? Math.random
    this.userAgent = options.userAgent ?? 'ocelog-client'
    this.onRetry = options.onRetry
    this.compress = options.compress ?? true
    this.compressMinBytes = wholeIn('compressMinBytes', options.compressMinBytes ?? DEFAULT_COMPRESS_MIN_BYTES, 0, Number.MAX_SAFE_INTEGER)
    this.queue = new SendQueue(
      { events: (items) => this.sendEvents(items), objects: (items) => this.upsertObjects(items) },
      {
        batchMax: BATCH_MAX,
        flushAt: wholeIn('flushAt', options.flushAt ?? BATCH_MAX, 1, BATCH_MAX),
        flushIntervalMs: wholeIn('flushIntervalMs', options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS, 1, 2 ** 31 - 1),
        maxQueueSize: wholeIn('maxQueueSize', options.maxQueueSize ?? DEFAULT_MAX_QUEUE_SIZE, 1, Number.MAX_SAFE_INTEGER),
        whenFull: options.whenFull ?? 'block',
        onError: options.onError ?? ((error) => console.error(`ocelog client: ${error.message}`)),
      },
    )
  }

  /**
   * GET /v1/health: checks reachability and that the key is valid (docs/api.md#endpoints).
   * @returns the key's dataset, name and scopes.
   * @throws OcelogRequestError (401 for a key that is not accepted; retries-exhausted when unreachable).
   */
  async health(): Promise<HealthResponse> {
    const body = await this.single('GET', '/v1/health', undefined)
    if (!isRecord(body) || body.status !== 'ok' || typeof body.dataset_id !== 'string' || !Array.isArray(body.scopes)) {
      throw new OcelogRequestError('GET /v1/health: the answer is not a health response', 'protocol', 200)
    }
    return {
      status: 'ok',
      dataset_id: body.dataset_id,
      dataset_name: typeof body.dataset_name === 'string' ? body.dataset_name : '',
      key_id: typeof body.key_id === 'string' ? body.key_id : '',
      key_name: typeof body.key_name === 'string' ? body.key_name : '',
      scopes: body.scopes.filter((s): s is string => typeof s === 'string'),
    }
  }

  /**
   * POST /v1/event: records one event (docs/api.md#endpoints), with the retries described above.
   * @throws OcelogRequestError: `rejected` with the field errors for a 422, `request-rejected`,
   *   `retries-exhausted` or `protocol` otherwise.
   */
  async sendEvent(event: EventInput): Promise<EventResponse> {
    const body = await this.single('POST', '/v1/event', withIdempotencyKey(event))
    if (!isRecord(body) || typeof body.event_id !== 'string' || typeof body.timestamp !== 'string') {
      throw new OcelogRequestError('POST /v1/event: the answer is not an event response', 'protocol', 200)
    }
    return {
      success: body.success === true,
      event_id: body.event_id,
      event_type: typeof body.event_type === 'string' ? body.event_type : event.event,
      timestamp: body.timestamp,
      objects_count: typeof body.objects_count === 'number' ? body.objects_count : event.objects.length,
      message: typeof body.message === 'string' ? body.message : '',
    }
  }

  /**
   * POST /v1/object/upsert: creates or merges one object (docs/api.md#endpoints).
   * @throws OcelogRequestError as sendEvent.
   */
  async upsertObject(object: ObjectUpsertInput): Promise<ObjectUpsertResponse> {
    const body = await this.single('POST', '/v1/object/upsert', withIdempotencyKey(object))
    if (!isObjectResult(body)) throw new OcelogRequestError('POST /v1/object/upsert: the answer is not an object result', 'protocol', 200)
    return { success: true, object_id: body.object_id, object_type: body.object_type, external_id: body.external_id, created: body.created }
  }

  /**
   * POST /v1/types (Ocelog extension, docs/api.md#declared-types): declares event and object types
   * with their attributes, used or not, with the retries described above (its idempotency key as for
   * sendEvent).
   * @returns how many types of each kind the request declared, and whether it was a duplicate.
   * @throws OcelogRequestError as sendEvent.
   */
  async declareTypes(types: TypesInput): Promise<TypesResponse> {
    const body = await this.single('POST', '/v1/types', withIdempotencyKey(types))
    if (!isRecord(body) || typeof body.event_types !== 'number' || typeof body.object_types !== 'number') {
      throw new OcelogRequestError('POST /v1/types: the answer is not a types response', 'protocol', 200)
    }
    return { success: body.success === true, event_types: body.event_types, object_types: body.object_types, duplicate: body.duplicate === true }
  }

  /**
   * Records any number of events through POST /v1/event/batch, in batches of at most 100 sent in
   * input order with up to `concurrency` in flight (docs/api.md#batches). Never throws for an
   * item: every input index ends up in `accepted` (with its event_id) or in `failures`.
   */
  async sendEvents(events: readonly EventInput[], options: BulkOptions = {}): Promise<BulkResult<EventInput, string>> {
    return this.bulk(EVENTS, events.map(withIdempotencyKey), options)
  }

  /**
   * Creates or merges any number of objects through POST /v1/object/batch, in batches of at most
   * 100 (docs/api.md#batches). Never throws for an item, as sendEvents.
   * Note: batches run concurrently, so when one object appears twice in `objects` and the two fall
   * into different batches, their merge order is not fixed; send such updates in separate calls.
   */
  async upsertObjects(objects: readonly ObjectUpsertInput[], options: BulkOptions = {}): Promise<BulkResult<ObjectUpsertInput, ObjectResult>> {
    return this.bulk(OBJECTS, objects.map(withIdempotencyKey), options)
  }

  /**
   * Queues one event for POST /v1/event/batch (same input as sendEvent); the background timer,
   * `flushAt`, flush() or close() sends it. Failures go to `onError`, never to this promise.
   * @returns a promise of true once queued (with `whenFull: 'block'` it waits while the queue is
   *   full), or of false when the full queue dropped it (`whenFull: 'drop'`).
   * @throws (rejects with) OcelogQueueError of kind `aborted` after close().
   */
  enqueueEvent(event: EventInput): Promise<boolean> {
    return this.queue.enqueue({ type: 'event', item: withIdempotencyKey(event) })
  }

  /** Queues one object upsert for POST /v1/object/batch (same input as upsertObject), as enqueueEvent. */
  enqueueObject(object: ObjectUpsertInput): Promise<boolean> {
    return this.queue.enqueue({ type: 'object', item: withIdempotencyKey(object) })
  }

  /**
   * Sends everything enqueued so far.
   * @returns a promise that resolves when every item enqueued before the call is answered (recorded,
   *   or reported to onError); it never rejects.
   */
  flush(): Promise<void> {
    return this.queue.flush()
  }

  /** Flushes the queue, then stops its timer; enqueueing after close() rejects. Direct calls still work. */
  close(): Promise<void> {
    return this.queue.close()
  }

  /** Counters since the client was made: the queue's items, and HTTP requests, retries and 429s of every call. */
  stats(): ClientStats {
    return { ...this.queue.counts(), ...this.totals }
  }

  private url(path: string): string {
    return `${this.baseUrl}${path}`
  }

  /** The body as sent: JSON, gzipped when `compress` is on and it has at least `compressMinBytes` bytes. */
  private async encode(body: unknown): Promise<Payload | undefined> {
    if (body === undefined) return undefined
    const text = JSON.stringify(body)
    if (!this.compress || Buffer.byteLength(text) < this.compressMinBytes) return { data: text, encoding: null }
    return { data: await gzipAsync(text), encoding: 'gzip' }
  }

  /** One HTTP request once the client is not paused, holding one of the `concurrency` permits. */
  private async exchange(method: 'GET' | 'POST', path: string, body: Payload | undefined, signal: AbortSignal | undefined): Promise<Exchange> {
    for (let wait = this.pausedUntil - Date.now(); wait > 0; wait = this.pausedUntil - Date.now()) {
      if (!(await sleep(wait, signal))) return { kind: 'no-answer', cause: 'network', message: 'aborted' }
    }
    const release = await this.requests.acquire()
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json', 'user-agent': this.userAgent }
      if (body !== undefined) headers['content-type'] = 'application/json'
      if (body?.encoding === 'gzip') headers['content-encoding'] = 'gzip'
      const answer = await this.transport({
        method,
        url: this.url(path),
        headers,
        ...(body === undefined ? {} : { body: body.data }),
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      const text = answer.text
      let parsed: unknown
      try {
        parsed = text === '' ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { kind: 'answer', status: answer.status, retryAfter: answer.retryAfter, body: parsed, text }
    } catch (error) {
      const timeout = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
      return {
        kind: 'no-answer',
        cause: timeout ? 'timeout' : 'network',
        message: timeout ? `no answer within ${String(this.timeoutMs)} ms` : `${messageOf(error)}${cause}`,
      }
    } finally {
      release()
    }
  }

  /** Sends one request until it gets a non-retryable answer or the retry policy gives up. */
  private async settle(method: 'GET' | 'POST', path: string, body: unknown, items: number, counters: Counters, signal?: AbortSignal): Promise<Settled> {
    let failures = 0
    let waits = 0
    const payload = await this.encode(body)
    for (;;) {
      if (aborted(signal)) return { kind: 'aborted', message: 'aborted before it was sent' }
      const x = await this.exchange(method, path, payload, signal)
      if (x.kind === 'no-answer' && aborted(signal)) return { kind: 'aborted', message: 'aborted before it was sent' }
      counters.requests += 1
      this.totals.requests += 1
      let cause: RetryCause
      let delayMs: number
      let attempt: number
      let status: number | null = null
      let message: string
      if (x.kind === 'no-answer') {
        failures += 1
        cause = x.cause
        message = x.message
        attempt = failures
        if (failures >= this.policy.maxAttempts) return { kind: 'exhausted', status: null, message: `${message} (after ${String(failures)} attempts)` }
        delayMs = backoffDelayMs(failures, this.policy, this.random)
      } else {
        const cls = classifyStatus(x.status)
        status = x.status
        message = describeAnswer(x.status, x.body, x.text)
        if (cls === 'rate-limited') {
          this.totals.rateLimited += 1
          waits += 1
          cause = 'rate-limited'
          attempt = waits
          if (waits > this.policy.maxRateLimitWaits) return { kind: 'exhausted', status, message: `${message} (after ${String(waits)} waits)` }
          const retryAfter = parseRetryAfterMs(x.retryAfter, Date.now())
          delayMs = retryAfter ?? backoffDelayMs(waits, this.policy, this.random)
          // The budget is per key: every request of this client waits, not only this one.
          this.pausedUntil = Math.max(this.pausedUntil, Date.now() + delayMs)
        } else if (cls === 'server-error') {
          failures += 1
          cause = 'server-error'
          attempt = failures
          if (failures >= this.policy.maxAttempts) return { kind: 'exhausted', status, message: `${message} (after ${String(failures)} attempts)` }
          delayMs = backoffDelayMs(failures, this.policy, this.random)
        } else {
          return { kind: 'answer', status: x.status, body: x.body, text: x.text }
        }
      }
      counters.retries += 1
      this.totals.retries += 1
      this.onRetry?.({ cause, path, attempt, delayMs, items, status, message })
      if (!(await sleep(delayMs, signal))) return { kind: 'aborted', message: `aborted while waiting to retry (${message})` }
    }
  }

  /** A single-item request: the 2xx body, or an OcelogRequestError. */
  private async single(method: 'GET' | 'POST', path: string, body: unknown): Promise<unknown> {
    const s = await this.settle(method, path, body, 1, { requests: 0, retries: 0 })
    if (s.kind === 'aborted') throw new OcelogRequestError(`${method} ${path}: ${s.message}`, 'aborted', null)
    if (s.kind === 'exhausted') throw new OcelogRequestError(`${method} ${path}: ${s.message}`, 'retries-exhausted', s.status)
    const cls = classifyStatus(s.status)
    if (cls === 'ok') return s.body
    const kind = s.status === 422 || s.status === 413 ? 'rejected' : 'request-rejected'
    throw new OcelogRequestError(`${method} ${path}: ${describeAnswer(s.status, s.body, s.text)}`, kind, s.status, problemFieldErrors(s.body))
  }

  private async bulk<T, R>(endpoint: BatchEndpoint<T, R>, items: readonly T[], options: BulkOptions): Promise<BulkResult<T, R>> {
    const run: BulkRun<T, R> = { result: { accepted: [], duplicates: 0, failures: [], requests: 0, retries: 0, aborted: null }, options }
    const batches: Indexed<T>[][] = []
    for (let start = 0; start < items.length; start += BATCH_MAX) {
      batches.push(items.slice(start, start + BATCH_MAX).map((item, i) => ({ index: start + i, item })))
    }
    let next = 0
    const worker = async () => {
      for (let batch = batches[next++]; batch !== undefined; batch = batches[next++]) {
        const stop = run.result.aborted ?? (aborted(options.signal) ? 'aborted by the caller' : null)
        if (stop !== null) {
          run.result.aborted = stop
          run.result.failures.push(...notSent(batch, 'aborted', `not sent: ${stop}`, null))
          continue
        }
        const started = Date.now()
        const counters: Counters = { requests: 0, retries: 0 }
        const before = { accepted: run.result.accepted.length, failed: run.result.failures.length }
        await this.sendBatch(endpoint, batch, run, counters)
        run.result.requests += counters.requests
        run.result.retries += counters.retries
        options.onBatch?.({
          path: endpoint.path,
          items: batch.length,
          accepted: run.result.accepted.length - before.accepted,
          failed: run.result.failures.length - before.failed,
          requests: counters.requests,
          durationMs: Date.now() - started,
        } satisfies BatchNotice)
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.concurrency, batches.length) }, worker))
    run.result.accepted.sort((a, b) => a.index - b.index)
    run.result.failures.sort((a, b) => a.index - b.index)
    return run.result
  }

  /** One batch of at most 100 items, with retries; a 413 splits it in two halves sent one after the other. */
  private async sendBatch<T, R>(endpoint: BatchEndpoint<T, R>, batch: readonly Indexed<T>[], run: BulkRun<T, R>, counters: Counters): Promise<void> {
    const { result, options } = run
    const s = await this.settle('POST', endpoint.path, endpoint.envelope(batch.map((b) => b.item)), batch.length, counters, options.signal)
    if (s.kind === 'aborted') {
      result.aborted ??= 'aborted by the caller'
      result.failures.push(...notSent(batch, 'aborted', `not sent: ${s.message}`, null))
      return
    }
    if (s.kind === 'exhausted') {
      result.failures.push(...notSent(batch, 'retries-exhausted', s.message, s.status))
      return
    }
    const cls = classifyStatus(s.status)
    const described = describeAnswer(s.status, s.body, s.text)
    if (cls === 'ok') {
      const reading = readBatchAnswer(s.body, batch.length, endpoint.valuesField, endpoint.isValue)
      if (reading === null) {
        result.failures.push(
          ...notSent(batch, 'protocol', `${endpoint.path}: the 200 answer does not account for the items sent; they may or may not be recorded`, s.status),
        )
        return
      }
      result.duplicates += reading.duplicates
      for (const a of reading.accepted) {
        const sent = batch[a.position]
        if (sent !== undefined) result.accepted.push({ index: sent.index, value: a.value })
      }
      for (const f of reading.failed) {
        const sent = batch[f.position]
        if (sent === undefined) continue
        // The service numbers items within the request; name them by the caller's index instead.
        const reason = f.reason.replace(/^(Event|Object) \d+:/, (_, label: string) => `${label} ${String(sent.index)}:`)
        result.failures.push({ index: sent.index, item: sent.item, kind: 'rejected', reason, status: s.status, errors: f.errors })
      }
      return
    }
    if (cls === 'too-large' && batch.length > 1) {
      const half = Math.ceil(batch.length / 2)
      await this.sendBatch(endpoint, batch.slice(0, half), run, counters)
      await this.sendBatch(endpoint, batch.slice(half), run, counters)
      return
    }
    if (cls === 'fatal') result.aborted ??= described
    result.failures.push(...notSent(batch, 'request-rejected', described, s.status, problemFieldErrors(s.body)))
  }
}
