/**
 * IdempotencyClaims on MongoDB: one document per (dataset, key) in `idempotency_claims`, whose
 * `_id` is unique, so of two concurrent claims of one key exactly one inserts (README § Exactly once).
 */
import type { Collection, Db } from 'mongodb'
import type { IdempotencyClaims, StoredKeyClaim } from '../../ports/idempotency-claims.js'
import { takeClaims } from './claim-writes.js'
import { KEY_SEP } from '../../core/keys.js'

interface ClaimDocument extends StoredKeyClaim {
  _id: string
  dataset_id: string
}

/**
 * The claim's `_id`: dataset and key joined by KEY_SEP as they are (neither holds U+0000: docs/api.md#idempotency-keys).
 * Stored: not joinKey, whose code of U+0001 would give a key holding one another `_id` than the claims written before.
 */
export function claimId(datasetId: string, key: string): string {
  return datasetId + KEY_SEP + key
}

export class MongoIdempotencyClaims implements IdempotencyClaims {
  private readonly claims: Collection<ClaimDocument>

  constructor(db: Db) {
    this.claims = db.collection<ClaimDocument>('idempotency_claims')
  }

  /** IdempotencyClaims.claim; a new claim keeps its `claimedAt` (Ocelog's clock), which bounds a resume's look at the log. */
  async claim(datasetId: string, entries: readonly Omit<StoredKeyClaim, 'position' | 'appendedAt'>[]): Promise<(StoredKeyClaim | undefined)[]> {
    if (entries.length === 0) return []
    const claimedAt = new Date().toISOString()
    const ops = entries.map((e) => ({
      updateOne: {
        filter: { _id: claimId(datasetId, e.key) },
        update: { $setOnInsert: { ...e, dataset_id: datasetId, position: null, appendedAt: null, claimedAt } },
        upsert: true,
      },
    }))
    const taken = await takeClaims(this.claims, ops)
    const found = new Map<string, StoredKeyClaim>()
    const others = entries.filter((_, i) => !taken.has(i)).map((e) => claimId(datasetId, e.key))
    if (others.length > 0) {
      for (const { _id, dataset_id: _dataset, ...claim } of await this.claims.find({ _id: { $in: others } }).toArray()) found.set(_id, claim)
    }
    // A key given twice in one call: its first entry took the claim, the second finds it.
    const seen = new Set<string>()
    return entries.map((e, i) => {
      const id = claimId(datasetId, e.key)
      const first = !seen.has(id)
      seen.add(id)
      if (taken.has(i) && first) return undefined
      return found.get(id) ?? { ...e, position: null, appendedAt: null }
    })
  }

  async commit(datasetId: string, entries: readonly { key: string; position: number; appendedAt: string }[]): Promise<void> {
    if (entries.length === 0) return
    await this.claims.bulkWrite(
      entries.map((e) => ({ updateOne: { filter: { _id: claimId(datasetId, e.key) }, update: { $set: { position: e.position, appendedAt: e.appendedAt } } } })),
      { ordered: false },
    )
  }
}
