/**
 * ObjectClaims on MongoDB: collection `object_claims`, unique on `object_id`. A claim is an upsert
 * with `$setOnInsert`: the ids whose upsert inserted a document are the ones this call claimed
 * first; of two concurrent claims of one id, the loser matches the winner's document (or gets a
 * duplicate-key error, which also means "already claimed").
 */
import type { Collection, Db, IndexDescription } from 'mongodb'
import type { ObjectClaims } from '../../ports/object-claims.js'
import { takeClaims } from './claim-writes.js'

interface ClaimDoc {
  object_id: string
  dataset_id: string
}

/** The unique index that makes a claim exact (named `key`, as every unique key index in Ocelog's MongoDB). */
export const OBJECT_CLAIM_INDEXES: Record<'object_claims', IndexDescription[]> = {
  object_claims: [{ key: { object_id: 1 }, unique: true, name: 'key' }],
}

export class MongoObjectClaims implements ObjectClaims {
  private readonly claims: Collection<ClaimDoc>

  constructor(private readonly db: Db) {
    this.claims = db.collection<ClaimDoc>('object_claims')
  }

  /** Creates the unique index on `object_id` (idempotent). */
  async createIndexes(): Promise<void> {
    for (const [name, indexes] of Object.entries(OBJECT_CLAIM_INDEXES)) await this.db.collection(name).createIndexes(indexes)
  }

  async claim(datasetId: string, objectIds: readonly string[]): Promise<ReadonlySet<string>> {
    const ids = [...new Set(objectIds)]
    if (ids.length === 0) return new Set()
    const ops = ids.map((object_id) => ({
      updateOne: { filter: { object_id }, update: { $setOnInsert: { object_id, dataset_id: datasetId } }, upsert: true },
    }))
    const claimed = new Set<string>()
    for (const index of await takeClaims(this.claims, ops)) {
      const id = ids[index]
      if (id !== undefined) claimed.add(id)
    }
    return claimed
  }
}
