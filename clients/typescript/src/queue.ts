/**
 * Queue and flush, for live senders (the mode of Segment's, PostHog's and Amplitude's SDKs): the
 * application enqueues events and object upserts and goes on; the queue sends them in batches of at
 * most `batchMax` items of one type, one batch at a time and in enqueue order, when `flushAt` items
 * wait, when the background timer fires (every `flushIntervalMs`), on flush() and on close().
 *
 * Each batch goes through the client's bulk calls (sendEvents, upsertObjects), so it gets their
 * retries: a 429 is waited out for its Retry-After, network errors and 5xx back off with jitter, a
 * 413 splits the batch (docs/api.md#errors, #batches). Items that are still not recorded go
 * to `onError`, one OcelogQueueError each. One batch in flight at a time keeps the log's arrival
 * order equal to the enqueue order (an object's merges apply in the order they were enqueued).
 *
 * The timer is unref'd, so it never keeps the process alive by itself; when the event loop empties
 * with items still queued (Node's `beforeExit`), the queue flushes them. `process.exit()` and signals
 * skip that: call close() first.
 */
import { messageOf, OcelogQueueError } from './errors.js'
import type { EventInput, ObjectResult, ObjectUpsertInput } from './api.js'
import type { BulkResult, ClientStats, QueuedItem } from './types.js'

/** The bulk calls a queue sends its batches with (the client's sendEvents and upsertObjects). */
export interface QueueSender {
  events(items: EventInput[]): Promise<BulkResult<EventInput, string>>
  objects(items: ObjectUpsertInput[]): Promise<BulkResult<ObjectUpsertInput, ObjectResult>>
}

/** The queue's settings, defaults already applied (see OcelogClientOptions for their meaning). */
export interface QueueSettings {
  batchMax: number
  flushAt: number
  flushIntervalMs: number
  maxQueueSize: number
  whenFull: 'block' | 'drop'
  onError: (error: OcelogQueueError) => void
}

/** A queued item and its place in the enqueue order (1, 2, …). */
interface Entry {
  seq: number
  queued: QueuedItem
}

/** An item that waits for room in a full queue (`whenFull: 'block'`). */
interface Blocked {
  entry: Entry
  admit: (queued: boolean) => void
}

/** A flush() that waits until every item up to `through` is answered. */
interface FlushWaiter {
  through: number
  done: () => void
}

/** The queue's own counters: the part of ClientStats it knows. */
export type QueueCounts = Pick<ClientStats, 'enqueued' | 'queued' | 'recorded' | 'duplicates' | 'failed' | 'dropped'>

/** How a queued item is named in messages: `event "place order"`, `object order/o-1001`. */
function label(queued: QueuedItem): string {
  return queued.type === 'event' ? `event "${queued.item.event}"` : `object ${queued.item.type}/${queued.item.id}`
}

/** The client's queue: one per OcelogClient, made by its constructor (see the module comment). */
export class SendQueue {
  /** Items waiting to be sent, in enqueue order. */
  private readonly items: Entry[] = []
  /** Items waiting for room in `items`, in enqueue order. */
  private readonly blocked: Blocked[] = []
  private readonly flushWaiters: FlushWaiter[] = []
  /** The last seq given out: every item enqueued so far has seq ≤ lastSeq. */
  private lastSeq = 0
  /** Every item with seq ≤ settledThrough has been answered (batches settle in enqueue order). */
  private settledThrough = 0
  /** Items with seq ≤ flushThrough are sent without waiting for `flushAt` (set by the timer and flush()). */
  private flushThrough = 0
  private sending = false
  private closed = false
  private closing: Promise<void> | null = null
  private timer: ReturnType<typeof setInterval> | null = null
  private recorded = 0
  private duplicates = 0
  private failed = 0
  private dropped = 0
  private readonly beforeExit = () => {
    if (this.settledThrough < this.lastSeq) void this.flush()
  }

  constructor(
    private readonly sender: QueueSender,
    private readonly settings: QueueSettings,
  ) {}

  /**
   * Puts one item on the queue; it is sent later, in a batch.
   * @returns a promise of true once the item is queued, or of false when it was dropped (queue full,
   *   `whenFull: 'drop'`). With `whenFull: 'block'` it waits for room while the queue is full.
   * @throws (rejects with) OcelogQueueError of kind `aborted` after close().
   */
  enqueue(queued: QueuedItem): Promise<boolean> {
    if (this.closed) return Promise.reject(new OcelogQueueError(`${label(queued)} not queued: the client is closed`, 'aborted', null, [], queued))
    this.start()
    if (this.blocked.length === 0 && this.items.length < this.settings.maxQueueSize) {
      this.lastSeq += 1
      this.items.push({ seq: this.lastSeq, queued })
      this.pump()
      return Promise.resolve(true)
    }
    if (this.settings.whenFull === 'drop') {
      this.dropped += 1
      this.report(
        new OcelogQueueError(`${label(queued)} dropped: the queue is full (${String(this.settings.maxQueueSize)} items)`, 'dropped', null, [], queued),
      )
      return Promise.resolve(false)
    }
    this.lastSeq += 1
    const entry = { seq: this.lastSeq, queued }
    return new Promise((admit) => {
      this.blocked.push({ entry, admit })
      this.pump()
    })
  }

