/**
 * The import plan's first step (pure): an OcelLog → its actions, one per item to send, each with its
 * idempotency key, its time and its planning order (plan.ts gives the plan's shape, cutter.ts the
 * second step). Mapping:
 * - each event → one item of POST /v1/event/batch: type → `event`, time → `timestamp` (UTC ISO 8601
 *   with ms), attributes → `properties`, E2O → `objects` [{type, id, qualifier}], the type being
 *   the one the log gives the object; an event attribute named `end_timestamp` (the one `ocelog
 *   export` writes; `ocelog:end_timestamp` when the event's type also has a property of that name)
 *   → the API's `end_timestamp`, when it is an ISO 8601 date-time with a zone at or after the
 *   event's time (otherwise it stays a property and is counted as `end_timestamp_unusable`);
 * - each object's attribute history → items of POST /v1/object/batch: one upsert per (object, time)
 *   carrying the values set at that time, with that time as its `timestamp` (Ocelog's extension, so
 *   the attribute history keeps the log's times); an object without attributes gets one upsert
 *   without properties, so that every object the log defines exists in the dataset;
 * - each object's O2O relationships → `relationships` of its first upsert (100 per upsert; more go
 *   in extra upserts at the same time), the target typed as the log defines it.
 *
 * Objects the log references but never defines (E2O to an id no object has) keep their events:
 * they are sent with the type `unknownObjectType` (`--unknown-object-type`, default
 * `ocelog:undefined`), and the API creates them on first reference (docs/api.md#auto-creation). So are
 * the targets of O2O relationships the log never defines. How many such objects there are and how
 * many events name them is in `undefinedObjects`.
 *
 * What cannot be sent is counted by cause in `skipped`, never dropped silently:
 * - `e2o_duplicate`: the same (object, qualifier) twice in one event; sent once;
 * - `event_without_objects`: an event left with no object (the API needs 1 to 50);
 * - `event_over_50_objects`: an event with more than 50 objects (the API answers 422);
 * - `o2o_duplicate`: the same (target, qualifier) twice in one object's O2O; sent once;
 * - `object_attribute_same_time`: a second value of one attribute at the same time for one object
 *   (the later one in the file wins).
 *
 * Idempotency keys (README § Exactly once), so that an import can be run again, or finished after
 * it was killed, without recording anything twice: an event's key is `ocel:<prefix>event:<its id in
 * the log>` (ids are unique in an OCEL 2.0 log; an id too long for a key, or holding U+0000, is replaced by its sha256);
 * an upsert's is `ocel:<prefix>object:<sha256>` of the object's id, the time of its values and the
 * item, so two equal values at different times stay two changes. `keyPrefix` keeps apart two
 * different logs that reuse event ids in one dataset.
 *
 * Order of the actions: by time (upserts first at equal times, initial values at 1970 or without
 * time first of all, then file order), see compareActions; cutter.ts cuts them into batches.
 */
import type { EventInput, EventObjectInput, ObjectUpsertInput, RelationshipInput } from '../../schemas/api.js'
import { LIMITS } from '../../core/limits.js'
import { fingerprintOf } from '../../core/idempotency.js'
import { parseTimestamp } from '../../core/timestamp.js'
import { putAttribute, tally, type OcelEvent, type OcelObject, type Tally } from './model.js'
import type { ImportPlan } from './plan.js'
import { joinKey } from '../../core/keys.js'

/** The idempotency key of the log's event `id` (see module comment). */
export function eventKey(prefix: string, id: string): string {
  const key = `ocel:${prefix}event:${id}`
  // A key holds no U+0000 (docs/api.md#idempotency-keys): an id with one is hashed, as a long one is.
  return key.length <= LIMITS.idempotencyKeyMax && !id.includes('\u0000') ? key : `ocel:${prefix}event-sha256:${fingerprintOf({ id })}`
}

/** The idempotency key of an upsert of the log's object `source` (`<object id> @ <time>`), see module comment. */
export function upsertKey(prefix: string, source: string, item: ObjectUpsertInput): string {
  return `ocel:${prefix}object:${fingerprintOf({ source, item })}`
}

/** One item to send, with what orders it: its time (ms; -Infinity for values without time) and its planning `seq`. */
export type Action =
  | { kind: 'upsert'; time: number; seq: number; key: number; item: ObjectUpsertInput; source: string; first: boolean }
  | { kind: 'event'; time: number; seq: number; keys: number[]; item: EventInput; source: string }

type UpsertAction = Action & { kind: 'upsert' }

/** The text key of object (type, id): the same for the same pair, different for different pairs. */
export function objectKey(type: string, id: string): string {
  return joinKey(type, id)
}

/**
 * The objects of a log as small numbers (what the Cutter keys its per-object state by, far lighter
 * than the (type, id) text), and the first type of each id (E2O and O2O references resolve to it).
 * `define` every object of the log first; then `numberOf` numbers any (type, id), undefined
 * objects included. Holds per distinct id one number and one shared type text.
 */
