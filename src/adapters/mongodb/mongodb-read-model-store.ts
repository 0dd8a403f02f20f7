/**
 * ReadModelStore adapter on MongoDB (`mongodb` 7 driver; README § Read models). One collection
 * per read model (read-model-writes.ts: READ_MODEL_COLLECTIONS), holding exactly the fields of
 * src/schemas/read-models.ts, each with a unique index on its key.
 *
 * `apply` runs in one multi-document transaction: read the checkpoint (compare-and-set), read the
 * positions of the aggregated rows the change set touches and reduce it by the replay rule
 * (src/core/read-model-changes.ts, as every store does), then one `bulkWrite({ordered: false})`
 * per read model (every operation an upsert on a unique-key filter, guarded by the stored
 * `position`), then the checkpoint update. MongoDB transactions need a
 * replica set (a single-node one is enough; docker-compose.yml runs one), which
 * `openProductionBackends` checks at start.
 *
 * **A worker that dies between bulkWrites** leaves nothing behind: the transaction is aborted, the
 * checkpoint still holds `expected`, and the next worker (or the same one restarted) reads the same
 * records from the log and applies them again. The replay rule makes any re-application add only
 * what a row lacks (nothing to an aggregated row at or past the change's `maxPosition`, only the
 * records after its position to one the replay straddles; a position-keyed row is written once),
 * so a replay of an already applied range — a rebuild racing a worker, two workers with one
 * checkpoint name (the losing compare-and-set throws CheckpointConflictError), or old and new
 * workers after a change of shard count — changes nothing.
 *
 * Why a transaction as well: an object type's `count` grows by the objects a batch inserted (the
 * objects bulkWrite's `upsertedIds`); a worker that died between that bulkWrite and the count's
 * update would leave objects that a replay finds present and never counts. The positions read for
 * the replay rule must also be the ones the writes go over. Writing everything with the
 * checkpoint, atomically and in one snapshot, rules both out.
 */
import { type AuditChainDoc, writeAuditChain } from './mongodb-audit-chain.js'
import type { ClientSession, Collection, Db, Document, MongoClient } from 'mongodb'
import { MongoServerError } from 'mongodb'
import type { ChangeSet } from '../../core/read-model-changes.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow, ObjectTypeRow } from '../../schemas/read-models.js'
import {
  changeSetWrites,
  changesToApply,
  newObjectsPerType,
  READ_MODEL_COLLECTIONS,
  READ_MODEL_INDEXES,
  RETIRED_COLLECTIONS,
  type StoredPositions,
  storedKey,
} from './read-model-writes.js'

/** A projector's checkpoint: `_id` is the projector name. */
interface CheckpointDoc {
  _id: string
  position: number
  updated_at: string
}

const DUPLICATE_KEY = 11000

/** Projections stopped on a record (`_id` is the projection's name); not a read model, so not in READ_MODEL_COLLECTIONS. */
export const PROJECTION_STOPS = 'projection_stops'

interface StopDoc {
  _id: string
  stop: ProjectionStop
}

export class MongoReadModelStore implements ReadModelStore {
  private readonly eventTypesC: Collection<EventTypeRow>
  private readonly objectTypesC: Collection<ObjectTypeRow>
  private readonly objectsC: Collection<ObjectRow>
  private readonly objectChangesC: Collection<ObjectChangeRow>
  private readonly eventsC: Collection<EventRow>
  private readonly eventObjectsC: Collection<EventObjectRow>
  private readonly objectRelationshipsC: Collection<ObjectRelationshipRow>
  private readonly checkpointsC: Collection<CheckpointDoc>

  /**
   * @param client a connected client to a replica set (transactions); not closed by this store.
   * @param db the database holding the read models (MONGODB_URL's database).
   */
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {
    const c = READ_MODEL_COLLECTIONS
    this.eventTypesC = db.collection<EventTypeRow>(c.eventTypes)
    this.objectTypesC = db.collection<ObjectTypeRow>(c.objectTypes)
    this.objectsC = db.collection<ObjectRow>(c.objects)
    this.objectChangesC = db.collection<ObjectChangeRow>(c.objectChanges)
    this.eventsC = db.collection<EventRow>(c.events)
    this.eventObjectsC = db.collection<EventObjectRow>(c.eventObjects)
    this.objectRelationshipsC = db.collection<ObjectRelationshipRow>(c.objectRelationships)
    this.checkpointsC = db.collection<CheckpointDoc>(c.checkpoints)
  }

  /** Creates the collections' indexes and drops retired read models (both idempotent); run once at start. */
  async createIndexes(): Promise<void> {
    for (const [name, indexes] of Object.entries(READ_MODEL_INDEXES)) {
      await this.db.collection(name).createIndexes(indexes)
    }
    for (const name of RETIRED_COLLECTIONS) {
      if ((await this.db.listCollections({ name }, { nameOnly: true }).toArray()).length > 0) await this.db.dropCollection(name)
    }
  }

  async checkpoint(name: string): Promise<number | null> {
    return (await this.checkpointsC.findOne({ _id: name }))?.position ?? null
  }

