/**
 * Ingest: the decisions between a validated HTTP body and the log (README § Architecture).
 * `planEvents` / `planObjects` are pure (validation, ids, records, claims); `Ingest` appends the
 * plan in one `append` call, so a request's accepted items become durable together or not at all.
 * Items are independent (docs/api.md#batches): a bad item fails alone. An item whose
 * idempotency key is already recorded (README § Exactly once) is answered as first recorded
 * (a duplicate, counted as processed) or fails as a conflict; the log decides, in its append.
 */
import type { EventLog } from '../ports/event-log.js'
import type { ObjectResult, TypesResponse } from '../schemas/api.js'
import type { EventRecordedV1, NewRecord } from '../schemas/records.js'
import { fingerprintOf } from '../core/idempotency.js'
import { newEventId } from '../core/ids.js'
import { buildEventRecorded, buildObjectUpserted, buildTypesDeclared, type RecordContext } from '../core/records.js'
import { type FieldError, type SizeCheck, validateEvent, validateObjectUpsert, validateTypes } from '../core/validation.js'

export interface ItemFailure {
  /** 0-based index in the request array. */
  index: number
  errors: FieldError[]
  /** The item's idempotency key was already recorded with other content (a single request answers 409). */
  conflict?: true
}

export interface EventPlan {
  records: NewRecord[]
  /** The request index of each record's item. */
  itemIndexes: number[]
  /** The accepted events, in request order. */
  accepted: EventRecordedV1[]
  claims: string[]
  failures: ItemFailure[]
}

export interface ObjectPlan {
  records: NewRecord[]
  /** The request index of each record's item. */
  itemIndexes: number[]
  /** One per accepted item, in request order; `created` is filled in after the append. */
  accepted: { objectId: string; type: string; id: string; firstInRequest: boolean }[]
  claims: string[]
  failures: ItemFailure[]
}

/** `record` with the idempotency of its item (README § Exactly once) when the item has a key. */
function withKey<R extends NewRecord>(record: R, item: { idempotency_key?: string }): R {
  if (item.idempotency_key !== undefined) record.idempotency = { key: item.idempotency_key, fingerprint: fingerprintOf(item) }
  return record
}

/** The failure of an item whose key was recorded with other content. */
function conflictFailure(index: number, key: string): ItemFailure {
  return {
    index,
    conflict: true,
    errors: [
      { path: '/idempotency_key', message: `"${key}" was already recorded in this dataset with other content (conflict); use a new key for new content` },
    ],
  }
}

const byIndex = (a: ItemFailure, b: ItemFailure) => a.index - b.index

/** Validates and builds records for event items. `nextId` yields event ids (newEventId in production). */
export function planEvents(items: readonly unknown[], ctx: RecordContext, size: SizeCheck = {}, nextId: () => string = newEventId): EventPlan {
  const plan: EventPlan = { records: [], itemIndexes: [], accepted: [], claims: [], failures: [] }
  const claimed = new Set<string>()
  items.forEach((item, index) => {
    const v = validateEvent(item, size)
    if (!v.ok) {
      plan.failures.push({ index, errors: v.errors })
      return
    }
    const record = withKey(buildEventRecorded(v.value, nextId(), ctx), v.value)
    plan.records.push(record)
    plan.itemIndexes.push(index)
    plan.accepted.push(record.data)
    for (const o of record.data.objects) {
      if (claimed.has(o.object_id)) continue
      claimed.add(o.object_id)
      plan.claims.push(o.object_id)
    }
  })
  return plan
}

/** Validates and builds records for object upsert items. */
export function planObjects(items: readonly unknown[], ctx: RecordContext, size: SizeCheck = {}): ObjectPlan {
  const plan: ObjectPlan = { records: [], itemIndexes: [], accepted: [], claims: [], failures: [] }
  const seen = new Set<string>()
  const targets = new Set<string>()
  items.forEach((item, index) => {
    const v = validateObjectUpsert(item, size)
    if (!v.ok) {
      plan.failures.push({ index, errors: v.errors })
      return
    }
    const record = withKey(buildObjectUpserted(v.value, ctx), v.value)
    plan.itemIndexes.push(index)
    const objectId = record.data.object_id
    const firstInRequest = !seen.has(objectId)
    seen.add(objectId)
    plan.records.push(record)
    plan.accepted.push({ objectId, type: record.data.type, id: record.data.id, firstInRequest })
    if (firstInRequest && !targets.has(objectId)) plan.claims.push(objectId)
    // O2O targets are created on first reference (docs/api.md#auto-creation), so they are claimed too.
    for (const r of record.data.relationships) {
      if (seen.has(r.object_id) || targets.has(r.object_id)) continue
      targets.add(r.object_id)
      plan.claims.push(r.object_id)
    }
  })
  return plan
}

