/**
 * ObjectClaims on the embedded SQLite file (table `object_claims`, primary key `object_id`): an
 * INSERT OR IGNORE that inserts is a claim taken first. The SQLite log calls `claimWithin` inside
 * its append transaction, so an append's records and its claims commit together.
 *
 * A claim is never taken back, so an object id once seen claimed in a committed transaction (by
 * this process or any other) stays claimed: the most recently used 20,000 of them are kept in
 * memory (about 3 MB), and a claim of one of those is answered "not first" without a statement.
 * Ids claimed in a transaction join them only once it has committed (`settle`), since a rollback
 * undoes the claim.
 */
import type { Statement } from 'better-sqlite3'
import { LRUCache } from 'lru-cache'
import type { ObjectClaims } from '../../../ports/object-claims.js'
import type { SqliteDatabase } from './database.js'

/** Object ids kept as known to be claimed: each costs about 150 bytes, and the service's peak RSS has a budget (docs/performance.md#targets). */
const KNOWN_CLAIMS_MAX = 20_000

export class SqliteObjectClaims implements ObjectClaims {
  private readonly insert: Statement<[string, string]>
  /** Ids whose claim a committed transaction holds. */
  private readonly known = new LRUCache<string, true>({ max: KNOWN_CLAIMS_MAX })
  /** Ids claimed (or found claimed) in the transaction under way: known once it commits. */
  private inTransaction: string[] = []

  constructor(private readonly db: SqliteDatabase) {
    this.insert = db.prepare('INSERT OR IGNORE INTO object_claims (object_id, dataset_id) VALUES (?, ?)')
  }

  /**
   * The claim, synchronously, in the caller's transaction (the SQLite log's append). The caller
   * calls `settle` once that transaction has committed or rolled back.
   * @returns the ids this call claimed first.
   */
  claimWithin(datasetId: string, objectIds: readonly string[]): Set<string> {
    const claimed = new Set<string>()
    for (const id of objectIds) {
      if (this.known.get(id) === true) continue
      if (this.insert.run(id, datasetId).changes === 1) claimed.add(id)
      this.inTransaction.push(id)
    }
    return claimed
  }

  /** After the transaction of `claimWithin`: its ids are known to be claimed when it committed, forgotten when it rolled back. */
  settle(committed: boolean): void {
    if (committed) for (const id of this.inTransaction) this.known.set(id, true)
    this.inTransaction = []
  }

  async claim(datasetId: string, objectIds: readonly string[]): Promise<ReadonlySet<string>> {
    let committed = false
    try {
      const claimed = this.db.transaction(() => this.claimWithin(datasetId, objectIds)).immediate()
      committed = true
      return claimed
    } finally {
      this.settle(committed)
    }
  }
}
