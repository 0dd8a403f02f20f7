/**
 * The `api_keys` row shape that the SQL key stores (SQLite's and PostgreSQL's) share: an API key
 * with its scopes as JSON text (docs/api.md#authentication-and-scopes).
 */
import type { ApiKey } from '../ports/key-store.js'
import type { Scope } from '../schemas/api.js'

export interface KeyRow {
  key_id: string
  name: string
  dataset_id: string
  scopes: string
  secret_hash: string
  created_at: string
  revoked_at: string | null
  rate_limit_per_minute: number | null
}

/** A row back into an ApiKey (its scopes parsed). */
export function toKey(row: KeyRow): ApiKey {
  return { ...row, scopes: JSON.parse(row.scopes) as Scope[] }
}
