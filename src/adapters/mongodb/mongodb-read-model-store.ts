/**
 * ReadModelStore adapter on MongoDB (`mongodb` 7 driver; README § Read models). One collection
 * per read model (read-model-writes.ts: READ_MODEL_COLLECTIONS), holding exactly the fields of
 * src/schemas/read-models.ts, each with a unique index on its key.
 *
 * `apply` runs in one multi-document transaction: read each projection's checkpoint (compare-and-set),
 * upsert the identities of the objects the batch names, then each projection's slice by its own
 * write (mongodb-slice-writes.ts: read the positions of the aggregated rows it touches, reduce it by
 * the replay rule of src/core/read-model-changes.ts as every store does, then one
 * `bulkWrite({ordered: false})` per read model, every operation an upsert on a unique-key filter,
 * guarded by the stored `position`), then the checkpoints with their versions. MongoDB transactions need a
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
 * Why a transaction as well: an object type's `count` grows by the objects first named in the
 * batch (countNewObjects, from the identities' `first_position`), and the positions read for
 * the replay rule must also be the ones the writes go over. Writing everything with the
 * checkpoint, atomically and in one snapshot, rules both out.
 */
import type { ClientSession, Collection, Db, Document, MongoClient } from 'mongodb'
import { MongoServerError } from 'mongodb'
import { type ChangeBatch, PROJECTION_NAMES, type ProjectionName, sliceOf } from '../../core/read-model-changes.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import { CLEARING_VERSION, clearProjectionInSteps, mongoClearIo, PROJECTION_STOPS } from './mongodb-clear.js'
import { SLICE_WRITES, type MongoSliceContext } from './mongodb-slice-writes.js'
import { identityWrite, READ_MODEL_COLLECTIONS, READ_MODEL_INDEXES, RETIRED_COLLECTIONS, storedKey } from './read-model-writes.js'

/** A projection's checkpoint: `_id` is its name (src/projector/checkpoints.ts). */
interface CheckpointDoc {
  _id: string
  position: number
  /** The projection's code version. */
  version: number
  updated_at: string
}

const DUPLICATE_KEY = 11000

export { PROJECTION_STOPS } from './mongodb-clear.js'

interface StopDoc {
  _id: string
  stop: ProjectionStop
}

export class MongoReadModelStore implements ReadModelStore {
  private readonly checkpointsC: Collection<CheckpointDoc>

  /**
   * @param client a connected client to a replica set (transactions); not closed by this store.
   * @param db the database holding the read models (MONGODB_URL's database).
   */
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {
    this.checkpointsC = db.collection<CheckpointDoc>(READ_MODEL_COLLECTIONS.checkpoints)
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

  async apply(batch: ChangeBatch): Promise<void> {
    const parts = Object.values(batch.slices)
    const session = this.client.startSession()
    try {
      await session.withTransaction(
        async () => {
          for (const part of parts) {
            const current = (await this.checkpointsC.findOne({ _id: part.checkpoint }, { session }))?.position ?? null
            if (current !== part.expected) throw new CheckpointConflictError(part.checkpoint, part.expected, current)
          }
          const objects = await this.writeIdentities(batch, session)
          const ctx: MongoSliceContext = { db: this.db, session, objects, named: batch.objects }
          for (const name of PROJECTION_NAMES) await this.writeSlice(ctx, batch, name)
          for (const part of parts) await this.moveCheckpoint(session, part.checkpoint, part.expected, batch.to, part.version)
        },
        { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } },
      )
    } finally {
      await session.endSession()
    }
  }

  private async writeSlice<K extends ProjectionName>(ctx: MongoSliceContext, batch: ChangeBatch, name: K): Promise<void> {
    const part = sliceOf(batch.slices, name)
    if (part !== undefined) await SLICE_WRITES[name](ctx, part)
  }

  /**
   * The identity step: upserts every object the batch names (identityWrite), then reads back each
   * one's `position` and `first_position` (in this transaction's snapshot) for the slices' writes.
   * @returns by storedKey (`<dataset>KEY_SEP<object id>`).
   */
  private async writeIdentities(batch: ChangeBatch, session: ClientSession): Promise<Map<string, { position: number; firstPosition: number }>> {
    const out = new Map<string, { position: number; firstPosition: number }>()
    if (batch.objects.size === 0) return out
    const objects = this.db.collection<Document>(READ_MODEL_COLLECTIONS.objects)
    await objects.bulkWrite([...batch.objects.values()].map(identityWrite), { ordered: false, session })
    const byDataset = new Map<string, string[]>()
    for (const o of batch.objects.values()) byDataset.set(o.datasetId, [...(byDataset.get(o.datasetId) ?? []), o.objectId])
    for (const [datasetId, ids] of byDataset) {
      const rows = objects.find(
        { dataset_id: datasetId, object_id: { $in: ids } },
        { session, projection: { _id: 0, object_id: 1, position: 1, first_position: 1 } },
      )
      for await (const row of rows) {
        if (typeof row.object_id !== 'string' || typeof row.position !== 'number' || typeof row.first_position !== 'number') continue
        out.set(storedKey(datasetId, row.object_id), { position: row.position, firstPosition: row.first_position })
      }
    }
    return out
  }

  /** Compare-and-set of the checkpoint inside the transaction: the filter holds the expected position. */
  private async moveCheckpoint(session: ClientSession, name: string, expected: number | null, to: number, version: number): Promise<void> {
    const updated_at = new Date().toISOString()
    try {
      const result =
        expected === null
          ? await this.checkpointsC.updateOne(
              { _id: name, position: { $exists: false } },
              { $set: { position: to, version, updated_at } },
              { upsert: true, session },
            )
          : await this.checkpointsC.updateOne(
              // A checkpoint marked by a clear under way (mongodb-clear.ts) is not moved.
              { _id: name, position: expected, version: { $ne: CLEARING_VERSION } },
              { $set: { position: to, version, updated_at } },
              { session },
            )
      if (result.matchedCount + result.upsertedCount !== 1) throw new CheckpointConflictError(name, expected, await this.checkpoint(name))
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) throw new CheckpointConflictError(name, expected, await this.checkpoint(name))
      throw error
    }
  }

  /**
   * Clears in bounded steps outside a transaction (mongodb-clear.ts): the checkpoints are marked
   * first and deleted last, so an interrupted clear is cleared again at the next start.
   */
  async clearProjection(projection: ProjectionName, checkpoints: readonly string[]): Promise<void> {
    await clearProjectionInSteps(mongoClearIo(this.db), projection, checkpoints)
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
      return {
        projection: name,
        position: c?.position ?? null,
        version: c?.version ?? null,
        updated_at: c?.updated_at ?? null,
        stopped: stops.find((s) => s._id === name)?.stop ?? null,
      }
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
