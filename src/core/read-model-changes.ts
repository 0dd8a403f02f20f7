/**
 * The read-model changes a run of records implies (README § Read models): one slice per projection,
 * what its pure `evolve` (projections/) folds records into, and what a read-model store applies
 * (ReadModelStore.apply), with each projection's checkpoint, in one step. No I/O here.
 *
 * Idempotency contract for stores: every aggregated change carries `minPosition`/`maxPosition`,
 * the range of records that produced it, and the positions of its non-idempotent parts (counts
 * in `addedAt`, attribute values in `deltas`). A store applies the whole change when the stored
 * row's `position` is below `minPosition`, nothing when it is at or above `maxPosition`, and in
 * between only the parts after the row's position (a replay that straddles a row: a changed shard
 * count, two checkpoints over one store); then it sets the row's `position` to `maxPosition`.
 * Times (min/max) and event-type sets are idempotent and always applied whole. Rows keyed by a
 * position (events, E2O, object changes) and O2O rows are inserted once and ignored when present.
 * Declared types keep, per attribute, the position that declared it last (declaredAttributesToApply).
 */
import type { EventObjectRow, EventRow, ObjectChangeRow, ObjectRelationshipRow } from '../schemas/read-models.js'
import type { Properties } from '../schemas/api.js'
import type { StoredRecord } from '../schemas/records.js'
import { mergeProperties } from './merge.js'
import { KEY_SEP } from './keys.js'

/** An event or object type seen in this run of records. */
export interface TypeChange {
  datasetId: string
  name: string
  firstSeenAt: string
  lastSeenAt: string
  /** Events of this type in the run; for object types, the new objects (countNewObjects: their count is distinct objects). */
  added: number
  /** The position of each unit of `added`, ascending. */
  addedAt: number[]
  minPosition: number
  maxPosition: number
}

/** An object touched in this run: attributes set (merged in log order) and when. */
export interface ObjectChange {
  datasetId: string
  objectId: string
  type: string
  externalId: string
  /** Per top-level key, the last value this run set. Merge these over the stored attributes. */
  properties: Properties
  /** The attribute values each record set, in log order: `properties` is their merge. */
  deltas: { position: number; properties: Properties }[]
  firstSeenAt: string
  lastSeenAt: string
  minPosition: number
  maxPosition: number
}

/** The type changes of a run, by `<dataset>KEY_SEP<name>`. */
export type TypeChanges = Map<string, TypeChange>

/**
 * An object a record of the run names (in an event, as an upsert, or as an upsert's O2O target): its
 * OCEL 2.0 identity, shared by every read model that names objects. A store keeps one row of
 * identity per object, whichever projection wrote first, and never clears it with a projection:
 * row ids that other read models hold stay valid while one projection is rebuilt.
 */
export interface NamedObject {
  datasetId: string
  objectId: string
  type: string
  externalId: string
  /** Receipt time of the first record of the run that names it (UTC ISO 8601). */
  firstSeenAt: string
  /** Position of the first record of the run that names it. */
  position: number
  /** Its place among the objects that record names, from 0 (projections/named-objects.ts gives the order; below 101, docs/api.md#limits). */
  index: number
}

/** The slice of the `objects` projection (read models `objects` and `object_changes`). */
export interface ObjectsSlice {
  /** By `<dataset>KEY_SEP<object id>`. */
  objects: Map<string, ObjectChange>
  /** Attribute values each record set, in log order. */
  changes: ObjectChangeRow[]
}

/** The slice of the `events` projection (read models `events` and `event_objects`, E2O). */
export interface EventsSlice {
  events: EventRow[]
  eventObjects: EventObjectRow[]
}

/**
 * A record for the audit chain, in log order. The store writes its canonical form
 * (src/core/audit-chain.ts, chainRecord) when it chains it, not the fold: a canonical text held
 * for the whole batch outlives the garbage collector's young generation and is copied twice before
 * it dies, and a record whose link a replay finds written needs none.
 */
export interface AuditChainChange {
  datasetId: string
  position: number
  record: StoredRecord
}

/**
 * One event of the directly-follows projection's slice: its activity, times (ms since the epoch)
 * and distinct objects (E2O pairs with qualifiers merged), in log order.
 */
export interface DirectlyFollowsEvent {
  datasetId: string
  position: number
  activity: string
  time: number
  endTime: number | null
  objects: { objectId: string; type: string }[]
}