export class ObjectNumbers {
  private readonly first = new Map<string, number>()
  private readonly types: string[] = []
  private readonly interned = new Map<string, string>()
  /** (type, id) pairs that are not the first definition of their id: a second type, or an undefined object. */
  private readonly others = new Map<string, number>()

  /** Notes an object the log defines (the first definition of an id gives its type). */
  define(type: string, id: string): void {
    if (this.first.has(id)) return
    let shared = this.interned.get(type)
    if (shared === undefined) {
      shared = type
      this.interned.set(type, type)
    }
    this.first.set(id, this.types.length)
    this.types.push(shared)
  }

  /** The type of the first object the log defines with `id`, or undefined when none does. */
  typeOf(id: string): string | undefined {
    const n = this.first.get(id)
    return n === undefined ? undefined : this.types[n]
  }

  /** The number of object (type, id): the same for the same pair, different for different pairs. */
  numberOf(type: string, id: string): number {
    const n = this.first.get(id)
    if (n !== undefined && this.types[n] === type) return n
    const key = objectKey(type, id)
    let m = this.others.get(key)
    if (m === undefined) {
      m = this.types.length + this.others.size
      this.others.set(key, m)
    }
    return m
  }

  /** Drops what is held, once planned. */
  clear(): void {
    this.first.clear()
    this.types.length = 0
    this.interned.clear()
    this.others.clear()
  }
}

/** A key of (object id, qualifier) that tells every two pairs apart: the qualifier's length ends it. */
function pairKey(objectId: string, qualifier: string | null): string {
  return qualifier === null ? `-${objectId}` : `${String(qualifier.length)}:${qualifier}${objectId}`
}

function isoOf(ms: number): string {
  return new Date(ms).toISOString()
}

/**
 * Upserts of one object: one per distinct time, its values merged in file order, each with its
 * `timestamp`; an object without attributes gets one upsert without values. Its O2O relationships
 * (`relationships`, already resolved) ride on its first upsert, 100 at most per upsert (docs/api.md#limits,
 * O2O relationships); the rest follow in extra upserts at the same time.
 */
