/**
 * The import plan (pure): an OcelLog → the ordered batches of API calls that load it into a dataset
 * (`ocelog import`, issue "Real data through the front door"). Mapping:
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
 * the log>` (ids are unique in an OCEL 2.0 log; an id too long for a key is replaced by its sha256);
 * an upsert's is `ocel:<prefix>object:<sha256>` of the object's id, the time of its values and the
 * item, so two equal values at different times stay two changes. `keyPrefix` keeps apart two
 * different logs that reuse event ids in one dataset.
 *
 * Order. All actions (upserts and events) are sorted by time (upserts first at equal times, initial
 * values at 1970 or without time first of all, then file order), cut into batches of at most 100
 * of one kind, and each batch lists in `after` the earlier batches it must wait for. Batches run
 * concurrently once what they wait for has been answered (`runPlan`). The rule is per object,
 * reading an upsert as a write of the object and an event naming it as a read:
 * - an upsert waits for the object's earlier upserts (its attribute history is appended in the
 *   log's time order, so its final values are the log's last ones) and for the events naming the
 *   object before the upsert's time;
 * - an event waits for the upserts of its objects at or before its time.
 * So for every object, the service's log has its attribute changes in time order, each after the
 * events before it and before the events after it, which is all the read models can observe (events
 * carry no object attributes here; events among themselves may land in any order, and analysis
 * orders them by timestamp). A batch that must wait for another open batch is held open behind it
 * (Cutter) instead of closing that one early, so objects that change between their events do not
 * fragment the batches, and at most a few batches wait at any time.
 */
import type { EventInput, EventObjectInput, ObjectUpsertInput, RelationshipInput } from '../../schemas/api.js'
import { LIMITS } from '../../core/limits.js'
import { fingerprintOf } from '../../core/idempotency.js'
import { parseTimestamp } from '../../core/timestamp.js'
import { putAttribute, tally, type OcelEvent, type OcelLog, type OcelObject, type Tally } from './model.js'

export interface PlannedEvents {
  kind: 'events'
  items: EventInput[]
  /** The log's event id of each item. */
  sources: string[]
  /** Indices of earlier batches that must be answered before this one is sent. */
  after: number[]
}

export interface PlannedUpserts {
  kind: 'objects'
  items: ObjectUpsertInput[]
  /** `<object id> @ <ISO time | initial>` of each item. */
  sources: string[]
  /** Whether each item is its object's first upsert in the plan (the summary counts objects by them, holding no set of objects). */
  firsts: boolean[]
  after: number[]
}

export type PlannedBatch = PlannedEvents | PlannedUpserts

export interface ImportPlan {
  batches: PlannedBatch[]
  /** Events and object upserts in the plan. */
  events: number
  upserts: number
  /** Distinct objects (type, id) that get at least one upsert. */
  objects: number
  /** Objects the log references but never defines, sent with type `type`, and the events that name them. */
  undefinedObjects: { type: string; objects: number; events: number }
  /** What the plan leaves out, by cause (see module comment). */
  skipped: Record<string, Tally>
}

/** The default type of objects a log references but never defines (`--unknown-object-type`). */
export const UNDEFINED_OBJECT_TYPE = 'ocelog:undefined'

export interface PlanOptions {
  /** Items per batch (default and maximum 100, § Limits). */
  batchSize?: number
  /** Type of the objects the log references but never defines (default UNDEFINED_OBJECT_TYPE; 1 to 100 characters, § Limits). */
  unknownObjectType?: string
  /** Put into every idempotency key after `ocel:` (default ''): `--key-prefix`, for two logs that reuse event ids in one dataset. */
  keyPrefix?: string
}