/** Whether a declared type is an event type or an object type (OCEL 2.0 `eventTypes`, `objectTypes`). */
export type DeclaredKind = 'event' | 'object'

/** One attribute declaration of a run: the type the run's last declaration gave it, and that record's position. */
export interface DeclaredAttributeChange {
  name: string
  /** An OCEL 2.0 attribute type: string, time, integer, float or boolean. */
  type: string
  position: number
}

/**
 * A type declared in this run (`TypesDeclared` records; docs/read-models.md#declared_types): its
 * attributes merged in log order (an attribute declared again takes the later type).
 */
export interface DeclaredTypeChange {
  datasetId: string
  kind: DeclaredKind
  name: string
  /** By attribute name, in order of first declaration. */
  attributes: Map<string, DeclaredAttributeChange>
  /** Positions of the run's first and last record that declared the type. */
  minPosition: number
  maxPosition: number
}

/** The declared types of a run, by `<dataset>KEY_SEP<kind>KEY_SEP<name>`. */
export type DeclaredTypeChanges = Map<string, DeclaredTypeChange>

/**
 * The slice of each projection, by projection name (README § Read models): what its pure `evolve`
 * folds a run into, and what a store writes with its checkpoint. One line per projection; the
 * registry (projections/registry.ts) and every store's writes are keyed by these names, so a
 * projection missing from either does not compile.
 */
export interface Slices {
  event_types: TypeChanges
  /** Object types; their counts of new objects are added by the store's write (countNewObjects). */
  object_types: TypeChanges
  objects: ObjectsSlice
  events: EventsSlice
  /** O2O rows in log order; a store keeps the first row of each (object, target, qualifier). */
  object_relationships: ObjectRelationshipRow[]
  /** Every record in log order; a store chains each dataset's from the last hash it holds (chainStep) and keeps one row per record. */
  audit_chain: AuditChainChange[]
  /** Events in log order; a store links their steps into the objects' traces (src/core/directly-follows.ts). */
  directly_follows: DirectlyFollowsEvent[]
  /** Declared event and object types; a store keeps each type once and each attribute at its latest declaration (declaredAttributesToApply). */
  declared_types: DeclaredTypeChanges
}

export type ProjectionName = keyof Slices

/** One key per projection (a name missing here does not compile), in the order stores write slices: the object types (which count objects) and objects before the read models that name them. */
const WRITE_ORDER: { readonly [K in ProjectionName]: true } = {
  event_types: true,
  object_types: true,
  objects: true,
  events: true,
  object_relationships: true,
  audit_chain: true,
  directly_follows: true,
  declared_types: true,
}

/** Every projection's name, in the order stores write their slices and the projector folds them. */
export const PROJECTION_NAMES: readonly ProjectionName[] = Object.keys(WRITE_ORDER) as ProjectionName[]

/** The slice batch of projection `name` in `slices`, typed by the name (undefined: not in the batch). */
export function sliceOf<K extends ProjectionName>(slices: { readonly [P in K]?: SliceBatch<P> }, name: K): SliceBatch<K> | undefined {
  return slices[name]
}

/** One projection's part of a batch: its slice, and the compare-and-set of its checkpoint from `expected` to the batch's `to`. */
export interface SliceBatch<K extends ProjectionName> {
  /** The checkpoint's name: the projection's, with a shard's suffix (src/projector/checkpoints.ts). */
  checkpoint: string
  /** The projection's code version, stored with the checkpoint. */
  version: number
  /** The checkpoint the projector read (null: none); the slice holds the records after it. */
  expected: number | null
  slice: Slices[K]
}

/** The slices of a batch, by projection name (absent: that projection's checkpoint is already at the batch's end). */
export type SliceBatches = { [K in ProjectionName]?: SliceBatch<K> }

/**
 * What a store applies in one step (ReadModelStore.apply): a slice for each projection whose
 * checkpoint is below `to`, each folded from the records after its own checkpoint, and the
 * identities of the objects those records name.
 */
export interface ChangeBatch {
  /** Position of the run's last record: every checkpoint of the batch moves to it. */
  to: number
  slices: SliceBatches
  /** Every object named by a record that some projection of the batch folded, by object id (unique across datasets: UUIDv5 of dataset, type and id). */
  objects: Map<string, NamedObject>
  /** The position of the first record of each dataset among the records some projection of the batch folded, by dataset id. */
  datasets: Map<string, number>
  /** Records folded into at least one slice. */
  recordCount: number
}

