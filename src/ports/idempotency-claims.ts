/**
 * Port: claims of idempotency keys, for a log that cannot check keys inside its own append
 * (EventStoreDB; the SQLite log checks them in its append transaction). A key is unique per
 * dataset, for ever (README § Exactly once). Adapter: MongoDB (unique index on the claim's id).
 */
import type { KeyClaim } from '../core/idempotency.js'
import type { NewRecord } from '../schemas/records.js'

/** A key's claim as stored: the record it was claimed for (so a retry can resume it) and its event id. */
export interface StoredKeyClaim extends KeyClaim {
  key: string
  eventId: string
  record: NewRecord
  /** UTC ISO 8601: when the append was acknowledged (null until then). */
  appendedAt: string | null
  /** UTC ISO 8601: when the key was claimed, set by the adapter (absent on claims stored before it was kept). */
  claimedAt?: string
}

export interface IdempotencyClaims {
  /**
   * Claims each entry's key in `datasetId`, exactly once under concurrency.
   * @returns per entry, in order: undefined when this call took the claim, else the claim found.
   */
  claim(datasetId: string, entries: readonly Omit<StoredKeyClaim, 'position' | 'appendedAt'>[]): Promise<(StoredKeyClaim | undefined)[]>

  /** Records that the claims of `keys` were appended, at these positions (after the append was acknowledged). */
  commit(datasetId: string, entries: readonly { key: string; position: number; appendedAt: string }[]): Promise<void>
}