function upsertsOf(o: OcelObject, key: number, relationships: RelationshipInput[], seq: () => number, skipped: Record<string, Tally>): UpsertAction[] {
  const actions = attributeUpserts(o, key, seq, skipped)
  const first = actions[0]
  if (first === undefined || relationships.length === 0) return actions
  const chunks = chunk(relationships, LIMITS.relationshipsPerObjectMax)
  first.item.relationships = chunks[0]
  const extra: UpsertAction[] = chunks.slice(1).map((part, i) => ({
    kind: 'upsert',
    time: first.time,
    seq: seq(),
    key,
    item:
      first.item.timestamp === undefined
        ? { type: o.type, id: o.id, relationships: part }
        : { type: o.type, id: o.id, timestamp: first.item.timestamp, relationships: part },
    source: `${first.source} O2O ${String(i + 2)}`,
    first: false,
  }))
  return [first, ...extra, ...actions.slice(1)]
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The attribute upserts of one object (see upsertsOf). */
function attributeUpserts(o: OcelObject, key: number, seq: () => number, skipped: Record<string, Tally>): UpsertAction[] {
  if (o.attributes.length === 0) {
    return [{ kind: 'upsert', time: Number.NEGATIVE_INFINITY, seq: seq(), key, item: { type: o.type, id: o.id }, source: `${o.id} @ initial`, first: true }]
  }
  const byTime = new Map<number, Record<string, unknown>>()
  for (const a of o.attributes) {
    const values = byTime.get(a.time) ?? {}
    if (Object.hasOwn(values, a.name)) tally(skipped, 'object_attribute_same_time', `${o.id}.${a.name} @ ${isoOf(a.time)}`)
    putAttribute(values, a.name, a.value)
    byTime.set(a.time, values)
  }
  return [...byTime.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([time, properties], i) => ({
      kind: 'upsert' as const,
      time,
      seq: seq(),
      key,
      item: { type: o.type, id: o.id, properties, timestamp: isoOf(time) },
      source: `${o.id} @ ${isoOf(time)}`,
      first: i === 0,
    }))
}

/** The actions of one log, item by item, with their idempotency keys; what it leaves out in `skipped`. */
export class ActionPlanner {
  readonly skipped: Record<string, Tally> = {}
  /** Events planned (not skipped), and those naming at least one undefined object. */
  events = 0
  undefinedEvents = 0
  /** Ids the log references (E2O of planned events, O2O targets) but never defines. */
  readonly undefinedIds = new Set<string>()
  private counter = 0
  private readonly seq = () => this.counter++
  /** Per object number: 1 once its upserts are planned. */
  private planned = new Uint8Array(1024)

  /**
   * @param objects every object the log defines (E2O and O2O references resolve to the first type of
   *   an id; see module comment), and the numbers the actions name objects by.
   */
  constructor(
    private readonly objects: ObjectNumbers,
    readonly unknownType: string,
    private readonly prefix: string,
  ) {}

  /** The upserts of object `o` (see upsertsOf), keyed, in `seq` order of planning. */
  objectActions(o: OcelObject): Action[] {
    const relationships: RelationshipInput[] = []
    const seen = new Set<string>()
    for (const r of o.relationships) {
      const pair = pairKey(r.objectId, r.qualifier)
      if (seen.has(pair)) {
        tally(this.skipped, 'o2o_duplicate', `${o.id} → ${r.objectId}`)
        continue
      }
      seen.add(pair)
      const target = this.objects.typeOf(r.objectId)
      if (target === undefined) this.undefinedIds.add(r.objectId)
      const type = target ?? this.unknownType
      relationships.push(r.qualifier === null ? { type, id: r.objectId } : { type, id: r.objectId, qualifier: r.qualifier })
    }
    const n = this.objects.numberOf(o.type, o.id)
    const actions = upsertsOf(o, n, relationships, this.seq, this.skipped)
    for (const a of actions) a.item.idempotency_key = upsertKey(this.prefix, a.source, a.item)
    // A log that defines one (type, id) twice: only the first definition's first upsert counts the object.
    if (n >= this.planned.length) {
      const grown = new Uint8Array(Math.max(n + 1, this.planned.length * 2))
      grown.set(this.planned)
      this.planned = grown
    }
    if (this.planned[n] === 1) for (const a of actions) if (a.kind === 'upsert') a.first = false
    this.planned[n] = 1
    return actions
  }

  /** The action of event `e`, keyed, or null when it is skipped (counted in `skipped`). */
  eventAction(e: OcelEvent): Action | null {
    const objects: EventObjectInput[] = []
    const seen = new Set<string>()
    const undefinedHere: string[] = []
    for (const r of e.relationships) {
      const defined = this.objects.typeOf(r.objectId)
      const pair = pairKey(r.objectId, r.qualifier)
      if (seen.has(pair)) {
        tally(this.skipped, 'e2o_duplicate', `${e.id} → ${r.objectId}`)
        continue
      }
      seen.add(pair)
      if (defined === undefined) undefinedHere.push(r.objectId)
      const type = defined ?? this.unknownType
      objects.push(r.qualifier === null ? { type, id: r.objectId } : { type, id: r.objectId, qualifier: r.qualifier })
    }
    if (objects.length === 0) {
      tally(this.skipped, 'event_without_objects', e.id)
      return null
    }
    if (objects.length > LIMITS.objectsPerEventMax) {
      tally(this.skipped, 'event_over_50_objects', `${e.id} (${String(objects.length)} objects)`)
      return null
    }
    const item: EventInput = { event: e.type, timestamp: isoOf(e.time), objects }
    const { properties, endTimestamp } = splitEndTimestamp(e.attributes, e.time, (value) => tally(this.skipped, 'end_timestamp_unusable', `${e.id} (${value})`))
    if (endTimestamp !== undefined) item.end_timestamp = endTimestamp
    if (Object.keys(properties).length > 0) item.properties = properties
    item.idempotency_key = eventKey(this.prefix, e.id)
    this.events += 1
    for (const id of undefinedHere) this.undefinedIds.add(id)
    if (undefinedHere.length > 0) this.undefinedEvents += 1
    return { kind: 'event', time: e.time, seq: this.seq(), keys: objects.map((x) => this.objects.numberOf(x.type, x.id)), item, source: e.id }
  }

  /** `undefinedObjects` of the plan so far. */
  undefinedObjects(): ImportPlan['undefinedObjects'] {
    return { type: this.unknownType, objects: this.undefinedIds.size, events: this.undefinedEvents }
  }
}

/**
 * The sending order of actions: by time, upserts first at equal times (initial values, at
 * -Infinity, first of all), then planning order (`seq`). Upserts are planned before events, so
 * (time, seq) alone gives the same order.
 */
export function compareActions(a: Action, b: Action): number {
  return a.time - b.time || (a.kind === b.kind ? 0 : a.kind === 'upsert' ? -1 : 1) || a.seq - b.seq
}

/** The event attributes that carry `end_timestamp` as `ocelog export` writes it, in the order tried. */
const END_TIMESTAMP_ATTRIBUTES = ['ocelog:end_timestamp', 'end_timestamp'] as const

/**
 * Takes an event's end time out of its attributes: the first of END_TIMESTAMP_ATTRIBUTES present
 * that is an ISO 8601 date-time with a zone at or after `time` (ms). An unusable value stays a
 * property and is reported through `unusable`.
 */
function splitEndTimestamp(
  attributes: Record<string, unknown>,
  time: number,
  unusable: (value: string) => void,
): { properties: Record<string, unknown>; endTimestamp?: string } {
  const name = END_TIMESTAMP_ATTRIBUTES.find((n) => n in attributes)
  if (name === undefined) return { properties: attributes }
  const value = attributes[name]
  const parsed = typeof value === 'string' ? parseTimestamp(value) : null
  if (parsed === null || !parsed.ok || Date.parse(parsed.utc) < time) {
    unusable(String(value))
    return { properties: attributes }
  }
  const { [name]: _, ...properties } = attributes
  return { properties, endTimestamp: parsed.utc }
}