  async apply(name: string, expected: number | null, to: number, changes: ChangeSet): Promise<void> {
    const session = this.client.startSession()
    try {
      await session.withTransaction(
        async () => {
          const current = (await this.checkpointsC.findOne({ _id: name }, { session }))?.position ?? null
          if (current !== expected) throw new CheckpointConflictError(name, expected, current)
          // The replay rule needs the rows' positions, read in this transaction's snapshot.
          const stored: StoredPositions = {
            eventTypes: await this.positionsOf(READ_MODEL_COLLECTIONS.eventTypes, 'name', changes.eventTypes.values(), (t) => t.name, session),
            objectTypes: await this.positionsOf(READ_MODEL_COLLECTIONS.objectTypes, 'name', changes.objectTypes.values(), (t) => t.name, session),
            objects: await this.positionsOf(READ_MODEL_COLLECTIONS.objects, 'object_id', changes.objects.values(), (o) => o.objectId, session),
          }
          const writes = changeSetWrites(changesToApply(changes, stored))
          const opts = { ordered: false, session }
          if (writes.eventTypes.length > 0) await this.eventTypesC.bulkWrite(writes.eventTypes, opts)
          if (writes.objectTypes.length > 0) await this.objectTypesC.bulkWrite(writes.objectTypes, opts)
          if (writes.objects.length > 0) {
            const result = await this.objectsC.bulkWrite(writes.objects, opts)
            const upserted = Object.keys(result.upsertedIds).map(Number)
            for (const t of newObjectsPerType(writes.objectTypeOf, upserted).values()) {
              await this.objectTypesC.updateOne({ dataset_id: t.datasetId, name: t.type }, { $inc: { count: t.added } }, { session })
            }
          }
          if (writes.objectChanges.length > 0) await this.objectChangesC.bulkWrite(writes.objectChanges, opts)
          if (writes.events.length > 0) await this.eventsC.bulkWrite(writes.events, opts)
          if (writes.eventObjects.length > 0) await this.eventObjectsC.bulkWrite(writes.eventObjects, opts)
          if (writes.objectRelationships.length > 0) await this.objectRelationshipsC.bulkWrite(writes.objectRelationships, opts)
          await writeAuditChain(this.db.collection<AuditChainDoc>(READ_MODEL_COLLECTIONS.auditChain), changes.auditChain, session)
          await this.moveCheckpoint(session, name, expected, to)
        },
        { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } },
      )
    } finally {
      await session.endSession()
    }
  }

  /**
   * The stored `position` of the rows of the collection named `collection` that `changes` touch, by StoredPositions key.
   * @param field the row's key field besides `dataset_id` (`name` or `object_id`).
   */
  private async positionsOf<C extends { datasetId: string }>(
    collection: string,
    field: 'name' | 'object_id',
    changes: Iterable<C>,
    keyOf: (c: C) => string,
    session: ClientSession,
  ): Promise<Map<string, number>> {
    const byDataset = new Map<string, string[]>()
    for (const c of changes) byDataset.set(c.datasetId, [...(byDataset.get(c.datasetId) ?? []), keyOf(c)])
    const out = new Map<string, number>()
    for (const [datasetId, keys] of byDataset) {
      const rows = this.db
        .collection<Document>(collection)
        .find({ dataset_id: datasetId, [field]: { $in: keys } }, { session, projection: { _id: 0, [field]: 1, position: 1 } })
      for await (const row of rows) {
        const key = row[field]
        if (typeof key === 'string' && typeof row.position === 'number') out.set(storedKey(datasetId, key), row.position)
      }
    }
    return out
  }

  /** Compare-and-set of the checkpoint inside the transaction: the filter holds the expected position. */
  private async moveCheckpoint(session: ClientSession, name: string, expected: number | null, to: number): Promise<void> {
    const updated_at = new Date().toISOString()
    try {
      const result =
        expected === null
          ? await this.checkpointsC.updateOne({ _id: name, position: { $exists: false } }, { $set: { position: to, updated_at } }, { upsert: true, session })
          : await this.checkpointsC.updateOne({ _id: name, position: expected }, { $set: { position: to, updated_at } }, { session })
      if (result.matchedCount + result.upsertedCount !== 1) throw new CheckpointConflictError(name, expected, await this.checkpoint(name))
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) throw new CheckpointConflictError(name, expected, await this.checkpoint(name))
      throw error
    }
  }

  async reset(): Promise<void> {
    for (const name of Object.values(READ_MODEL_COLLECTIONS)) await this.db.collection(name).deleteMany({})
    await this.db.collection(PROJECTION_STOPS).deleteMany({})
  }

  async projections(): Promise<ProjectionState[]> {
    const checkpoints = await this.checkpointsC.find({}).toArray()
    const stops = await this.db.collection<StopDoc>(PROJECTION_STOPS).find({}).toArray()
    const names = [...new Set([...checkpoints.map((c) => c._id), ...stops.map((s) => s._id)])].sort()
    return names.map((name) => {
      const c = checkpoints.find((x) => x._id === name)
      return { projection: name, position: c?.position ?? null, updated_at: c?.updated_at ?? null, stopped: stops.find((s) => s._id === name)?.stop ?? null }
    })
  }

  async recordStop(stop: ProjectionStop): Promise<void> {
    await this.db.collection<StopDoc>(PROJECTION_STOPS).replaceOne({ _id: stop.projection }, { stop }, { upsert: true })
  }

  async clearStop(name: string): Promise<void> {
    await this.db.collection<StopDoc>(PROJECTION_STOPS).deleteOne({ _id: name })
  }

  /** The MongoClient is shared with the key store and closed by the composition root. */
  async close(): Promise<void> {}
}
