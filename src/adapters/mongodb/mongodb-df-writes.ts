/**
 * The MongoDB store's write of the directly-follows slice (docs/read-models.md#the-directly-follows-read-model-on-mongodb;
 * the rules: docs/process-map.md and src/core/directly-follows.ts), inside the store's transaction
 * (mongodb-read-model-store.ts). The rules' callbacks are synchronous, so the store reads first and
 * the rules then read what was fetched:
 * 1. the stored neighbours of each cluster of an object's new steps (new steps with no stored step
 *    between them): two queries per cluster, the step just before its first new step and the two at
 *    or after it, in rounds (round k: every object's k-th cluster); `linkByClusters`;
 * 2. the membership counts of the run's objects and the stored steps of the events whose incoming
 *    couples changed; `aggregateChanges`;
 * 3. the aggregates the changes touch; `applyDelta`; the steps' and membership counts' bulkWrites;
 *    for each edge whose kept smallest or largest durations the run emptied (`edgeRefills`), one
 *    read of that many of its steps along index `by_edge_elapsed` (or `by_edge_waiting`),
 *    `refillAggregate`; then the aggregates' bulkWrite (each bulkWrite unordered). SQLite and
 *    PostgreSQL index each edge's couples in time order instead (cheaper writes, a refill reads the
 *    edge: docs/process-map.md#medians-of-the-all-time-map); MongoDB keeps the two value-ordered
 *    indexes until the same change can be measured and tested against a MongoDB server.
 * Names (activities, object types) are stored as they are; the object key of the rules is the
 * object's `object_id` (a UUID of dataset, type and id, so unique across datasets).
 */
import type { AnyBulkWriteOperation, ClientSession, Db, Document, Filter, Sort } from 'mongodb'
import {
  aggregateChanges,
  applyDelta,
  type DfAggregate,
  type DfChanges,
  type DfKey,
  type DfLinking,
  type DfNeighbours,
  type DfRefill,
  type DfStep,
  edgeRefills,
  dfKeyString,
  type EventStepRow,
  isEmptyAggregate,
  linkByClusters,
  refillAggregate,
  stepsByObject,
  dfStepsOf,
} from '../../core/directly-follows.js'
import { statsOfStored } from '../../core/duration-stats.js'
import type { DirectlyFollowsEvent } from '../../core/read-model-changes.js'
import { READ_MODEL_COLLECTIONS } from './read-model-writes.js'
import { KEY_SEP } from '../../core/keys.js'

/** One (object, event) step with its predecessor in the object's trace (null fields: the object's first step). Times in ms since the epoch. */
export interface DfStepDoc {
  dataset_id: string
  object_id: string
  object_type: string
  activity: string
  t: number
  /** The event's log position. */
  pos: number
  te: number | null
  /** The number of the event's objects of this object's type (DfStep.kin). */
  kin: number
  prev_t: number | null
  prev_pos: number | null
  prev_act: string | null
  prev_te: number | null
  /** The elapsed time t − prev_t (null with no predecessor), by which index `by_edge_elapsed` orders an edge's couples. */
  prev_dt: number | null
  /** The raw waiting time t − prev_te, before max(0, …) (null with no predecessor or no end), by which index `by_edge_waiting` orders them. */
  prev_wait: number | null
}

/** An object's count of steps of activity `a` (`b` null), or of couples `a → b`. */
export interface DfMembershipDoc {
  dataset_id: string
  object_id: string
  a: string
  b: string | null
  n: number
}

/** The aggregate of an activity (`b` null) or of an edge `a → b` of one object type (DfAggregate: counts, and DurationStats as subdocuments). */
export interface DfAggregateDoc extends DfAggregate {
  dataset_id: string
  object_type: string
  a: string
  b: string | null
}

/** At most this many clauses in one `$or` read (a batch's keys are read in chunks). */
const OR_CHUNK = 500

const NUL = KEY_SEP

/** The rules' `b` ('' for an activity) as stored (null), and back. */
const storedB = (b: string): string | null => (b === '' ? null : b)
const rulesB = (b: string | null): string => b ?? ''

const membershipKey = (object: string, a: string, b: string): string => object + NUL + a + NUL + b
const eventKey = (dataset: string, t: number, pos: number): string => dataset + NUL + String(t) + NUL + String(pos)

/** The unique key (index `key`) of a step's document. */
function stepFilter(s: DfStep<string>): Filter<Document> {
  return { dataset_id: s.dataset, object_id: s.object, t: s.t, pos: s.pos }
}

