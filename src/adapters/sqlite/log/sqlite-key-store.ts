/** KeyStore adapter on the embedded SQLite file (tables `datasets`, `api_keys`). */
import type { ApiKey, Dataset, KeyStore } from '../../../ports/key-store.js'
import { DatasetExistsError } from '../../../ports/key-store.js'
import { type KeyRow, toKey } from '../../key-rows.js'
import type { Statement } from 'better-sqlite3'
import type { SqliteDatabase } from './database.js'

/** Keys kept by one store (found keys only, so unknown key ids sent at random cannot grow it). */
const CACHED_KEYS_MAX = 10_000

export class SqliteKeyStore implements KeyStore {
  /** findKey runs on every request (auth): its statements are prepared once. */
  private selectKey: Statement<[string], KeyRow> | null = null
  private dataVersion: Statement<[], number> | null = null
  /**
   * Keys found, valid while the file's `PRAGMA data_version` stays what it was when they were
   * read: SQLite changes it on this connection whenever another connection (another process,
   * such as `ocelog keys revoke`) commits to the file. The pragma does not count this connection's
   * own commits, so this store's revokeKey empties it itself (createKey need not: only keys found
   * are kept, never an absence).
   * So a revoke is seen by the next request, as a revoked key's 401 asks (docs/api.md#authentication-and-scopes), and a request costs at most one
   * pragma instead of a read of `api_keys` (bench/HISTORY.md#2026-11-25-memory-the-disk-and-paced-load).
   *
   * The pragma is read at most once per turn of the event loop (`checkedThisTurn`), for all the
   * requests that turn authenticates: under load a turn carries several, and the pragma, which opens
   * a read transaction on the WAL, cost about 9 µs each. So a revoke that commits while a turn runs
   * takes effect from the next turn, a few milliseconds at most under load.
   */
  private readonly cached = new Map<string, ApiKey>()
  private cachedAt: number | null = null
  private checkedThisTurn = false

  constructor(private readonly db: SqliteDatabase) {}

  async createDataset(dataset: Dataset): Promise<void> {
    const info = this.db.prepare('INSERT OR IGNORE INTO datasets (id, name, created_at) VALUES (?, ?, ?)').run(dataset.id, dataset.name, dataset.created_at)
    if (info.changes === 0) throw new DatasetExistsError(`dataset ${dataset.id} exists`)
  }

  async findDataset(id: string): Promise<Dataset | null> {
    const row = this.db.prepare('SELECT id, name, created_at FROM datasets WHERE id = ?').get(id) as Dataset | undefined
    return row ?? null
  }

  async listDatasets(): Promise<Dataset[]> {
    return this.db.prepare('SELECT id, name, created_at FROM datasets ORDER BY created_at, id').all() as Dataset[]
  }

  async createKey(key: ApiKey): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO api_keys (key_id, name, dataset_id, scopes, secret_hash, created_at, revoked_at, rate_limit_per_minute) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(key.key_id, key.name, key.dataset_id, JSON.stringify(key.scopes), key.secret_hash, key.created_at, key.revoked_at, key.rate_limit_per_minute)
  }

  /** The key, from the cache while no other connection has committed to the file since it was read (see `cached`). */
  async findKey(keyId: string): Promise<ApiKey | null> {
    if (!this.checkedThisTurn) {
      this.dataVersion ??= this.db.prepare<[], number>('PRAGMA data_version').pluck()
      const version = this.dataVersion.get() ?? null
      if (version !== this.cachedAt) {
        this.cached.clear()
        this.cachedAt = version
      }
      this.checkedThisTurn = true
      setImmediate(() => {
        this.checkedThisTurn = false
      })
    }
    const hit = this.cached.get(keyId)
    if (hit !== undefined) return hit
    this.selectKey ??= this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE key_id = ?')
    const row = this.selectKey.get(keyId)
    if (row === undefined) return null
    const key = toKey(row)
    // Shared by every request that presents the key: nobody may change it in place.
    Object.freeze(key.scopes)
    Object.freeze(key)
    if (this.cached.size >= CACHED_KEYS_MAX) this.cached.clear()
    this.cached.set(keyId, key)
    return key
  }

  async listKeys(): Promise<ApiKey[]> {
    return (this.db.prepare('SELECT * FROM api_keys ORDER BY created_at, key_id').all() as KeyRow[]).map(toKey)
  }

  async revokeKey(keyId: string, at: string): Promise<boolean> {
    const revoked = this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL').run(at, keyId).changes === 1
    this.cached.clear()
    return revoked
  }

  async setRateLimit(keyId: string, perMinute: number | null): Promise<boolean> {
    const changed = this.db.prepare('UPDATE api_keys SET rate_limit_per_minute = ? WHERE key_id = ?').run(perMinute, keyId).changes === 1
    this.cached.clear()
    return changed
  }

  async close(): Promise<void> {}
}
