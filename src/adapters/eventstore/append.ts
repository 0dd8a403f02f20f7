/**
 * `append` of the EventStoreDB log (eventstore-event-log.ts, whose header states the rules): the
 * idempotency keys claimed first (IdempotencyClaims), the object claims, then one acknowledged
 * append per chunk under the append budget (append-chunks.ts), then the keys' claims committed.
 */
import { randomUUID } from 'node:crypto'
import { ANY, type EventStoreDBClient, jsonEvent } from '@eventstore/db-client'
import { claimsOfAppended, decideClaim } from '../../core/idempotency.js'
import type { AppendOutcome, AppendResult } from '../../ports/event-log.js'
import { LogUnavailableError } from '../../ports/event-log.js'
import type { IdempotencyClaims, StoredKeyClaim } from '../../ports/idempotency-claims.js'
import type { ObjectClaims } from '../../ports/object-claims.js'
import { type NewRecord, type StoredRecord, streamName } from '../../schemas/records.js'
import { type ProposedEvent, splitIntoAppends, toProposedEvent } from './append-chunks.js'
import { readEvent } from './client-events.js'
import { findLanded, searchSince, streamTail } from './landed.js'
import { toStoredRecord } from './record-codec.js'
import { messageOf } from '../../core/errors.js'

/** What `append` does with one record (see decideClaim): append it (under `key`), or answer without appending. */
type KeyPlan =
  | { kind: 'append'; record: NewRecord; event: ProposedEvent; key?: string; resumed?: { claimedAt: string | undefined } }
  | { kind: 'landed'; record: NewRecord; position: number; key: string }
  | { kind: 'same-as'; index: number }
  | Exclude<AppendOutcome, { kind: 'appended' }>

/** What an append needs of the log: its client, its claims and its limits. */
export interface AppendContext {
  client: Pick<EventStoreDBClient, 'appendToStream' | 'readStream'>
  objectClaims: ObjectClaims
  claims: IdempotencyClaims | undefined
  /** Bytes one append may hold. */
  budget: number
  /** Deadline of each append, in ms. */
  appendDeadlineMs: number
}

/** EventLog.append on EventStoreDB (src/ports/event-log.ts); rejects with LogUnavailableError when an engine fails. */
export async function appendRecords(ctx: AppendContext, datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult> {
  const stream = streamName(datasetId)
  const proposed = records.map((r) => toProposedEvent(r, randomUUID))
  const plan = await planKeys(ctx, datasetId, records, proposed)
  const events = plan.flatMap((p) => (p.kind === 'append' ? [p.event] : []))
  // Fails before anything is claimed or written when one record can never fit an append.
  const chunks = splitIntoAppends(events, (e) => e.size, ctx.budget)
  const appended = plan.flatMap((p) => (p.kind === 'append' ? [p.record] : []))
  let claimed: ReadonlySet<string>
  try {
    const toClaim = appended.length === records.length ? claims : claimsOfAppended(claims, appended)
    claimed = toClaim.length === 0 ? new Set<string>() : await ctx.objectClaims.claim(datasetId, toClaim)
  } catch (error) {
    throw new LogUnavailableError(`claiming objects for ${stream} failed: ${messageOf(error)}`)
  }
  const positions: number[] = []
  for (const chunk of chunks) {
    try {
      positions.push(...(await appendChunk(ctx, stream, chunk)))
    } catch (error) {
      throw new LogUnavailableError(`append to ${stream} failed: ${messageOf(error)}`)
    }
  }
  return { positions, outcomes: await settleKeys(ctx, datasetId, stream, plan, positions), claimed }
}

/**
 * Claims the keys of `records` (IdempotencyClaims) and decides each record by decideClaim; a key
 * repeated within this call is decided against its first record here.
 */
async function planKeys(ctx: AppendContext, datasetId: string, records: readonly NewRecord[], proposed: readonly ProposedEvent[]): Promise<KeyPlan[]> {
  const keyed = records.flatMap((r, i) => {
    const event = proposed[i]
    return r.idempotency === undefined || event === undefined
      ? []
      : [{ key: r.idempotency.key, fingerprint: r.idempotency.fingerprint, eventId: event.id, record: r }]
  })
  if (keyed.length > 0 && ctx.claims === undefined) {
    throw new LogUnavailableError('idempotency keys need the MongoDB claims (IdempotencyClaims); this log was built without them')
  }
  const firstOfKey = new Map<string, number>()
  const fresh = keyed.filter((k, i) => {
    if (firstOfKey.has(k.key)) return false
    firstOfKey.set(k.key, i)
    return true
  })
  const stream = streamName(datasetId)
  let found: (StoredKeyClaim | undefined)[] = []
  try {
    found = ctx.claims === undefined ? [] : await ctx.claims.claim(datasetId, fresh)
  } catch (error) {
    throw new LogUnavailableError(`claiming idempotency keys in ${stream} failed: ${messageOf(error)}`)
  }
  const claimOf = new Map(fresh.map((k, i) => [k.key, found[i]]))
  const seen = new Map<string, number>()
  const plan = records.map((record, i): KeyPlan => {
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
        stream,
        datasetId,
        appendedAt: existing.appendedAt ?? '',
      }
      return { kind: 'duplicate', original }
    }
    // 'resume': the claimed record again, under its claimed event id, unless it did land (resumeLanded).
    if (decision === 'resume' && existing !== undefined) {
      const again = toProposedEvent(existing.record, () => existing.eventId)
      return { kind: 'append', record: existing.record, event: again, key: key.key, resumed: { claimedAt: existing.claimedAt } }
    }
    return { kind: 'append', record, event, key: key.key }
  })
  return resumeLanded(ctx, stream, plan)
}