/** The predecessor `p`'s fields of step `s`'s document. */
function prevFields(s: DfStep<string>, p: DfStep<string> | null): Pick<DfStepDoc, 'prev_t' | 'prev_pos' | 'prev_act' | 'prev_te' | 'prev_dt' | 'prev_wait'> {
  if (p === null) return { prev_t: null, prev_pos: null, prev_act: null, prev_te: null, prev_dt: null, prev_wait: null }
  return { prev_t: p.t, prev_pos: p.pos, prev_act: p.act, prev_te: p.te, prev_dt: s.t - p.t, prev_wait: p.te === null ? null : s.t - p.te }
}

/** A stored aggregate document as DfAggregate (its key fields and `_id` dropped). */
export function aggregateOfDoc(d: Document): DfAggregate {
  const n = (x: unknown): number => (typeof x === 'number' ? x : 0)
  return {
    events: n(d.events),
    objects: n(d.objects),
    total: n(d.total),
    starts: n(d.starts),
    ends: n(d.ends),
    couples: n(d.couples),
    durations: statsOfStored(d.durations),
    waiting: statsOfStored(d.waiting),
  }
}

/** What the write reads before the rules run (all from the transaction's snapshot). */
export interface DfStoredReads {
  /** Membership counts by (object, a, b) (b '' for an activity); absent: 0. */
  memberships: ReadonlyMap<string, number>
  /** The stored steps of each target event, by (dataset, t, pos). */
  eventSteps: ReadonlyMap<string, EventStepRow<string>[]>
}

/** An aggregate a run changed (applyDelta done), and the refills of its kept ends it needs (edgeRefills). */
export interface ChangedAggregate {
  key: DfKey
  agg: DfAggregate
  refills: DfRefill[]
}

/** The bulkWrite operations of one run's steps and membership counts, and the aggregates it changed (written by aggregateWrites, after their refills). */
export interface DfWrites {
  steps: AnyBulkWriteOperation<Document>[]
  memberships: AnyBulkWriteOperation<Document>[]
  aggregates: ChangedAggregate[]
}

/** Step 2 of the rules over the fetched memberships and event steps (an event not fetched has no stored step). */
export function changesOfRun(linking: DfLinking<string>, reads: DfStoredReads): DfChanges<string> {
  return aggregateChanges(
    linking,
    (object, a, b) => reads.memberships.get(membershipKey(object, a, b)) ?? 0,
    (n) => reads.eventSteps.get(eventKey(n.dataset, n.t, n.pos)) ?? [],
  )
}

/**
 * The writes of a linking and its changes (pure): the aggregates' as ChangedAggregate, for the
 * caller to refill (refillAggregate) once the steps are written, then write (aggregateWrites).
 * @param stored the stored aggregates the changes touch, by dfKeyString (absent: none); applyDelta
 *   changes them in place.
 * @param datasetOf the dataset of an object of the run.
 * @throws from applyDelta when a removed duration was never added (a broken read model).
 */
export function dfWrites(
  linking: DfLinking<string>,
  changes: DfChanges<string>,
  stored: ReadonlyMap<string, DfAggregate>,
  datasetOf: (object: string) => string,
): DfWrites {
  const steps: AnyBulkWriteOperation<Document>[] = []
  // $setOnInsert takes its values as they are (never as field paths), and a step stored already is kept.
  for (const { step: s, prev } of linking.inserts) {
    steps.push({
      updateOne: {
        filter: stepFilter(s),
        update: { $setOnInsert: { object_type: s.ot, activity: s.act, te: s.te, kin: s.kin, ...prevFields(s, prev) } },
        upsert: true,
      },
    })
  }
  for (const { step: s, prev } of linking.relinks) steps.push({ updateOne: { filter: stepFilter(s), update: { $set: prevFields(s, prev) } } })
  const memberships: AnyBulkWriteOperation<Document>[] = []
  for (const m of changes.memberships) {
    const filter: Filter<Document> = { dataset_id: datasetOf(m.object), object_id: m.object, a: m.a, b: storedB(m.b) }
    if (m.after === 0) memberships.push({ deleteOne: { filter } })
    else memberships.push({ updateOne: { filter, update: { $set: { n: m.after } }, upsert: true } })
  }
  const aggregates = changes.deltas.map((d): ChangedAggregate => {
    const agg = applyDelta(stored.get(dfKeyString(d.key)), d)
    return { key: d.key, agg, refills: edgeRefills(d.key, agg) }
  })
  return { steps, memberships, aggregates }
}

/** The bulkWrite operations of changed aggregates: an empty one deleted, the others replaced (upserted). */
export function aggregateWrites(changed: readonly ChangedAggregate[]): AnyBulkWriteOperation<Document>[] {
  return changed.map(({ key: k, agg }) => {
    const key = { dataset_id: k.dataset, object_type: k.ot, a: k.a, b: storedB(k.b) }
    if (isEmptyAggregate(agg)) return { deleteOne: { filter: key } }
    return { replaceOne: { filter: key, replacement: { ...key, ...agg }, upsert: true } }
  })
}

