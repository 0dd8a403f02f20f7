/**
 * KeyStore adapter on PostgreSQL (tables `ocelog.datasets`, `ocelog.api_keys`; schema.ts). Every
 * API process reads keys from the one database, so a revoke or a new budget made by any process
 * (`ocelog keys revoke`) holds from the next request of every process
 * (docs/api.md#authentication-and-scopes): keys are read per request, by their primary key, with
 * no cache.
 */
import type pg from 'pg'
import { EngineUnavailableError } from '../../core/errors.js'
import type { ApiKey, Dataset, KeyStore } from '../../ports/key-store.js'
import { DatasetExistsError } from '../../ports/key-store.js'
import { type KeyRow, toKey } from '../key-rows.js'
import { isPostgresUnavailable } from './connection.js'

export class PostgresKeyStore implements KeyStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Runs a statement; a server that is away is EngineUnavailableError (503, docs/api.md#errors), not a bug. */
  private async run<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(query)
    } catch (error) {
      if (isPostgresUnavailable(error)) throw new EngineUnavailableError(`the key store on PostgreSQL is unavailable: ${(error as Error).message}`)
      throw error
    }
  }

  async createDataset(dataset: Dataset): Promise<void> {
    const r = await this.run({
      text: 'INSERT INTO ocelog.datasets (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      values: [dataset.id, dataset.name, dataset.created_at],
    })
    if (r.rowCount === 0) throw new DatasetExistsError(`dataset ${dataset.id} exists`)
  }

  async findDataset(id: string): Promise<Dataset | null> {
    const r = await this.run<Dataset>({ text: 'SELECT id, name, created_at FROM ocelog.datasets WHERE id = $1', values: [id] })
    return r.rows[0] ?? null
  }

  async listDatasets(): Promise<Dataset[]> {
    return (await this.run<Dataset>({ text: 'SELECT id, name, created_at FROM ocelog.datasets ORDER BY created_at, id' })).rows
  }

  async createKey(key: ApiKey): Promise<void> {
    await this.run({
      text: `INSERT INTO ocelog.api_keys (key_id, name, dataset_id, scopes, secret_hash, created_at, revoked_at, rate_limit_per_minute)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      values: [key.key_id, key.name, key.dataset_id, JSON.stringify(key.scopes), key.secret_hash, key.created_at, key.revoked_at, key.rate_limit_per_minute],
    })
  }

  async findKey(keyId: string): Promise<ApiKey | null> {
    const r = await this.run<KeyRow>({ name: 'ocelog-find-key', text: 'SELECT * FROM ocelog.api_keys WHERE key_id = $1', values: [keyId] })
    const row = r.rows[0]
    return row === undefined ? null : toKey(row)
  }

  async listKeys(): Promise<ApiKey[]> {
    return (await this.run<KeyRow>({ text: 'SELECT * FROM ocelog.api_keys ORDER BY created_at, key_id' })).rows.map(toKey)
  }

  async revokeKey(keyId: string, at: string): Promise<boolean> {
    const r = await this.run({ text: 'UPDATE ocelog.api_keys SET revoked_at = $1 WHERE key_id = $2 AND revoked_at IS NULL', values: [at, keyId] })
    return r.rowCount === 1
  }

  async setRateLimit(keyId: string, perMinute: number | null): Promise<boolean> {
    const r = await this.run({ text: 'UPDATE ocelog.api_keys SET rate_limit_per_minute = $1 WHERE key_id = $2', values: [perMinute, keyId] })
    return r.rowCount === 1
  }

  /** The pool is the caller's to end. */
  async close(): Promise<void> {}
}
