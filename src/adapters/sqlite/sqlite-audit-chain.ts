/**
 * The audit chain in read-models.db (`rm_audit_chain`; README § Operations, digests): one row per
 * record, keyed by (dataset row id, position), with the record's number in its dataset (`seq`) and
 * its chain hash (32 bytes). Written by the store in the projector's transaction, read by the query
 * port (`ocelog digest`, `ocelog verify --digest`).
 */
import { chainStep, GENESIS_HASH } from '../../core/audit-chain.js'
import type { AuditChainChange } from '../../core/read-model-changes.js'
import type { AuditChainEntry } from '../../schemas/audit.js'
import type { SqliteDatabase } from './database.js'

interface ChainRow {
  position: number
  seq: number
  hash: Buffer
}

/**
 * Chains `changes` (log order) per dataset from the last row the file holds before each, and
 * inserts one row per record; a record whose row is there already (a replay over rows it holds)
 * keeps it, and the chain goes on from its hash. Runs inside the caller's transaction.
 * @param didOf the dataset's row id in the file (rm_datasets), made when missing.
 */
export function writeAuditChain(db: SqliteDatabase, changes: readonly AuditChainChange[], didOf: (datasetId: string) => number): void {
  if (changes.length === 0) return
  const at = db.prepare<[number, number], ChainRow>('SELECT position, seq, hash FROM rm_audit_chain WHERE did = ? AND position = ?')
  const before = db.prepare<[number, number], ChainRow>(
    'SELECT position, seq, hash FROM rm_audit_chain WHERE did = ? AND position < ? ORDER BY position DESC LIMIT 1',
  )
  const put = db.prepare('INSERT INTO rm_audit_chain (did, position, seq, hash) VALUES (?, ?, ?, ?)')
  const last = new Map<number, { seq: number; hash: string }>()
  for (const c of changes) {
    const did = didOf(c.datasetId)
    const held = at.get(did, c.position)
    if (held !== undefined) {
      last.set(did, { seq: held.seq, hash: held.hash.toString('hex') })
      continue
    }
    let previous = last.get(did)
    if (previous === undefined) {
      const row = before.get(did, c.position)
      previous = row === undefined ? { seq: 0, hash: GENESIS_HASH } : { seq: row.seq, hash: row.hash.toString('hex') }
    }
    const next = { seq: previous.seq + 1, hash: chainStep(previous.hash, c.canonical) }
    put.run(did, c.position, next.seq, Buffer.from(next.hash, 'hex'))
    last.set(did, next)
  }
}

const toEntry = (r: ChainRow): AuditChainEntry => ({ position: r.position, seq: r.seq, hash: r.hash.toString('hex') })

/** A dataset's chain entries after `after` (exclusive; null: from the first), in log order, at most `limit`. */
export function readAuditChain(db: SqliteDatabase, datasetId: string, after: number | null, limit: number): AuditChainEntry[] {
  return db
    .prepare<[string, number, number], ChainRow>(
      'SELECT position, seq, hash FROM rm_audit_chain WHERE did = (SELECT did FROM rm_datasets WHERE dataset_id = ?) AND position > ? ORDER BY position LIMIT ?',
    )
    .all(datasetId, after ?? -1, limit)
    .map(toEntry)
}

/** A dataset's last chain entry at or before `position` (null: its last), or null when it has none. */
export function readAuditChainAt(db: SqliteDatabase, datasetId: string, position: number | null): AuditChainEntry | null {
  const row = db
    .prepare<[string, number], ChainRow>(
      'SELECT position, seq, hash FROM rm_audit_chain WHERE did = (SELECT did FROM rm_datasets WHERE dataset_id = ?) AND position <= ? ORDER BY position DESC LIMIT 1',
    )
    .get(datasetId, position ?? Number.MAX_SAFE_INTEGER)
  return row === undefined ? null : toEntry(row)
}