/**
 * The values a refill asks for (DfRefill): the `count` smallest or largest elapsed (`prev_dt`) or
 * waiting (max(0, `prev_wait`)) times of edge `key`'s couples, as stored now, along index
 * `by_edge_elapsed` (or `by_edge_waiting`): one bounded index scan of `count` (≤ EXTREMES) entries.
 */
export async function readRefill(io: DfIo, key: DfKey, refill: DfRefill): Promise<number[]> {
  const field = refill.stats === 'durations' ? 'prev_dt' : 'prev_wait'
  const filter = { dataset_id: key.dataset, object_type: key.ot, prev_act: key.a, activity: key.b, [field]: { $ne: null } }
  const out: number[] = []
  for await (const d of io.find(READ_MODEL_COLLECTIONS.dfSteps, filter, { [field]: refill.end === 'lo' ? 1 : -1 }, refill.count)) {
    out.push(Math.max(0, int(d[field])))
  }
  return out
}

/**
 * The reads and writes the directly-follows write makes, so that the write runs unchanged on the
 * driver (mongoDfIo) and on any store that answers the same filters the same way.
 */
export interface DfIo {
  /** The documents of `collection` that match `filter` (without `_id`), in `sort` order, at most `limit`; the caller may stop early. */
  find(collection: string, filter: Filter<Document>, sort?: Sort, limit?: number): AsyncIterable<Document>
  /** One unordered bulkWrite (nothing when `ops` is empty). */
  bulkWrite(collection: string, ops: AnyBulkWriteOperation<Document>[]): Promise<void>
}

/** DfIo on the MongoDB driver, every operation in `session` (the store's transaction). */
export function mongoDfIo(db: Db, session: ClientSession): DfIo {
  return {
    find(collection, filter, sort, limit) {
      const cursor = db.collection(collection).find(filter, { session, projection: { _id: 0 } })
      if (sort !== undefined) cursor.sort(sort)
      if (limit !== undefined) cursor.limit(limit)
      return cursor
    },
    async bulkWrite(collection, ops) {
      if (ops.length > 0) await db.collection(collection).bulkWrite(ops, { ordered: false, session, ignoreUndefined: true })
    },
  }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')
const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const int = (v: unknown): number => (typeof v === 'number' ? v : 0)
const intOrNull = (v: unknown): number | null => (typeof v === 'number' ? v : null)

/** A stored step document as the rules see it. */
export function stepOfStored(d: Document): DfStep<string> {
  return {
    dataset: text(d.dataset_id),
    object: text(d.object_id),
    ot: text(d.object_type),
    act: text(d.activity),
    t: int(d.t),
    pos: int(d.pos),
    te: intOrNull(d.te),
    // A document without `kin` counts as sharing its type in its event: its event's steps are then read.
    kin: typeof d.kin === 'number' ? d.kin : 2,
  }
}

/** `items` in chunks of OR_CHUNK. */
function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += OR_CHUNK) out.push(items.slice(i, i + OR_CHUNK))
  return out
}

/** Groups `items` by dataset. */
function byDataset<T>(items: Iterable<T>, datasetOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of items) {
    const d = datasetOf(item)
    const list = out.get(d)
    if (list === undefined) out.set(d, [item])
    else list.push(item)
  }
  return out
}

/**
 * The stored neighbours (DfNeighbours) of each asked candidate step c in its object's trace, by
 * object id: two reads per candidate along the unique index `key` (dataset_id, object_id, t, pos),
 * the step before c (at most one) and the steps at or after it (at most two).
 */
async function readNeighbours(io: DfIo, asks: readonly DfStep<string>[]): Promise<Map<string, DfNeighbours<string>>> {
  const c = READ_MODEL_COLLECTIONS.dfSteps
  const out = new Map<string, DfNeighbours<string>>()
  for (const step of asks) {
    const mine = { dataset_id: step.dataset, object_id: step.object }
    const n: DfNeighbours<string> = { before: null, at: null, next: null }
    for await (const d of io.find(c, { ...mine, $or: [{ t: { $lt: step.t } }, { t: step.t, pos: { $lt: step.pos } }] }, { t: -1, pos: -1 }, 1)) {
      n.before = stepOfStored(d)
    }
    for await (const d of io.find(c, { ...mine, $or: [{ t: { $gt: step.t } }, { t: step.t, pos: { $gte: step.pos } }] }, { t: 1, pos: 1 }, 2)) {
      if (n.at === null) n.at = stepOfStored(d)
      else n.next = stepOfStored(d)
    }
    out.set(step.object, n)
  }
  return out
}

