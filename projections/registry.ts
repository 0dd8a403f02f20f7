/**
 * The registry of projections (README § Read models): one module per projection, each declaring
 * `{ name, version, readModels, emptySlice, evolve }` (projection.ts), keyed here by its name. Adding
 * a read model is its module, its line here (and its slice's line in `Slices`,
 * src/core/read-model-changes.ts), its writes in each store and its queries; the compiler asks for
 * each. This folder depends only on src/core and the record schemas.
 */
import {
  type ChangeBatch,
  type NamedObject,
  PROJECTION_NAMES,
  type ProjectionName,
  type SliceBatch,
  type SliceBatches,
  type Slices,
} from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { auditChain } from './audit-chain.js'
import { declaredTypes } from './declared-types.js'
import { directlyFollows } from './directly-follows.js'
import { events } from './events.js'
import { eventTypes } from './event-types.js'
import { nameObjects } from './named-objects.js'
import { objectRelationships } from './object-relationships.js'
import { objects } from './objects.js'
import { objectTypes } from './object-types.js'
import type { Projection } from './projection.js'

export type { Projection }

/** Every projection, by name. */
export const PROJECTIONS: { readonly [K in ProjectionName]: Projection<K> } = {
  event_types: eventTypes,
  object_types: objectTypes,
  objects,
  events,
  object_relationships: objectRelationships,
  audit_chain: auditChain,
  directly_follows: directlyFollows,
  declared_types: declaredTypes,
}

export { PROJECTION_NAMES }

/** Calls `visit` with each projection, in PROJECTION_NAMES order, typed by its name. */
export function forEachProjection(visit: <K extends ProjectionName>(projection: Projection<K>) => void): void {
  const one = <K extends ProjectionName>(name: K) => visit(PROJECTIONS[name])
  for (const name of PROJECTION_NAMES) one(name)
}

/** Folds `records` (log order) through one projection into a new slice. */
export function foldSlice<K extends ProjectionName>(projection: Projection<K>, records: readonly StoredRecord[]): Slices[K] {
  const slice = projection.emptySlice()
  for (const record of records) projection.evolve(slice, record)
  return slice
}

/** Every projection's slice of `records`. */
export type SliceSet = { [K in ProjectionName]: Slices[K] }

/**
 * Folds records (ascending `position`) through every projection: one slice each.
 * @param records records in log order, decoded by the one record decoder; a record type no
 *   projection knows throws (see unreachable.ts), since skipping one would silently corrupt the read models.
 */
export function foldRecords(records: readonly StoredRecord[]): SliceSet {
  return {
    event_types: foldSlice(PROJECTIONS.event_types, records),
    object_types: foldSlice(PROJECTIONS.object_types, records),
    objects: foldSlice(PROJECTIONS.objects, records),
    events: foldSlice(PROJECTIONS.events, records),
    object_relationships: foldSlice(PROJECTIONS.object_relationships, records),
    audit_chain: foldSlice(PROJECTIONS.audit_chain, records),
    directly_follows: foldSlice(PROJECTIONS.directly_follows, records),
    declared_types: foldSlice(PROJECTIONS.declared_types, records),
  }
}

/** Where one projection stands before a batch: its checkpoint's name and position (null: none). */
export interface ProjectionCursor {
  checkpoint: string
  expected: number | null
}

const after = (expected: number | null) => (r: StoredRecord) => expected === null || r.position > expected

/**
 * The batch a store applies for a run of records (ReadModelStore.apply): for each projection with a
 * cursor below `to`, the slice of the records after its checkpoint; the objects those records name.
 * @param records the run, in log order (a shard's own records only); may be empty (the checkpoints still move).
 * @param cursors the projections to fold, by name; a projection at or past `to` is left out.
 * @param to the position of the run's last record read (shards: whichever dataset it belongs to).
 */
export function foldBatch(records: readonly StoredRecord[], cursors: { readonly [K in ProjectionName]?: ProjectionCursor }, to: number): ChangeBatch {
  return buildBatch(
    records,
    to,
    (name) => {
      const cursor = cursors[name]
      return cursor === undefined || (cursor.expected !== null && cursor.expected >= to) ? undefined : cursor
    },
    true,
  )
}

/**
 * A batch of every projection's slice of all of `records`, whatever the checkpoints: a replay of
 * records a store may already hold (the idempotency contract's tests, a replay by hand).
 * @param checkpointOf each projection's checkpoint name and the position it moves from.
 */
export function wholeBatch(records: readonly StoredRecord[], to: number, checkpointOf: (projection: ProjectionName) => ProjectionCursor): ChangeBatch {
  return buildBatch(records, to, checkpointOf, false)
}

function buildBatch(
  records: readonly StoredRecord[],
  to: number,
  cursorOf: (projection: ProjectionName) => ProjectionCursor | undefined,
  afterCheckpoints: boolean,
): ChangeBatch {
  const slices: SliceBatches = {}
  let lowest: number | null | undefined
  // The records after each checkpoint, once per distinct checkpoint (most runs have one).
  const afterEach = new Map<number | null, readonly StoredRecord[]>()
  const recordsAfter = (expected: number | null): readonly StoredRecord[] => {
    if (!afterCheckpoints) return records
    let found = afterEach.get(expected)
    if (found === undefined) {
      found = expected === null || (records[0]?.position ?? expected + 1) > expected ? records : records.filter(after(expected))
      afterEach.set(expected, found)
    }
    return found
  }
  forEachProjection(<K extends ProjectionName>(p: Projection<K>) => {
    const cursor = cursorOf(p.name)
    if (cursor === undefined) return
    const folded = recordsAfter(cursor.expected)
    setSlice(slices, p.name, { checkpoint: cursor.checkpoint, version: p.version, expected: cursor.expected, slice: foldSlice(p, folded) })
    if (lowest === undefined || (lowest !== null && (cursor.expected === null || cursor.expected < lowest))) lowest = cursor.expected
  })
  const folded = lowest === undefined ? [] : recordsAfter(lowest)
  const named = new Map<string, NamedObject>()
  const datasets = new Map<string, number>()
  for (const record of folded) {
    nameObjects(named, record)
    if (!datasets.has(record.datasetId)) datasets.set(record.datasetId, record.position)
  }
  return { to, slices, objects: named, datasets, recordCount: folded.length }
}

function setSlice<K extends ProjectionName>(slices: { [P in K]?: SliceBatch<P> }, name: K, batch: SliceBatch<K>): void {
  slices[name] = batch
}