/**
 * Counts the new objects of each type in `types` (OCEL 2.0: an object type's count is its distinct
 * objects), once for every store: an object is new to the object types' read model when the first
 * position its identity row holds (written in the same transaction, before this runs) is after
 * `after`, the object types' checkpoint: that record is in this batch. Adds one unit per new object
 * to its type's `added`, at that position in `addedAt` (kept ascending), so that the replay rule
 * (typeChangeToApply) applies counts like any other part.
 * @param named the objects the batch names (ChangeBatch.objects).
 * @param firstPositionOf the stored first position of an object (undefined: no identity row, then not counted).
 */
export function countNewObjects(
  types: TypeChanges,
  named: Iterable<NamedObject>,
  after: number | null,
  firstPositionOf: (o: NamedObject) => number | undefined,
): void {
  const grown = new Set<TypeChange>()
  for (const o of named) {
    const first = firstPositionOf(o)
    if (first === undefined || (after !== null && first <= after)) continue
    const t = types.get(o.datasetId + KEY_SEP + o.type)
    if (t === undefined) continue
    t.added += 1
    t.addedAt.push(first)
    grown.add(t)
  }
  for (const t of grown) t.addedAt.sort((a, b) => a - b)
}

/** Separates the parts of a change's map key (src/core/keys.ts). */
export { KEY_SEP }

/**
 * The replay rule (the idempotency contract above), decided once for every store: what of an
 * aggregated change a store applies to a row whose last applied position is `rowPosition`
 * (undefined: no row yet). `whole` when the row is missing or behind `minPosition`; `none` when the
 * row is at or past `maxPosition` (already applied); else `after`: only the parts after the row's
 * position (a replay that straddles the row: a changed shard count, two checkpoints over one store).
 */
export function replayPart(rowPosition: number | undefined, change: { minPosition: number; maxPosition: number }): 'whole' | 'none' | 'after' {
  if (rowPosition === undefined || rowPosition < change.minPosition) return 'whole'
  return rowPosition >= change.maxPosition ? 'none' : 'after'
}

/**
 * The part of a type change a store applies over a row at `rowPosition` (replayPart), as a change a
 * guarded write (`position < minPosition`) applies whole; null when nothing is left to apply.
 */
export function typeChangeToApply(t: TypeChange, rowPosition: number | undefined): TypeChange | null {
  const part = replayPart(rowPosition, t)
  if (part !== 'after' || rowPosition === undefined) return part === 'whole' ? t : null
  const addedAt = t.addedAt.filter((p) => p > rowPosition)
  return { ...t, added: addedAt.length, addedAt, minPosition: rowPosition + 1 }
}

/**
 * The part of an object change a store applies over a row at `rowPosition` (replayPart): after a
 * straddle, only the attribute values set after the row's position, merged in log order.
 */
export function objectChangeToApply(o: ObjectChange, rowPosition: number | undefined): ObjectChange | null {
  const part = replayPart(rowPosition, o)
  if (part !== 'after' || rowPosition === undefined) return part === 'whole' ? o : null
  const deltas = o.deltas.filter((d) => d.position > rowPosition)
  const properties = deltas.reduce<Properties>((merged, d) => mergeProperties(merged, d.properties), {})
  return { ...o, properties, deltas, minPosition: rowPosition + 1 }
}

/**
 * The replay rule of declared types (docs/read-models.md#declared_types), decided once for every
 * store: a type's row takes the highest position that declared it; an attribute's row keeps the
 * type of its latest declaration, so an attribute of `change` is applied only when the stored row
 * is missing or was set by an earlier record (replayPart of its one position is `whole`). A replay
 * of records a store holds applies nothing; one that straddles a row applies what came after it.
 * @param storedPosition the position that set the stored attribute row (undefined: no row).
 * @returns the attributes to write (type and position), in the change's order.
 */
export function declaredAttributesToApply(change: DeclaredTypeChange, storedPosition: (attribute: string) => number | undefined): DeclaredAttributeChange[] {
  return [...change.attributes.values()].filter((a) => replayPart(storedPosition(a.name), { minPosition: a.position, maxPosition: a.position }) === 'whole')
}
