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
 */
import { randomUUID } from 'node:crypto'
import {
  ANY,
  BACKWARDS,
  END,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  type Position,
  jsonEvent,
  type ResolvedEvent,
  type ReadPosition,
  START,
  StreamNotFoundError,
  streamNameFilter,
} from '@eventstore/db-client'
import { claimsOfAppended, decideClaim } from '../../core/idempotency.js'
import type { AppendOutcome, AppendResult, Backlog, EventLog, TailOptions } from '../../ports/event-log.js'
import type { IdempotencyClaims, StoredKeyClaim } from '../../ports/idempotency-claims.js'
import { LogUnavailableError } from '../../ports/event-log.js'
import type { ObjectClaims } from '../../ports/object-claims.js'
import { type NewRecord, STREAM_PREFIX, type StoredRecord, streamName } from '../../schemas/records.js'
import { DEFAULT_APPEND_BUDGET_BYTES, type ProposedEvent, splitIntoAppends, toProposedEvent } from './append-chunks.js'
import { type ReadEvent, toStoredRecord } from './record-codec.js'

/** What `append` does with one record (see decideClaim): append it (under `key`), or answer without appending. */
type KeyPlan =
  | { kind: 'append'; record: NewRecord; event: ProposedEvent; key?: string }
  | { kind: 'same-as'; index: number }
  | Exclude<AppendOutcome, { kind: 'appended' }>

export interface EventStoreEventLogOptions {
  /** Bytes one append may hold (default: 1 MiB minus 64 KiB headroom). */
  appendBudgetBytes?: number
  /** How long `readAll` waits without any progress before giving up, in ms (default 15000). */
  readIdleTimeoutMs?: number
  /** Deadline of each append, in ms (default 10000). */
  appendDeadlineMs?: number
}

/** `backlog` counts records by reading `$all` up to this many, then reports a lower bound. */
export const BACKLOG_COUNT_MAX = 100_000

/** Remembers, per stream, the revision of the last record a `readStream` page returned. */
const REVISION_CACHE_SIZE = 1024

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function readPosition(after: number | null): ReadPosition {
  return after === null ? START : { commit: BigInt(after), prepare: BigInt(after) }
}

function readEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): ReadEvent | null {
  const e = resolved.event
  if (e === undefined) return null
  const commit = e.position?.commit ?? resolved.commitPosition
  if (commit === undefined) throw new Error(`log: event ${e.id} in ${e.streamId} has no commit position (EventStoreDB older than 22.6?)`)
  return { streamId: e.streamId, type: e.type, data: e.data, metadata: e.metadata, commitPosition: commit, created: e.created }
}

export class EventStoreEventLog implements EventLog {
  private readonly budget: number
  private readonly idleMs: number
  private readonly appendDeadlineMs: number
  private readonly revisions = new Map<string, bigint>()

  /**
   * @param client a connected client (EVENTSTORE_URL); this log disposes of it on close.
   * @param objectClaims where object identity claims are made (MongoDB in production).
   * @param claims where idempotency keys are claimed (MongoDB in production); without it, records with keys are refused.
   */
  constructor(
    private readonly client: EventStoreDBClient,
    private readonly objectClaims: ObjectClaims,
    options: EventStoreEventLogOptions = {},
    private readonly claims?: IdempotencyClaims,
  ) {
    this.budget = options.appendBudgetBytes ?? DEFAULT_APPEND_BUDGET_BYTES
    this.idleMs = options.readIdleTimeoutMs ?? 15_000
    this.appendDeadlineMs = options.appendDeadlineMs ?? 10_000
  }

