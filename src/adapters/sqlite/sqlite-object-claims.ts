/**
 * ObjectClaims on the embedded SQLite file (table `object_claims`, primary key `object_id`): an
 * INSERT OR IGNORE that inserts is a claim taken first. The SQLite log calls `claimWithin` inside
 * its append transaction, so an append's records and its claims commit together.
 */
import type { Statement } from 'better-sqlite3'
import type { ObjectClaims } from '../../ports/object-claims.js'
import type { SqliteDatabase } from './database.js'

export class SqliteObjectClaims implements ObjectClaims {
  private readonly insert: Statement<[string, string]>

  constructor(private readonly db: SqliteDatabase) {
    this.insert = db.prepare('INSERT OR IGNORE INTO object_claims (object_id, dataset_id) VALUES (?, ?)')
  }

  /**
   * The claim, synchronously, in the caller's transaction (the SQLite log's append).
   * @returns the ids this call claimed first.
   */
  claimWithin(datasetId: string, objectIds: readonly string[]): Set<string> {
    const claimed = new Set<string>()
    for (const id of objectIds) if (this.insert.run(id, datasetId).changes === 1) claimed.add(id)
    return claimed
  }

  async claim(datasetId: string, objectIds: readonly string[]): Promise<ReadonlySet<string>> {
    return this.db.transaction(() => this.claimWithin(datasetId, objectIds)).immediate()
  }
}
