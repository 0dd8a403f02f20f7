/**
 * The MongoDB store's writes, one function per projection's slice (README § Read models): what
 * adding a read model adds here (and its clearing to mongodb-clear.ts). Each runs inside the
 * store's transaction (mongodb-read-model-store.ts), after the objects' identities.
 */
import type { AnyBulkWriteOperation, ClientSession, Db, Document } from 'mongodb'
import { countNewObjects, type NamedObject, type ProjectionName, type SliceBatch, type TypeChanges } from '../../core/read-model-changes.js'
import { type AuditChainDoc, writeAuditChain } from './mongodb-audit-chain.js'
import { writeDeclaredTypes } from './mongodb-declared-types.js'
import { mongoDfIo, writeDirectlyFollows } from './mongodb-df-writes.js'
import { eventsWrites, objectRelationshipsWrites, objectsWrites, READ_MODEL_COLLECTIONS, storedKey, typeWrites } from './read-model-writes.js'

/** What every slice write gets beside its slice. */
export interface MongoSliceContext {
  db: Db
  session: ClientSession
  /** The stored position and first position of each object the batch names, by storedKey. */
  objects: ReadonlyMap<string, { position: number; firstPosition: number }>
  /** The objects the batch names (ChangeBatch.objects). */
  named: ReadonlyMap<string, NamedObject>
}

/** One unordered bulkWrite in the transaction, when there is anything to write. */
async function bulk<T extends Document>(ctx: MongoSliceContext, collection: string, ops: AnyBulkWriteOperation<T>[]): Promise<void> {
  if (ops.length > 0) await ctx.db.collection<T>(collection).bulkWrite(ops, { ordered: false, session: ctx.session })
}

/** The stored `position` of the type rows `changes` touch, by storedKey. */
async function typePositions(ctx: MongoSliceContext, collection: string, changes: TypeChanges): Promise<Map<string, number>> {
  const byDataset = new Map<string, string[]>()
  for (const t of changes.values()) byDataset.set(t.datasetId, [...(byDataset.get(t.datasetId) ?? []), t.name])
  const out = new Map<string, number>()
  for (const [datasetId, names] of byDataset) {
    const rows = ctx.db
      .collection<Document>(collection)
      .find({ dataset_id: datasetId, name: { $in: names } }, { session: ctx.session, projection: { _id: 0, name: 1, position: 1 } })
    for await (const row of rows) {
      if (typeof row.name === 'string' && typeof row.position === 'number') out.set(storedKey(datasetId, row.name), row.position)
    }
  }
  return out
}

async function writeEventTypes(ctx: MongoSliceContext, { slice }: SliceBatch<'event_types'>): Promise<void> {
  const c = READ_MODEL_COLLECTIONS.eventTypes
  await bulk(ctx, c, typeWrites(slice, await typePositions(ctx, c, slice)))
}

/** Object types, with their counts of new objects (countNewObjects over the identities' first positions). */
async function writeObjectTypes(ctx: MongoSliceContext, { slice, expected }: SliceBatch<'object_types'>): Promise<void> {
  countNewObjects(slice, ctx.named.values(), expected, (o) => ctx.objects.get(storedKey(o.datasetId, o.objectId))?.firstPosition)
  const c = READ_MODEL_COLLECTIONS.objectTypes
  await bulk(ctx, c, typeWrites(slice, await typePositions(ctx, c, slice)))
}

async function writeObjects(ctx: MongoSliceContext, { slice }: SliceBatch<'objects'>): Promise<void> {
  const positions = new Map([...ctx.objects].map(([key, o]) => [key, o.position]))
  const w = objectsWrites(slice, positions)
  await bulk(ctx, READ_MODEL_COLLECTIONS.objects, w.objects)
  await bulk(ctx, READ_MODEL_COLLECTIONS.objectChanges, w.objectChanges)
}

async function writeEvents(ctx: MongoSliceContext, { slice }: SliceBatch<'events'>): Promise<void> {
  const w = eventsWrites(slice)
  await bulk(ctx, READ_MODEL_COLLECTIONS.events, w.events)
  await bulk(ctx, READ_MODEL_COLLECTIONS.eventObjects, w.eventObjects)
}

async function writeObjectRelationships(ctx: MongoSliceContext, { slice }: SliceBatch<'object_relationships'>): Promise<void> {
  await bulk(ctx, READ_MODEL_COLLECTIONS.objectRelationships, objectRelationshipsWrites(slice))
}

/** The write of each projection's slice, by name. */
export const SLICE_WRITES: { readonly [K in ProjectionName]: (ctx: MongoSliceContext, part: SliceBatch<K>) => Promise<void> } = {
  event_types: writeEventTypes,
  object_types: writeObjectTypes,
  objects: writeObjects,
  events: writeEvents,
  object_relationships: writeObjectRelationships,
  audit_chain: (ctx, { slice }) => writeAuditChain(ctx.db.collection<AuditChainDoc>(READ_MODEL_COLLECTIONS.auditChain), slice, ctx.session),
  directly_follows: (ctx, { slice }) => writeDirectlyFollows(mongoDfIo(ctx.db, ctx.session), slice),
  declared_types: (ctx, { slice }) => writeDeclaredTypes(ctx.db, ctx.session, slice),
}