/** The idempotency key of the log's event `id` (see module comment). */
export function eventKey(prefix: string, id: string): string {
  const key = `ocel:${prefix}event:${id}`
  return key.length <= LIMITS.idempotencyKeyMax ? key : `ocel:${prefix}event-sha256:${fingerprintOf({ id })}`
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

function objectKey(type: string, id: string): string {
  return `${type}\u0000${id}`
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
 * (`relationships`, already resolved) ride on its first upsert, 100 at most per upsert (§ Limits
 * of the extension); the rest follow in extra upserts at the same time.
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

/**
 * Plans the import of `log` in memory (see module comment for the mapping, the skips and the
 * order); `ocelog import` plans the same actions from its on-disk staging (staged-plan.ts).
 * @returns the batches in a valid sending order (every `after` index is smaller than the batch's own).
 */
export function planImport(log: OcelLog, options: PlanOptions = {}): ImportPlan {
  const batchSize = Math.min(options.batchSize ?? LIMITS.batchItemsMax, LIMITS.batchItemsMax)
  // Objects by id: OCEL ids are unique in a log; when a log reuses one under two types, E2O
  // references resolve to the first definition, and both objects are still upserted.
  const numbers = new ObjectNumbers()
  for (const o of log.objects) numbers.define(o.type, o.id)
  const planner = new ActionPlanner(numbers, options.unknownObjectType ?? UNDEFINED_OBJECT_TYPE, options.keyPrefix ?? '')
  const actions: Action[] = []
  const defined = new Set<string>()
  for (const o of log.objects) {
    defined.add(objectKey(o.type, o.id))
    actions.push(...planner.objectActions(o))
  }
  for (const e of log.events) {
    const a = planner.eventAction(e)
    if (a !== null) actions.push(a)
  }
  actions.sort(compareActions)
  const cutter = new Cutter(batchSize)
  const batches = actions.flatMap((a) => cutter.push(a))
  batches.push(...cutter.finish())
  return {
    batches,
    events: planner.events,
    upserts: actions.length - planner.events,
    objects: defined.size,
    undefinedObjects: planner.undefinedObjects(),
    skipped: planner.skipped,
  }
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

/** Open batches the Cutter holds at most (see Cutter); more would only hold small upsert batches open longer. */
const OPEN_BATCHES_MAX = 16

interface OpenLayer {
  kind: PlannedBatch['kind']
  items: (EventInput | ObjectUpsertInput)[]
  sources: string[]
  /** Upsert batches: PlannedUpserts.firsts. */
  firsts: boolean[]
  /** Objects (ObjectNumbers) named by the items. */
  keys: Set<number>
}

/**
 * Cuts time-ordered actions into batches with their `after` lists (see module comment), as they
 * come: `push` returns the batches an action closed, `finish` the last ones.
 *
 * Up to OPEN_BATCHES_MAX batches are open at once, in the order they will close (and be numbered).
 * An action goes into the first open batch of its kind that comes after every open batch it must
 * wait for: an upsert after the open event batches naming its object (and not before the open batch
 * holding the object's earlier upserts, which it may join: items of a batch are applied in order);
 * an event after the open upsert batches of its objects. When that batch is full, or there is none,
 * a new batch is opened at the first place the action may go (so batches that wait stay few, and
 * the first one fills). So an upsert that must wait for the open event batch no longer closes it
 * (nor an event the open upsert batch): the other events go on filling it, and batches stay near
 * 100 items. A batch closes when it is first and full, or when the most open batches are reached
 * (the first one closes). For closed batches, the Cutter holds per object the batch of its latest
 * upsert and the event batches naming it since, which give a closing batch its `after`.
 */
export class Cutter {
  private count = 0
  /** Per object (ObjectNumbers): 1 + the batch of its latest upsert, 0 for none; 4 bytes per object. */
  private lastUpsert = new Int32Array(1024)
  /** Per object: the event batches naming it since its latest upsert, ascending: one as a number, more as an array (see closeFirst). */
  private readonly readersSince = new Map<number, number | number[]>()
  /** The open batches, in closing order. */
  private readonly layers: OpenLayer[] = []
  /** The batch of the last event pushed: the next event may not precede it. */
  private lastEventLayer: OpenLayer | undefined

  constructor(private readonly batchSize: number) {}

  /** The batch of object `k`'s latest upsert, or undefined. */
  private lastUpsertOf(k: number): number | undefined {
    const v = k < this.lastUpsert.length ? (this.lastUpsert[k] ?? 0) : 0
    return v === 0 ? undefined : v - 1
  }

  private setLastUpsert(k: number, index: number): void {
    if (k >= this.lastUpsert.length) {
      const grown = new Int32Array(Math.max(k + 1, this.lastUpsert.length * 2))
      grown.set(this.lastUpsert)
      this.lastUpsert = grown
    }
    this.lastUpsert[k] = index + 1
  }

  /**
   * Closes the first open batch, numbered next. Every batch it may have to wait for is closed by now
   * (they come before it), so its `after` is read here: per object, the batch of its latest upsert,
   * and for an upsert also the event batches naming the object since.
   */
  private closeFirst(out: PlannedBatch[]): void {
    const layer = this.layers.shift()
    if (layer === undefined) return
    const index = this.count++
    const waits = new Set<number>()
    for (const k of layer.keys) {
      const last = this.lastUpsertOf(k)
      if (last !== undefined) waits.add(last)
      if (layer.kind === 'objects') {
        const readers = this.readersSince.get(k)
        if (typeof readers === 'number') waits.add(readers)
        else for (const r of readers ?? []) waits.add(r)
      }
    }
    const after = [...waits].sort((a, b) => a - b)
    out.push(
      layer.kind === 'events'
        ? { kind: 'events', items: layer.items as EventInput[], sources: layer.sources, after }
        : { kind: 'objects', items: layer.items as ObjectUpsertInput[], sources: layer.sources, firsts: layer.firsts, after },
    )
    for (const k of layer.keys) {
      if (layer.kind === 'objects') {
        this.setLastUpsert(k, index)
        this.readersSince.delete(k)
      } else {
        const readers = this.readersSince.get(k)
        // One reader is kept as a number, a few in an array of their exact length: most objects have one
        // to three, and an array grown by push keeps room for 16 more.
        if (readers === undefined) this.readersSince.set(k, index)
        else if (typeof readers === 'number') this.readersSince.set(k, [readers, index])
        else if (readers.length < 8) this.readersSince.set(k, [...readers, index])
        else readers.push(index)
      }
    }
  }

  /**
   * Where `a` may go among the open batches (see class comment): `join`, the first place it may join
   * an open batch of its kind; `open`, the first place a new batch for it may be opened (after the
   * batch of its object's earlier upserts, or for an event the batch of the event before it, which `a`
   * may join but not precede).
   */
  private lowest(a: Action): { join: number; open: number } {
    let join = 0
    let open = 0
    this.layers.forEach((layer, i) => {
      if (a.kind === 'upsert') {
        if (!layer.keys.has(a.key)) return
        join = Math.max(join, layer.kind === 'events' ? i + 1 : i)
        open = Math.max(open, i + 1)
      } else if (layer === this.lastEventLayer) {
        // Events reach the log in sending order (time, then the file's order): an event never precedes
        // the batch of the event before it (it may join it). Positions break ties of timestamps in
        // traces and in the analysis reads, and the directly-follows projection then only appends.
        join = Math.max(join, i)
        open = Math.max(open, i + 1)
      } else if (layer.kind === 'objects' && a.keys.some((k) => layer.keys.has(k))) {
        join = Math.max(join, i + 1)
        open = Math.max(open, i + 1)
      }
    })
    return { join, open }
  }

  /** Adds the next action in sending order. @returns the batches it closed. */
  push(a: Action): PlannedBatch[] {
    const out: PlannedBatch[] = []
    const kind: PlannedBatch['kind'] = a.kind === 'upsert' ? 'objects' : 'events'
    const { join, open } = this.lowest(a)
    let layer = this.layers.find((l, i) => i >= join && l.kind === kind)
    if (layer === undefined || layer.items.length >= this.batchSize) {
      let at = open
      if (this.layers.length >= OPEN_BATCHES_MAX) {
        this.closeFirst(out)
        at = Math.max(0, at - 1)
      }
      layer = { kind, items: [], sources: [], firsts: [], keys: new Set() }
      this.layers.splice(at, 0, layer)
    }
    layer.items.push(a.item)
    layer.sources.push(a.source)
    if (a.kind === 'event') this.lastEventLayer = layer
    if (a.kind === 'upsert') {
      layer.keys.add(a.key)
      layer.firsts.push(a.first)
    } else for (const k of a.keys) layer.keys.add(k)
    while ((this.layers[0]?.items.length ?? 0) >= this.batchSize) this.closeFirst(out)
    return out
  }

  /** The batches still open, in order. */
  finish(): PlannedBatch[] {
    const out: PlannedBatch[] = []
    while (this.layers.length > 0) this.closeFirst(out)
    return out
  }
}

/** The shape of an import plan's batches (planShape): what bounds how fast it can be sent. */
export interface PlanShape {
  /** Batches in the plan, and of each kind. */
  batches: number
  eventBatches: number
  upsertBatches: number
  /** Items per batch of each kind, on average (0 when there is no batch of the kind). */
  meanEvents: number
  meanUpserts: number
  /**
   * The longest chain of batches each of which waits for the one before it (through `after`): that
   * many round trips follow one another however many batches are in flight (`--concurrency`), so a
   * plan cannot be sent in less than `criticalPath` times the time of one request answered.
   */
  criticalPath: number
}

/**
 * The shape of the batches of a plan, read once as they come (a staged plan's `batches()` or an
 * ImportPlan's array), in a valid sending order (every `after` index below the batch's own).
 * Holds 4 bytes per batch. See docs/import.md § Two bounds: the plan's critical path, and the CPU of two cores.
 * @throws RangeError when a batch names an `after` at or above its own index (not a valid order).
 */
export function planShape(batches: Iterable<PlannedBatch>): PlanShape {
  let depth = new Int32Array(1024)
  let n = 0
  let criticalPath = 0
  const items = { events: 0, objects: 0 }
  const counts = { events: 0, objects: 0 }
  for (const b of batches) {
    let d = 1
    for (const a of b.after) {
      if (a < 0 || a >= n) throw new RangeError(`batch ${String(n)} waits for batch ${String(a)}, which does not come before it`)
      d = Math.max(d, (depth[a] ?? 0) + 1)
    }
    if (n >= depth.length) {
      const grown = new Int32Array(depth.length * 2)
      grown.set(depth)
      depth = grown
    }
    depth[n++] = d
    criticalPath = Math.max(criticalPath, d)
    counts[b.kind] += 1
    items[b.kind] += b.items.length
  }
  return {
    batches: n,
    eventBatches: counts.events,
    upsertBatches: counts.objects,
    meanEvents: counts.events === 0 ? 0 : items.events / counts.events,
    meanUpserts: counts.objects === 0 ? 0 : items.objects / counts.objects,
    criticalPath,
  }
}