/**
 * Step 1 of the rules (linkByClusters), its reads through `io`: a round of neighbour reads per
 * cluster rank (round 1 at every object's first new step, round k + 1 at each object's next
 * cluster's first new step), so that an object's stored steps between its new ones are never read.
 */
export async function linkRun(io: DfIo, byObject: ReadonlyMap<string, readonly DfStep<string>[]>): Promise<DfLinking<string>> {
  const walk = linkByClusters(byObject)
  let round = walk.next()
  while (round.done !== true) round = walk.next(await readNeighbours(io, round.value))
  return round.value
}

/** The membership counts of `objects` (object id → dataset), by membershipKey. */
async function readMemberships(io: DfIo, objects: ReadonlyMap<string, string>): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const [dataset, ids] of byDataset(objects.keys(), (o) => objects.get(o) ?? '')) {
    for (const chunk of chunks(ids)) {
      for await (const r of io.find(READ_MODEL_COLLECTIONS.dfMemberships, { dataset_id: dataset, object_id: { $in: chunk } })) {
        out.set(membershipKey(text(r.object_id), text(r.a), rulesB(textOrNull(r.b))), int(r.n))
      }
    }
  }
  return out
}

/** The stored steps of each target's event (index `by_time`: dataset_id, t, pos), by eventKey. */
async function readEventSteps(io: DfIo, targets: readonly DfStep<string>[]): Promise<Map<string, EventStepRow<string>[]>> {
  const out = new Map<string, EventStepRow<string>[]>()
  for (const [dataset, events] of byDataset(targets, (n) => n.dataset)) {
    for (const chunk of chunks(events)) {
      for await (const r of io.find(READ_MODEL_COLLECTIONS.dfSteps, { dataset_id: dataset, $or: chunk.map((n) => ({ t: n.t, pos: n.pos })) })) {
        const key = eventKey(dataset, int(r.t), int(r.pos))
        const list = out.get(key) ?? []
        list.push({ object: text(r.object_id), ot: text(r.object_type), prevPos: intOrNull(r.prev_pos), prevAct: textOrNull(r.prev_act) })
        out.set(key, list)
      }
    }
  }
  return out
}

/** The stored aggregates of `keys` (unique index `key`: dataset_id, object_type, a, b), by dfKeyString. */
async function readAggregates(io: DfIo, keys: readonly DfKey[]): Promise<Map<string, DfAggregate>> {
  const out = new Map<string, DfAggregate>()
  for (const [dataset, list] of byDataset(keys, (k) => k.dataset)) {
    for (const chunk of chunks(list)) {
      const filter = { dataset_id: dataset, $or: chunk.map((k) => ({ object_type: k.ot, a: k.a, b: storedB(k.b) })) }
      for await (const r of io.find(READ_MODEL_COLLECTIONS.dfAggregates, filter)) {
        out.set(dfKeyString({ dataset, ot: text(r.object_type), a: text(r.a), b: rulesB(textOrNull(r.b)) }), aggregateOfDoc(r))
      }
    }
  }
  return out
}

/**
 * Writes a run's directly-follows slice (log order) through `io` (mongoDfIo: the store's
 * transaction): the reads, the rules of src/core/directly-follows.ts, then the steps, membership
 * counts and aggregates, one unordered bulkWrite each. A run whose steps are all stored already (a
 * replay) reads their neighbours and writes nothing.
 * @throws from the rules when the stored read model contradicts itself (a membership below 0, a duration removed that was never added).
 */
export async function writeDirectlyFollows(io: DfIo, events: readonly DirectlyFollowsEvent[]): Promise<void> {
  if (events.length === 0) return
  const steps = dfStepsOf(events)
  const byObject = stepsByObject(steps)
  const linking = await linkRun(io, byObject)
  if (linking.inserts.length === 0) return
  const datasets = new Map(steps.map((s) => [s.object, s.dataset]))
  const changes = changesOfRun(linking, {
    memberships: await readMemberships(io, datasets),
    eventSteps: await readEventSteps(io, linking.storedTargets),
  })
  const stored = await readAggregates(
    io,
    changes.deltas.map((d) => d.key),
  )
  const w = dfWrites(linking, changes, stored, (object) => datasets.get(object) ?? '')
  await io.bulkWrite(READ_MODEL_COLLECTIONS.dfSteps, w.steps)
  await io.bulkWrite(READ_MODEL_COLLECTIONS.dfMemberships, w.memberships)
  // The steps are written: an emptied kept end is read back from the edge's couples as the run left them.
  for (const { key, agg, refills } of w.aggregates) for (const r of refills) refillAggregate(agg, r, await readRefill(io, key, r))
  await io.bulkWrite(READ_MODEL_COLLECTIONS.dfAggregates, aggregateWrites(w.aggregates))
}