export class Ingest {
  constructor(private readonly log: EventLog) {}

  /**
   * Appends the accepted events of `items`.
   * @returns the accepted events and the failed items. Rejects (LogUnavailableError) when the log
   *   cannot take the write; then nothing of this request was recorded as far as the client is told.
   */
  async recordEvents(
    items: readonly unknown[],
    ctx: RecordContext,
    size: SizeCheck = {},
  ): Promise<{ accepted: EventRecordedV1[]; duplicates: number; failures: ItemFailure[] }> {
    const plan = planEvents(items, ctx, size)
    if (plan.records.length === 0) return { accepted: [], duplicates: 0, failures: plan.failures }
    const { outcomes } = await this.log.append(ctx.datasetId, plan.records, plan.claims)
    const accepted: EventRecordedV1[] = []
    const failures = [...plan.failures]
    let duplicates = 0
    outcomes.forEach((o, i) => {
      const event = plan.accepted[i]
      if (o.kind === 'appended' && event !== undefined) accepted.push(event)
      else if (o.kind === 'duplicate' && o.original.type === 'EventRecorded') {
        accepted.push(o.original.data)
        duplicates += 1
      } else failures.push(conflictFailure(plan.itemIndexes[i] ?? -1, o.kind === 'conflict' ? o.key : (plan.records[i]?.idempotency?.key ?? '')))
    })
    return { accepted, duplicates, failures: failures.sort(byIndex) }
  }

  /**
   * Appends the accepted object upserts of `items`. `created` is true for the item that first
   * claimed the object (an object named twice in one request is created by its first item only).
   */
  async upsertObjects(
    items: readonly unknown[],
    ctx: RecordContext,
    size: SizeCheck = {},
  ): Promise<{ results: ObjectResult[]; duplicates: number; failures: ItemFailure[] }> {
    const plan = planObjects(items, ctx, size)
    if (plan.records.length === 0) return { results: [], duplicates: 0, failures: plan.failures }
    const { outcomes, claimed } = await this.log.append(ctx.datasetId, plan.records, plan.claims)
    const results: ObjectResult[] = []
    const failures = [...plan.failures]
    let duplicates = 0
    outcomes.forEach((o, i) => {
      const a = plan.accepted[i]
      if (a === undefined) return
      const result = { object_id: a.objectId, object_type: a.type, external_id: a.id, created: false }
      if (o.kind === 'appended') results.push({ ...result, created: a.firstInRequest && claimed.has(a.objectId) })
      else if (o.kind === 'duplicate') {
        // As first recorded, except `created`: this request created nothing.
        results.push(result)
        duplicates += 1
      } else failures.push(conflictFailure(plan.itemIndexes[i] ?? -1, o.key))
    })
    return { results, duplicates, failures: failures.sort(byIndex) }
  }

  /**
   * Appends one `TypesDeclared` record for a POST /v1/types body (docs/api.md#declared-types).
   * @returns how many event and object types it declared (as first recorded when its idempotency key
   *   was: `duplicate`), or the body's failure (index 0; `conflict` when its key was recorded with
   *   other content). Rejects (LogUnavailableError) when the log cannot take the write.
   */
  async declareTypes(
    body: unknown,
    ctx: RecordContext,
    size: SizeCheck = {},
  ): Promise<{ ok: true; result: TypesResponse } | { ok: false; failure: ItemFailure }> {
    const v = validateTypes(body, size)
    if (!v.ok) return { ok: false, failure: { index: 0, errors: v.errors } }
    const record = withKey(buildTypesDeclared(v.value, ctx), v.value)
    const { outcomes } = await this.log.append(ctx.datasetId, [record], [])
    const o = outcomes[0]
    if (o?.kind === 'appended') {
      return {
        ok: true,
        result: { success: true, event_types: record.data.event_types.length, object_types: record.data.object_types.length, duplicate: false },
      }
    }
    if (o?.kind === 'duplicate' && o.original.type === 'TypesDeclared') {
      const d = o.original.data
      return { ok: true, result: { success: true, event_types: d.event_types.length, object_types: d.object_types.length, duplicate: true } }
    }
    return { ok: false, failure: conflictFailure(0, o?.kind === 'conflict' ? o.key : (record.idempotency?.key ?? '')) }
  }
}
