/**
 * KeyStore adapter on MongoDB (docs/api.md#authentication-and-scopes; docs/architecture.md#records-and-ids). Collections:
 * `datasets` (unique on id), `api_keys` (unique on key_id). Only the hash of a key's secret is stored.
 * Object identity claims are in mongodb-object-claims.ts.
 */
import type { Collection, Db, IndexDescription } from 'mongodb'
import { MongoServerError } from 'mongodb'
import type { ApiKey, Dataset, KeyStore } from '../../ports/key-store.js'
import { DatasetExistsError } from '../../ports/key-store.js'
import { DUPLICATE_KEY } from './claim-writes.js'

/** Where the key store lives. */
export const KEY_STORE_COLLECTIONS = { datasets: 'datasets', apiKeys: 'api_keys' } as const

/** Unique indexes of the key store, created at start. */
export const KEY_STORE_INDEXES: Record<(typeof KEY_STORE_COLLECTIONS)[keyof typeof KEY_STORE_COLLECTIONS], IndexDescription[]> = {
  datasets: [
    { key: { id: 1 }, unique: true, name: 'key' },
    { key: { created_at: 1, id: 1 }, name: 'by_created' },
  ],
  api_keys: [
    { key: { key_id: 1 }, unique: true, name: 'key' },
    { key: { created_at: 1, key_id: 1 }, name: 'by_created' },
  ],
}

/** A key document as stored: those written before keys had their own rate limit lack the field (read as null: the default). */
function withRateLimit(key: Omit<ApiKey, 'rate_limit_per_minute'> & { rate_limit_per_minute?: number | null }): ApiKey {
  return { ...key, rate_limit_per_minute: key.rate_limit_per_minute ?? null }
}

export class MongoKeyStore implements KeyStore {
  private readonly datasets: Collection<Dataset>
  private readonly apiKeys: Collection<ApiKey>

  /** @param db the database of MONGODB_URL; the client is closed by the composition root. */
  constructor(private readonly db: Db) {
    this.datasets = db.collection<Dataset>(KEY_STORE_COLLECTIONS.datasets)
    this.apiKeys = db.collection<ApiKey>(KEY_STORE_COLLECTIONS.apiKeys)
  }

  /** Creates the unique indexes (idempotent); run once at start, before any claim. */
  async createIndexes(): Promise<void> {
    for (const [name, indexes] of Object.entries(KEY_STORE_INDEXES)) await this.db.collection(name).createIndexes(indexes)
  }

  async createDataset(dataset: Dataset): Promise<void> {
    try {
      // A copy: the driver adds `_id` to the document it inserts.
      await this.datasets.insertOne({ id: dataset.id, name: dataset.name, created_at: dataset.created_at })
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) throw new DatasetExistsError(`dataset ${dataset.id} exists`)
      throw error
    }
  }

  async findDataset(id: string): Promise<Dataset | null> {
    const found = await this.datasets.findOne({ id })
    if (found === null) return null
    const { _id, ...dataset } = found
    return dataset
  }

  async listDatasets(): Promise<Dataset[]> {
    return (await this.datasets.find({}).sort({ created_at: 1, id: 1 }).toArray()).map(({ _id, ...dataset }) => dataset)
  }

  async createKey(key: ApiKey): Promise<void> {
    await this.apiKeys.insertOne({ ...key, scopes: [...key.scopes] })
  }

  async findKey(keyId: string): Promise<ApiKey | null> {
    const found = await this.apiKeys.findOne({ key_id: keyId })
    if (found === null) return null
    const { _id, ...key } = found
    return withRateLimit(key)
  }

  async listKeys(): Promise<ApiKey[]> {
    return (await this.apiKeys.find({}).sort({ created_at: 1, key_id: 1 }).toArray()).map(({ _id, ...key }) => withRateLimit(key))
  }

  async revokeKey(keyId: string, at: string): Promise<boolean> {
    const result = await this.apiKeys.updateOne({ key_id: keyId, revoked_at: null }, { $set: { revoked_at: at } })
    return result.modifiedCount === 1
  }

  async setRateLimit(keyId: string, perMinute: number | null): Promise<boolean> {
    const result = await this.apiKeys.updateOne({ key_id: keyId }, { $set: { rate_limit_per_minute: perMinute } })
    return result.matchedCount === 1
  }

  async close(): Promise<void> {}
}