  /**
   * Sends everything enqueued so far, whatever `flushAt` says.
   * @returns a promise that resolves when every item enqueued before the call has been answered:
   *   recorded, or reported to onError. It never rejects.
   */
  flush(): Promise<void> {
    const through = this.lastSeq
    if (this.settledThrough >= through) return Promise.resolve()
    this.flushThrough = Math.max(this.flushThrough, through)
    return new Promise((done) => {
      this.flushWaiters.push({ through, done })
      this.pump()
    })
  }

  /** Flushes, then stops the timer; later enqueues reject. Calling it again returns the same promise. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true
      await this.flush()
      if (this.timer !== null) clearInterval(this.timer)
      this.timer = null
      process.off('beforeExit', this.beforeExit)
    })()
    return this.closing
  }

  /** The queue's counters now (see ClientStats). */
  counts(): QueueCounts {
    return {
      enqueued: this.lastSeq,
      queued: this.items.length + this.blocked.length,
      recorded: this.recorded,
      duplicates: this.duplicates,
      failed: this.failed,
      dropped: this.dropped,
    }
  }

  /** Starts the timer and the exit hook with the first enqueue, so a client that never queues has neither. */
  private start(): void {
    if (this.timer !== null) return
    this.timer = setInterval(() => {
      this.flushThrough = Math.max(this.flushThrough, this.lastSeq)
      this.pump()
    }, this.settings.flushIntervalMs)
    this.timer.unref()
    process.on('beforeExit', this.beforeExit)
  }

  /** Starts the next batch when none is in flight and one is due. */
  private pump(): void {
    if (this.sending) return
    const head = this.items[0]
    if (head === undefined) return
    const due = head.seq <= this.flushThrough || this.blocked.length > 0 || this.items.length >= Math.min(this.settings.flushAt, this.settings.maxQueueSize)
    if (!due) return
    let n = 1
    while (n < this.items.length && n < this.settings.batchMax && this.items[n]?.queued.type === head.queued.type) n += 1
    const batch = this.items.splice(0, n)
    this.admitBlocked()
    this.sending = true
    void this.send(batch).then(() => {
      this.sending = false
      this.settledThrough = batch[batch.length - 1]?.seq ?? this.settledThrough
      this.resolveFlushes()
      this.pump()
    })
  }

  private admitBlocked(): void {
    while (this.items.length < this.settings.maxQueueSize) {
      const next = this.blocked.shift()
      if (next === undefined) return
      this.items.push(next.entry)
      next.admit(true)
    }
  }

  private resolveFlushes(): void {
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      const w = this.flushWaiters[i]
      if (w !== undefined && w.through <= this.settledThrough) {
        this.flushWaiters.splice(i, 1)
        w.done()
      }
    }
  }

  /** Sends one batch of items of one type and accounts for each item. Never rejects. */
  private async send(batch: Entry[]): Promise<void> {
    try {
      const result = await this.sendBulk(batch)
      this.recorded += result.accepted
      this.duplicates += result.duplicates
      for (const f of result.failures) {
        const entry = batch[f.index]
        if (entry === undefined) continue
        this.failed += 1
        // The bulk call numbers items within this batch, which means nothing to the caller: name the item instead.
        const reason = f.reason.replace(/^(Event|Object) \d+: /, '')
        this.report(new OcelogQueueError(`${label(entry.queued)} not recorded (${f.kind}): ${reason}`, f.kind, f.status, f.errors, entry.queued))
      }
    } catch (error) {
      // The bulk calls account for every item in their result; an exception here is a bug, reported as one.
      const message = messageOf(error)
      for (const entry of batch) {
        this.failed += 1
        this.report(new OcelogQueueError(`${label(entry.queued)} not recorded: client error: ${message}`, 'protocol', null, [], entry.queued))
      }
    }
  }

  /** The batch through the bulk call of its type: how many items were recorded, how many of those were duplicates, and the failures by batch index. */
  private async sendBulk(batch: Entry[]): Promise<{ accepted: number; duplicates: number; failures: BulkResult<unknown, unknown>['failures'] }> {
    if (batch[0]?.queued.type === 'object') {
      const r = await this.sender.objects(batch.flatMap((e) => (e.queued.type === 'object' ? [e.queued.item] : [])))
      return { accepted: r.accepted.length, duplicates: r.duplicates, failures: r.failures }
    }
    const r = await this.sender.events(batch.flatMap((e) => (e.queued.type === 'event' ? [e.queued.item] : [])))
    return { accepted: r.accepted.length, duplicates: r.duplicates, failures: r.failures }
  }

  private report(error: OcelogQueueError): void {
    try {
      this.settings.onError(error)
    } catch {
      // A throwing callback must not stop the queue; the item is already counted.
    }
  }
}
