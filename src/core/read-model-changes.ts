/**
 * The read-model changes a run of records implies (README § Read models): what every projection's
 * pure `evolve` (projections/) writes into and what a read-model store applies (ReadModelStore.apply),
 * with the checkpoint, in one step. No I/O here.
 *
 * Idempotency contract for stores: every aggregated change carries `minPosition`/`maxPosition`,
 * the range of records that produced it, and the positions of its non-idempotent parts (counts
 * in `addedAt`, attribute values in `deltas`). A store applies the whole change when the stored
 * row's `position` is below `minPosition`, nothing when it is at or above `maxPosition`, and in
 * between only the parts after the row's position (a replay that straddles a row: a changed shard
 * count, two checkpoints over one store); then it sets the row's `position` to `maxPosition`.
 * Times (min/max) and event-type sets are idempotent and always applied whole. Rows keyed by a
 * position (events, E2O, object changes) and O2O rows are inserted once and ignored when present.
 */
import type { EventObjectRow, EventRow, ObjectChangeRow, ObjectRelationshipRow } from '../schemas/read-models.js'
import type { Properties } from '../schemas/api.js'
import { mergeProperties } from './merge.js'

/** An event or object type seen in this run of records. */
export interface TypeChange {
  datasetId: string
  name: string
  firstSeenAt: string
  lastSeenAt: string
  /** Events of this type in the run (always 0 for object types: their count is distinct objects). */
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

/** A record's canonical form (src/core/audit-chain.ts) for the audit chain, in log order. */
export interface AuditChainChange {
  datasetId: string
  position: number
  canonical: string
}

/** The changes of one run of records, one field per read model. */
export interface ChangeSet {
  eventTypes: Map<string, TypeChange>
  objectTypes: Map<string, TypeChange>
  objects: Map<string, ObjectChange>
  objectChanges: ObjectChangeRow[]
  events: EventRow[]
  eventObjects: EventObjectRow[]
  /** O2O rows in log order; a store keeps the first row of each (object, target, qualifier). */
  objectRelationships: ObjectRelationshipRow[]
  /** Every record in log order; a store chains each dataset's from the last hash it holds (chainStep) and keeps one row per record. */
  auditChain: AuditChainChange[]
  /** Records folded in; the store's checkpoint moves to the last one's position. */
  recordCount: number
}

export function emptyChangeSet(): ChangeSet {
  return {
    eventTypes: new Map(),
    objectTypes: new Map(),
    objects: new Map(),
    objectChanges: [],
    events: [],
    eventObjects: [],
    objectRelationships: [],
    auditChain: [],
    recordCount: 0,
  }
}

/** Separates the parts of a change's map key (ids and names hold no NUL). */
export const KEY_SEP = '\u0000'

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
