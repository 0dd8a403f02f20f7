/**
 * Ingest: the decisions between a validated HTTP body and the log (README § Architecture).
 * `planEvents` / `planObjects` are pure (validation, ids, records, claims); `Ingest` appends the
 * plan in one `append` call, so a request's accepted items become durable together or not at all.
 * Items are independent (spec § POST /v1/event/batch): a bad item fails alone.
 */
import type { EventLog } from '../ports/event-log.js'
import type { ObjectResult } from '../schemas/api.js'
import type { EventRecordedV1, NewRecord } from '../schemas/records.js'
import { newEventId } from './ids.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from './records.js'
import { type FieldError, type SizeCheck, validateEvent, validateObjectUpsert } from './validation.js'

export interface ItemFailure {
  /** 0-based index in the request array. */
  index: number
  errors: FieldError[]
}

export interface EventPlan {
  records: NewRecord[]
  /** The accepted events, in request order. */
  accepted: EventRecordedV1[]
  claims: string[]
  failures: ItemFailure[]
}

export interface ObjectPlan {
  records: NewRecord[]
  /** One per accepted item, in request order; `created` is filled in after the append. */
  accepted: { objectId: string; type: string; id: string; firstInRequest: boolean }[]
  claims: string[]
  failures: ItemFailure[]
}

/** Validates and builds records for event items. `nextId` yields event ids (newEventId in production). */
export function planEvents(items: readonly unknown[], ctx: RecordContext, size: SizeCheck = {}, nextId: () => string = newEventId): EventPlan {
  const plan: EventPlan = { records: [], accepted: [], claims: [], failures: [] }
  const claimed = new Set<string>()
  items.forEach((item, index) => {
    const v = validateEvent(item, size)
    if (!v.ok) {
      plan.failures.push({ index, errors: v.errors })
      return
    }
    const record = buildEventRecorded(v.value, nextId(), ctx)
    plan.records.push(record)
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
  const plan: ObjectPlan = { records: [], accepted: [], claims: [], failures: [] }
  const seen = new Set<string>()
  items.forEach((item, index) => {
    const v = validateObjectUpsert(item, size)
    if (!v.ok) {
      plan.failures.push({ index, errors: v.errors })
      return
    }
    const record = buildObjectUpserted(v.value, ctx)
    const objectId = record.data.object_id
    const firstInRequest = !seen.has(objectId)
    seen.add(objectId)
    plan.records.push(record)
    plan.accepted.push({ objectId, type: record.data.type, id: record.data.id, firstInRequest })
    if (firstInRequest) plan.claims.push(objectId)
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
  async recordEvents(items: readonly unknown[], ctx: RecordContext, size: SizeCheck = {}): Promise<{ accepted: EventRecordedV1[]; failures: ItemFailure[] }> {
    const plan = planEvents(items, ctx, size)
    if (plan.records.length > 0) await this.log.append(ctx.datasetId, plan.records, plan.claims)
    return { accepted: plan.accepted, failures: plan.failures }
  }

  /**
   * Appends the accepted object upserts of `items`. `created` is true for the item that first
   * claimed the object (an object named twice in one request is created by its first item only).
   */
  async upsertObjects(items: readonly unknown[], ctx: RecordContext, size: SizeCheck = {}): Promise<{ results: ObjectResult[]; failures: ItemFailure[] }> {
    const plan = planObjects(items, ctx, size)
    let claimed: ReadonlySet<string> = new Set()
    if (plan.records.length > 0) claimed = (await this.log.append(ctx.datasetId, plan.records, plan.claims)).claimed
    const results = plan.accepted.map((a) => ({
      object_id: a.objectId,
      object_type: a.type,
      external_id: a.id,
      created: a.firstInRequest && claimed.has(a.objectId),
    }))
    return { results, failures: plan.failures }
  }
}
