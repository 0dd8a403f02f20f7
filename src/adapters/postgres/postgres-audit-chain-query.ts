/**
 * The audit chain's reads on PostgreSQL (`ocelog.rm_audit_chain`, key (dataset_id, position); README
 * § Operations, digests): one row per record with its number in its dataset (`seq`) and its chain
 * hash (64 lowercase hex), the same rows as SQLite's and MongoDB's. Both reads range over the key;
 * a bound that is not a whole position is rounded down first (positions are whole), so that it stays
 * a bigint the key's range can take.
 */
import type { AuditChainEntry } from '../../schemas/audit.js'
import type { SqlReader } from './postgres-reads.js'

/** A dataset's entries after log position `after` (exclusive; null: from the first), in log order, at most `limit`. */
export async function readAuditChain(sql: SqlReader, datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]> {
  return sql.rows<AuditChainEntry>('SELECT position, seq, hash FROM ocelog.rm_audit_chain WHERE dataset_id = $1 AND position > $2 ORDER BY position LIMIT $3', [
    datasetId,
    Math.floor(after ?? -1),
    limit,
  ])
}

/** A dataset's last entry at or before log position `position` (null: its last), or null when it has none. */
export async function readAuditChainAt(sql: SqlReader, datasetId: string, position: number | null): Promise<AuditChainEntry | null> {
  const [row] = await sql.rows<AuditChainEntry>(
    'SELECT position, seq, hash FROM ocelog.rm_audit_chain WHERE dataset_id = $1 AND position <= $2 ORDER BY position DESC LIMIT 1',
    [datasetId, Math.floor(position ?? Number.MAX_SAFE_INTEGER)],
  )
  return row ?? null
}