/**
 * The resumed records whose events already landed in `stream` (landed.ts: an exact look at the
 * stream's tail, not EventStoreDB's best-effort check of event ids) become `landed` at their
 * position: answered as appended, their claims committed, not appended again.
 */
async function resumeLanded(ctx: AppendContext, stream: string, plan: KeyPlan[]): Promise<KeyPlan[]> {
  const resumed = plan.flatMap((p) => (p.kind === 'append' && p.resumed !== undefined ? [p] : []))
  if (resumed.length === 0) return plan
  let landed: Map<string, number>
  try {
    const since = searchSince(resumed.map((p) => p.resumed?.claimedAt))
    landed = await findLanded(streamTail(ctx.client, stream), new Set(resumed.map((p) => p.event.id)), since)
  } catch (error) {
    throw new LogUnavailableError(`reading the tail of ${stream} for resumed records failed: ${messageOf(error)}`)
  }
  return plan.map((p): KeyPlan => {
    const position = p.kind === 'append' && p.resumed !== undefined ? landed.get(p.event.id) : undefined
    return p.kind === 'append' && position !== undefined && p.key !== undefined ? { kind: 'landed', record: p.record, position, key: p.key } : p
  })
}

/** Commits the claims of the appended records and gives each record its outcome. */
async function settleKeys(
  ctx: AppendContext,
  datasetId: string,
  stream: string,
  plan: readonly KeyPlan[],
  positions: readonly number[],
): Promise<AppendOutcome[]> {
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
    } else if (p.kind === 'landed') {
      outcomes.push({ kind: 'appended', position: p.position })
      commits.push({ key: p.key, position: p.position, appendedAt })
    } else if (p.kind === 'same-as') {
      const first = plan[p.index]
      const position = outcomes[p.index]
      if ((first?.kind !== 'append' && first?.kind !== 'landed') || position?.kind !== 'appended')
        throw new Error(`append to ${stream}: a repeated key without its first record`)
      outcomes.push({ kind: 'duplicate', original: { ...first.record, position: position.position, stream, datasetId, appendedAt } })
    } else outcomes.push(p)
  }
  try {
    if (ctx.claims !== undefined) await ctx.claims.commit(datasetId, commits)
  } catch (error) {
    // The records are durable; an uncommitted claim only makes a retry resume (a no-op append).
    throw new LogUnavailableError(`the records of ${stream} were appended but their idempotency keys were not marked: ${messageOf(error)}`)
  }
  return outcomes
}

/** One acknowledged append; returns the positions of its events, read back by their revisions. */
async function appendChunk(ctx: AppendContext, stream: string, chunk: readonly ProposedEvent[]): Promise<number[]> {
  const result = await ctx.client.appendToStream(
    stream,
    chunk.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
    { expectedRevision: ANY, deadline: ctx.appendDeadlineMs },
  )
  // One append is one implicit transaction: its events hold consecutive revisions ending here.
  // The append result carries one position only, so the positions are read back (one round trip).
  const first = result.nextExpectedRevision - BigInt(chunk.length - 1)
  const byId = new Map<string, number>()
  for await (const resolved of ctx.client.readStream(stream, { fromRevision: first, maxCount: chunk.length, requiresLeader: true })) {
    const e = readEvent(resolved)
    if (e !== null && resolved.event !== undefined) byId.set(resolved.event.id, toStoredRecord(e).position)
  }
  return chunk.map((e) => {
    const position = byId.get(e.id)
    if (position === undefined) throw new Error(`event ${e.id} is not at revisions ${first.toString()}… of ${stream} after its append`)
    return position
  })
}
