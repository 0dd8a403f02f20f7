/**
 * The audit chain in read-models.db (`rm_audit_chain`; README § Operations, digests): one row per
 * record, keyed by (dataset row id, position), with the record's number in its dataset (`seq`) and
 * its chain hash (32 bytes). Written by the store in the projector's transaction, read by the query
 * port (`ocelog digest`, `ocelog verify --digest`).
 */
import { chainStep, GENESIS_HASH } from '../../core/audit-chain.js'
import type { AuditChainChange } from '../../core/read-model-changes.js'
import type { AuditChainEntry } from '../../schemas/audit.js'
import type Database from 'better-sqlite3'
import type { SqliteDatabase } from './database.js'
import { MultiRowStatement } from './multi-row.js'

interface ChainRow {
  position: number
  seq: number
  hash: Buffer
}

/** The statements of writeAuditChain, prepared once per store (sqlite-slice-writes.ts). */
export interface AuditChainStatements {
  /** A dataset's rows in a position range: those a replay finds already written. */
  between: Database.Statement<[number, number, number], ChainRow>
  /** A dataset's last row before a position: where its chain goes on from. */
  before: Database.Statement<[number, number], ChainRow>
  put: MultiRowStatement
}

/** Prepares AuditChainStatements on `db`. */
export function prepareAuditChainStatements(db: SqliteDatabase): AuditChainStatements {
  return {
    between: db.prepare<[number, number, number], ChainRow>('SELECT position, seq, hash FROM rm_audit_chain WHERE did = ? AND position BETWEEN ? AND ?'),
    before: db.prepare<[number, number], ChainRow>(
      'SELECT position, seq, hash FROM rm_audit_chain WHERE did = ? AND position < ? ORDER BY position DESC LIMIT 1',
    ),
    put: new MultiRowStatement(db, 'INSERT INTO rm_audit_chain (did, position, seq, hash) VALUES', 4, '', 200),
  }
}

/** A dataset's part of a run: its row id, the chain's last link so far, and the rows the file already holds in the run's range. */
interface DatasetChain {
  last: { seq: number; hash: string } | null
  held: Map<number, ChainRow>
}

/**
 * Chains `changes` (log order) per dataset from the last row the file holds before each, and
 * inserts one row per record; a record whose row is there already (a replay over rows it holds)
 * keeps it, and the chain goes on from its hash. The rows already held are read once per dataset
 * (one range read of the run's positions, usually empty), and the new ones are inserted in
 * multi-row statements. Runs inside the caller's transaction.
 * @param didOf the dataset's row id in the file (rm_datasets), made when missing.
 */
export function writeAuditChain(st: AuditChainStatements, changes: readonly AuditChainChange[], didOf: (datasetId: string) => number): void {
  if (changes.length === 0) return
  const low = changes[0]?.position ?? 0
  const high = changes[changes.length - 1]?.position ?? 0
  const chains = new Map<number, DatasetChain>()
  const rows: [number, number, number, Buffer][] = []
  for (const c of changes) {
    const did = didOf(c.datasetId)
    let chain = chains.get(did)
    if (chain === undefined) {
      chain = { last: null, held: new Map(st.between.all(did, low, high).map((r) => [r.position, r])) }
      chains.set(did, chain)
    }
    const held = chain.held.get(c.position)
    if (held !== undefined) {
      chain.last = { seq: held.seq, hash: held.hash.toString('hex') }
      continue
    }
    if (chain.last === null) {
      const row = st.before.get(did, c.position)
      chain.last = row === undefined ? { seq: 0, hash: GENESIS_HASH } : { seq: row.seq, hash: row.hash.toString('hex') }
    }
    const next = { seq: chain.last.seq + 1, hash: chainStep(chain.last.hash, c.canonical) }
    rows.push([did, c.position, next.seq, Buffer.from(next.hash, 'hex')])
    chain.last = next
  }
  st.put.run(rows)
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
