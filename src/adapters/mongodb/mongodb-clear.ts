/**
 * Clearing one projection's read models in MongoDB for its rebuild alone (ReadModelStore.clearProjection;
 * README § Read models), in bounded steps and outside any transaction: a rebuild of a large dataset
 * would pass MongoDB's 60 s limit on one transaction (`transactionLifetimeLimitSeconds`).
 *
 * The steps, each its own small write:
 * 1. the projection's checkpoints are marked: their `version` becomes CLEARING_VERSION, which no
 *    build writes, and `apply` refuses to move a marked checkpoint (CheckpointConflictError);
 * 2. its collections are emptied, CLEAR_BATCH documents at a time in `_id` order; the objects
 *    projection resets its attribute fields the same way (identities stay);
 * 3. its stops, then its checkpoints, are deleted: the last step.
 * Interrupted anywhere, the checkpoints are still there and marked, so the read models are never
 * taken for applied state: the next projector start finds a stored version that differs from its
 * code's, and clears again from the start (every step is idempotent). Only once the checkpoints are
 * gone does the projector rebuild the projection from the log.
 */
import type { Db, Document } from 'mongodb'
import type { ProjectionName } from '../../core/read-model-changes.js'
import { READ_MODEL_COLLECTIONS } from './read-model-writes.js'

/** Documents one step deletes or resets, at most. */
export const CLEAR_BATCH = 1000

/** The `version` of a checkpoint whose projection is being cleared: below every version a build writes. */
export const CLEARING_VERSION = -1

/** Projections stopped on a record (`_id` is the projection's name); not a read model, so not in READ_MODEL_COLLECTIONS. */
export const PROJECTION_STOPS = 'projection_stops'

/** The writes a bounded clear makes, each one MongoDB operation without a session. */
export interface ClearIo {
  /** Sets `version` to CLEARING_VERSION on the checkpoints named. */
  markClearing(checkpoints: readonly string[]): Promise<void>
  /** Up to `limit` `_id`s of `collection` after `after` (exclusive; null = from the first), ascending. */
  ids(collection: string, after: unknown, limit: number): Promise<unknown[]>
  /** Deletes the documents of `collection` whose `_id` is at most `upTo`. */
  deleteUpTo(collection: string, upTo: unknown): Promise<void>
  /** Resets the objects whose `_id` is in (`after`, `upTo`] (after null: from the first) to their identity: no attributes, position −1. */
  resetObjects(after: unknown, upTo: unknown): Promise<void>
  /** Deletes the stops, then the checkpoints, named. */
  dropCheckpoints(checkpoints: readonly string[]): Promise<void>
}

/** Empties `collection`, CLEAR_BATCH documents per step. */
async function deleteInBatches(io: ClearIo, collection: string): Promise<void> {
  for (;;) {
    const ids = await io.ids(collection, null, CLEAR_BATCH)
    const last = ids[ids.length - 1]
    if (last === undefined) return
    await io.deleteUpTo(collection, last)
    if (ids.length < CLEAR_BATCH) return
  }
}

async function deleteAll(io: ClearIo, ...collections: string[]): Promise<void> {
  for (const c of collections) await deleteInBatches(io, c)
}

/** Resets every object's attribute fields (resetObjects), CLEAR_BATCH objects per step. */
async function resetObjectsInBatches(io: ClearIo): Promise<void> {
  let after: unknown = null
  for (;;) {
    const ids = await io.ids(READ_MODEL_COLLECTIONS.objects, after, CLEAR_BATCH)
    const last = ids[ids.length - 1]
    if (last === undefined) return
    await io.resetObjects(after, last)
    if (ids.length < CLEAR_BATCH) return
    after = last
  }
}

/**
 * How each projection's read models are emptied: its own collections. The objects projection
 * keeps each object's identity (ids, type, `created_at`, `first_position`) and clears its
 * attributes, last-seen time and position (−1: below every position).
 */
export const SLICE_CLEARS: { readonly [K in ProjectionName]: (io: ClearIo) => Promise<void> } = {
  event_types: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.eventTypes),
  object_types: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.objectTypes),
  objects: async (io) => {
    await resetObjectsInBatches(io)
    await deleteAll(io, READ_MODEL_COLLECTIONS.objectChanges)
  },
  events: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.events, READ_MODEL_COLLECTIONS.eventObjects),
  object_relationships: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.objectRelationships),
  audit_chain: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.auditChain),
  directly_follows: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.dfSteps, READ_MODEL_COLLECTIONS.dfMemberships, READ_MODEL_COLLECTIONS.dfAggregates),
  declared_types: (io) => deleteAll(io, READ_MODEL_COLLECTIONS.declaredTypes, READ_MODEL_COLLECTIONS.declaredAttributes),
}

/** ReadModelStore.clearProjection in the steps of this file's header: mark, clear in batches, drop the checkpoints last. */
export async function clearProjectionInSteps(io: ClearIo, projection: ProjectionName, checkpoints: readonly string[]): Promise<void> {
  await io.markClearing(checkpoints)
  await SLICE_CLEARS[projection](io)
  await io.dropCheckpoints(checkpoints)
}

/** ClearIo on a MongoDB database: plain operations, no session (so no transaction and its time limit). */
export function mongoClearIo(db: Db): ClearIo {
  const range = (after: unknown, upTo: unknown): Document => (after === null ? { _id: { $lte: upTo } } : { _id: { $gt: after, $lte: upTo } })
  return {
    async markClearing(checkpoints) {
      if (checkpoints.length === 0) return
      await db
        .collection<{ _id: string }>(READ_MODEL_COLLECTIONS.checkpoints)
        .updateMany({ _id: { $in: [...checkpoints] } }, { $set: { version: CLEARING_VERSION } })
    },
    async ids(collection, after, limit) {
      const filter: Document = after === null ? {} : { _id: { $gt: after } }
      const rows = await db
        .collection(collection)
        .find(filter, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray()
      return rows.map((r) => r._id)
    },
    async deleteUpTo(collection, upTo) {
      await db.collection(collection).deleteMany(range(null, upTo))
    },
    async resetObjects(after, upTo) {
      await db
        .collection(READ_MODEL_COLLECTIONS.objects)
        .updateMany(range(after, upTo), [{ $set: { properties: { $literal: {} }, updated_at: '$created_at', position: -1 } }])
    },
    async dropCheckpoints(checkpoints) {
      if (checkpoints.length === 0) return
      await db.collection<{ _id: string }>(PROJECTION_STOPS).deleteMany({ _id: { $in: [...checkpoints] } })
      await db.collection<{ _id: string }>(READ_MODEL_COLLECTIONS.checkpoints).deleteMany({ _id: { $in: [...checkpoints] } })
    },
  }
}
