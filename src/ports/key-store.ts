/**
 * Port: datasets and API keys (docs/api.md#authentication-and-scopes). Object identity claims have their own port (object-claims.ts).
 * Adapters: SQLite (embedded default), MongoDB (production). Only a hash of a key's secret is stored.
 * Contract tests: test/contract/key-store.contract.ts.
 */
import type { Scope } from '../schemas/api.js'

export interface Dataset {
  id: string
  name: string
  /** UTC ISO 8601 with ms. */
  created_at: string
}

export interface ApiKey {
  key_id: string
  name: string
  dataset_id: string
  /** Empty: the key may do everything in its dataset (docs/api.md#authentication-and-scopes). */
  scopes: Scope[]
  /** Hex SHA-256 of the secret part of the key. */
  secret_hash: string
  created_at: string
  revoked_at: string | null
  /**
   * The key's own budget in requests per minute (docs/rate-limits.md#the-default-and-a-keys-own-budget); null: the service's
   * default, OCELOG_RATE_LIMIT_PER_MINUTE. Keys stored before this field existed read as null.
   */
  rate_limit_per_minute: number | null
}

export interface KeyStore {
  /** Creates a dataset; rejects with DatasetExistsError when the id is taken. */
  createDataset(dataset: Dataset): Promise<void>
  findDataset(id: string): Promise<Dataset | null>
  listDatasets(): Promise<Dataset[]>

  createKey(key: ApiKey): Promise<void>
  findKey(keyId: string): Promise<ApiKey | null>
  /** Ordered by created_at. */
  listKeys(): Promise<ApiKey[]>
  /** Marks the key revoked at `at`; false when there is no such key or it was already revoked. */
  revokeKey(keyId: string, at: string): Promise<boolean>
  /**
   * Sets the key's own budget in requests per minute (a positive integer), or null for the
   * service's default. False when there is no such key. A running service sees the change from
   * its next request, as it sees a revoke.
   */
  setRateLimit(keyId: string, perMinute: number | null): Promise<boolean>

  close(): Promise<void>
}

export { DatasetExistsError } from '../core/errors.js'