  async append(datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult> {
    const stream = streamName(datasetId)
    const proposed = records.map((r) => toProposedEvent(r, randomUUID))
    const plan = await this.planKeys(datasetId, records, proposed)
    const events = plan.flatMap((p) => (p.kind === 'append' ? [p.event] : []))
    // Fails before anything is claimed or written when one record can never fit an append.
    const chunks = splitIntoAppends(events, (e) => e.size, this.budget)
    const appended = plan.flatMap((p) => (p.kind === 'append' ? [p.record] : []))
    let claimed: ReadonlySet<string>
    try {
      const toClaim = appended.length === records.length ? claims : claimsOfAppended(claims, appended)
      claimed = toClaim.length === 0 ? new Set<string>() : await this.objectClaims.claim(datasetId, toClaim)
    } catch (error) {
      throw new LogUnavailableError(`claiming objects for ${stream} failed: ${message(error)}`)
    }
    const positions: number[] = []
    for (const chunk of chunks) {
      try {
        positions.push(...(await this.appendChunk(stream, chunk)))
      } catch (error) {
        throw new LogUnavailableError(`append to ${stream} failed: ${message(error)}`)
      }
    }
    return { positions, outcomes: await this.settleKeys(datasetId, stream, plan, positions), claimed }
  }

  /**
   * Claims the keys of `records` (IdempotencyClaims) and decides each record by decideClaim; a key
   * repeated within this call is decided against its first record here.
   */
  private async planKeys(datasetId: string, records: readonly NewRecord[], proposed: readonly ProposedEvent[]): Promise<KeyPlan[]> {
    const keyed = records.flatMap((r, i) => {
      const event = proposed[i]
      return r.idempotency === undefined || event === undefined
        ? []
        : [{ key: r.idempotency.key, fingerprint: r.idempotency.fingerprint, eventId: event.id, record: r }]
    })
    if (keyed.length > 0 && this.claims === undefined) {
      throw new LogUnavailableError('idempotency keys need the MongoDB claims (IdempotencyClaims); this log was built without them')
    }
    const firstOfKey = new Map<string, number>()
    const fresh = keyed.filter((k, i) => {
      if (firstOfKey.has(k.key)) return false
      firstOfKey.set(k.key, i)
      return true
    })
    let found: (StoredKeyClaim | undefined)[] = []
    try {
      found = this.claims === undefined ? [] : await this.claims.claim(datasetId, fresh)
    } catch (error) {
      throw new LogUnavailableError(`claiming idempotency keys in ${streamName(datasetId)} failed: ${message(error)}`)
    }
    const claimOf = new Map(fresh.map((k, i) => [k.key, found[i]]))
    const seen = new Map<string, number>()
    return records.map((record, i): KeyPlan => {
      const event = proposed[i]
      if (event === undefined) throw new Error('append: a record without its proposed event')
      const key = record.idempotency
      if (key === undefined) return { kind: 'append', record, event }
      const earlier = seen.get(key.key)
      if (earlier !== undefined) {
        return records[earlier]?.idempotency?.fingerprint === key.fingerprint ? { kind: 'same-as', index: earlier } : { kind: 'conflict', key: key.key }
      }
      seen.set(key.key, i)
      const existing = claimOf.get(key.key)
      const decision = decideClaim(key.fingerprint, existing)
      if (decision === 'conflict') return { kind: 'conflict', key: key.key }
      if (decision === 'duplicate' && existing?.position != null) {
        const original: StoredRecord = {
          ...existing.record,
          position: existing.position,
          stream: streamName(datasetId),
          datasetId,
          appendedAt: existing.appendedAt ?? '',
        }
        return { kind: 'duplicate', original }
      }
      // 'resume': the claimed record again, under its claimed event id (a no-op in EventStoreDB if it did land).
      if (decision === 'resume' && existing !== undefined) {
        return { kind: 'append', record: existing.record, event: toProposedEvent(existing.record, () => existing.eventId), key: key.key }
      }
      return { kind: 'append', record, event, key: key.key }
    })
  }

  /** Commits the claims of the appended records and gives each record its outcome. */
  private async settleKeys(datasetId: string, stream: string, plan: readonly KeyPlan[], positions: readonly number[]): Promise<AppendOutcome[]> {
    const appendedAt = new Date().toISOString()
    let next = 0
    const outcomes: AppendOutcome[] = []
    const commits: { key: string; position: number; appendedAt: string }[] = []
    for (const p of plan) {
      if (p.kind === 'append') {
        const position = positions[next++]
        if (position === undefined) throw new Error(`append to ${stream}: a record without its position`)
        outcomes.push({ kind: 'appended', position })
        if (p.key !== undefined) commits.push({ key: p.key, position, appendedAt })
      } else if (p.kind === 'same-as') {
        const first = plan[p.index]
        const position = outcomes[p.index]
        if (first?.kind !== 'append' || position?.kind !== 'appended') throw new Error(`append to ${stream}: a repeated key without its first record`)
        outcomes.push({ kind: 'duplicate', original: { ...first.record, position: position.position, stream, datasetId, appendedAt } })
      } else outcomes.push(p)
    }
    try {
      if (this.claims !== undefined) await this.claims.commit(datasetId, commits)
    } catch (error) {
      // The records are durable; an uncommitted claim only makes a retry resume (a no-op append).
      throw new LogUnavailableError(`the records of ${stream} were appended but their idempotency keys were not marked: ${message(error)}`)
    }
    return outcomes
  }

  /** One acknowledged append; returns the positions of its events, read back by their revisions. */
  private async appendChunk(stream: string, chunk: readonly ProposedEvent[]): Promise<number[]> {
    const result = await this.client.appendToStream(
      stream,
      chunk.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
      { expectedRevision: ANY, deadline: this.appendDeadlineMs },
    )
    // One append is one implicit transaction: its events hold consecutive revisions ending here.
    // The append result carries one position only, so the positions are read back (one round trip).
    const first = result.nextExpectedRevision - BigInt(chunk.length - 1)
    const byId = new Map<string, number>()
    for await (const resolved of this.client.readStream(stream, { fromRevision: first, maxCount: chunk.length, requiresLeader: true })) {
      const e = readEvent(resolved)
      if (e !== null && resolved.event !== undefined) byId.set(resolved.event.id, toStoredRecord(e).position)
    }
    return chunk.map((e) => {
      const position = byId.get(e.id)
      if (position === undefined) throw new Error(`event ${e.id} is not at revisions ${first.toString()}… of ${stream} after its append`)
      return position
    })
  }

  /**
   * Reads the dataset streams through `$all` from `after` (exclusive), at most `maxCount` records:
   * a catch-up subscription filtered server-side to `dataset-`. It stops at `maxCount`, or once it
   * has passed the end of `$all` as it was when the read began (the last event's position, read
   * first): at an event or a filter checkpoint at or past that end, or at the server's "caught up"
   * (EventStoreDB ≥ 23.10), whichever comes first.
   */
  async readAll(after: number | null, maxCount: number): Promise<StoredRecord[]> {
    let end: bigint | undefined
    try {
      for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 })) {
        end = resolved.event?.position.commit ?? resolved.commitPosition
      }
    } catch (error) {
      throw new LogUnavailableError(`reading the end of $all failed: ${message(error)}`)
    }
    if (end === undefined || (after !== null && BigInt(after) >= end)) return []
    const last = end
    return new Promise<StoredRecord[]>((resolve, reject) => {
      const out: StoredRecord[] = []
      let done = false
      let idle: NodeJS.Timeout | undefined
      const finish = (error?: unknown) => {
        if (done) return
        done = true
        clearTimeout(idle)
        subscription.unsubscribe().catch(() => {})
        if (error === undefined) resolve(out)
        else reject(error instanceof LogUnavailableError ? error : new LogUnavailableError(`reading $all failed: ${message(error)}`))
      }
      // An end signal can overtake events still buffered in the stream: let them flow first.
      const finishSoon = () => setImmediate(() => finish())
      const subscription = this.subscribe(after, (position) => {
        if (position.commit >= last) finishSoon()
      })
      const armIdle = () => {
        clearTimeout(idle)
        idle = setTimeout(
          () => finish(new LogUnavailableError(`reading $all: EventStoreDB sent nothing for ${String(this.idleMs)} ms before the end of $all`)),
          this.idleMs,
        )
      }
      armIdle()
      subscription.on('data', (resolved: AllStreamResolvedEvent) => {
        if (done) return
        try {
          const e = readEvent(resolved)
          if (e === null) return
          armIdle()
          const record = toStoredRecord(e)
          if (after !== null && record.position <= after) return
          out.push(record)
          if (out.length >= maxCount) finish()
          else if (e.commitPosition >= last) finishSoon()
        } catch (error) {
          finish(error)
        }
      })
      subscription.on('caughtUp', finishSoon)
      subscription.on('error', (error: Error) => finish(error))
      subscription.on('end', () => finish())
    })
  }

  /**
   * A catch-up subscription to `$all` from `after`, filtered server-side to the `dataset-` prefix.
   * @param onCheckpoint called with the filter's checkpoints: positions up to which `$all` was scanned.
   */
  private subscribe(after: number | null, onCheckpoint?: (position: Position) => void): AllStreamSubscription {
    const filter =
      onCheckpoint === undefined
        ? streamNameFilter({ prefixes: [STREAM_PREFIX] })
        : streamNameFilter({ prefixes: [STREAM_PREFIX], checkpointInterval: 1, checkpointReached: (_subscription, position) => onCheckpoint(position) })
    return this.client.subscribeToAll({ fromPosition: readPosition(after), filter })
  }

  /**
   * Reads `dataset-<id>` by revision. `after` is a global position: the revision that follows it is
   * remembered from the previous page; otherwise the stream is read from its start, skipping.
   */
  async readStream(datasetId: string, after: number | null, maxCount: number): Promise<StoredRecord[]> {
    const stream = streamName(datasetId)
    const cacheKey = (position: number) => `${stream}\u0000${String(position)}`
    const known = after === null ? undefined : this.revisions.get(cacheKey(after))
    const out: StoredRecord[] = []
    let lastRevision: bigint | undefined
    try {
      const read = this.client.readStream(stream, {
        fromRevision: known === undefined ? START : known + 1n,
        ...(after === null || known !== undefined ? { maxCount } : {}),
      })
      for await (const resolved of read) {
        const e = readEvent(resolved)
        if (e === null || resolved.event === undefined) continue
        const record = toStoredRecord(e)
        if (after !== null && record.position <= after) continue
        out.push(record)
        lastRevision = resolved.event.revision
        if (out.length >= maxCount) {
          await read.cancel()
          break
        }
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return []
      throw new LogUnavailableError(`reading ${stream} failed: ${message(error)}`)
    }
    const last = out[out.length - 1]
    if (last !== undefined && lastRevision !== undefined) {
      if (this.revisions.size >= REVISION_CACHE_SIZE) {
        const oldest = this.revisions.keys().next()
        if (oldest.done !== true) this.revisions.delete(oldest.value)
      }
      this.revisions.set(cacheKey(last.position), lastRevision)
    }
    return out
  }

  /**
   * Follows the dataset streams from `after` with one filtered catch-up subscription to `$all`.
   * Buffers at most 2 × maxBatch records (the subscription is paused beyond that), yields what has
   * arrived as one batch, and throws LogUnavailableError when the subscription drops (the projector
   * then resumes from its checkpoint).
   */
  async *tail(after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]> {
    const { signal, maxBatch } = options
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
    const subscription = this.subscribe(after)
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      try {
        const e = readEvent(resolved)
        if (e === null) return
        const record = toStoredRecord(e)
        if (cursor !== null && record.position <= cursor) return
        cursor = record.position
        queue.push(record)
        if (queue.length >= 2 * maxBatch) subscription.pause()
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
          if (failure !== undefined) throw new LogUnavailableError(`subscription to $all failed: ${message(failure)}`)
          if (ended) throw new LogUnavailableError('subscription to $all ended')
          await new Promise<void>((resolve) => {
            wake = resolve
          })
          // Let a burst of catch-up events gather into one batch.
          if (queue.length > 0 && queue.length < maxBatch) await new Promise((resolve) => setImmediate(resolve))
          continue
        }
        const batch = queue.splice(0, maxBatch)
        if (subscription.isPaused() && queue.length < maxBatch) subscription.resume()
        yield batch
      }
    } finally {
      signal.removeEventListener('abort', notify)
      await subscription.unsubscribe().catch(() => {})
    }
  }

  async lastPosition(datasetId?: string): Promise<number | null> {
    try {
      // The 6.x client's readAll cannot filter: read $all backwards to the last dataset record.
      const read =
        datasetId === undefined
          ? this.client.readAll({ fromPosition: END, direction: BACKWARDS })
          : this.client.readStream(streamName(datasetId), { fromRevision: END, direction: BACKWARDS, maxCount: 1 })
      for await (const resolved of read) {
        const e = readEvent(resolved)
        if (e === null || !e.streamId.startsWith(STREAM_PREFIX)) continue
        await read.cancel()
        return toStoredRecord(e).position
      }
      return null
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null
      throw new LogUnavailableError(`reading the last position failed: ${message(error)}`)
    }
  }

  /** Counts by reading `$all` forwards in pages (positions are byte offsets here, not record numbers). */
  async countBetween(after: number | null, upTo: number, max: number): Promise<number> {
    let cursor = after
    let n = 0
    while (n < max) {
      const want = Math.min(1000, max - n)
      const page = await this.readAll(cursor, want)
      for (const r of page) {
        if (r.position > upTo) return n
        n += 1
      }
      const last = page[page.length - 1]
      if (last === undefined || page.length < want) return n
      cursor = last.position
    }
    return n
  }

  /**
   * The oldest record after `after` is one read of `$all`. The count reads `$all` forwards up to
   * BACKLOG_COUNT_MAX records: positions here are byte offsets, so no difference of them counts
   * records, and the 6.x client has no count of `$all`; past the bound `exact` is false.
   */
  async backlog(after: number | null, upTo: number): Promise<Backlog> {
    const [first] = await this.readAll(after, 1)
    if (first === undefined || first.position > upTo) return { records: 0, exact: true, oldestAppendedAt: null }
    const records = await this.countBetween(after, upTo, BACKLOG_COUNT_MAX)
    return { records, exact: records < BACKLOG_COUNT_MAX, oldestAppendedAt: first.appendedAt }
  }

  async close(): Promise<void> {
    await this.client.dispose()
  }
}
