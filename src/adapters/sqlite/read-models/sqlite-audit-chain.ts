/**
 * The audit chain in read-models.db (`rm_audit_chain`; README § Operations, digests): one row per
 * record, keyed by its log position (the rowid: rows are appended in key order and pages filled),
 * with its dataset's row id, the record's number in its dataset (`seq`) and its chain hash (32
 * bytes); and each dataset's last row (`rm_audit_heads`), where its chain goes on from. Written by
 * the store in the projector's transaction, read by the query port (`ocelog digest`, `ocelog verify
 * --digest`): a dataset's rows are found in position order among every dataset's.
 */
import { chainRecord, GENESIS_HASH } from '../../../core/audit-chain.js'
import type { AuditChainChange } from '../../../core/read-model-changes.js'
import type { AuditChainEntry } from '../../../schemas/audit.js'
import type Database from 'better-sqlite3'
import type { SqliteDatabase } from '../log/database.js'
import { MultiRowStatement } from './multi-row.js'

interface ChainRow {
  position: number
  seq: number
  hash: Buffer
}

/** A row with its dataset's row id. */
interface DatasetChainRow extends ChainRow {
  did: number
}

/** The statements of writeAuditChain, prepared once per store (sqlite-slice-writes.ts). */
export interface AuditChainStatements {
  /** Every dataset's rows in a position range: those a replay finds already written. */
  between: Database.Statement<[number, number], DatasetChainRow>
  /** A dataset's last row (rm_audit_heads). */
  head: Database.Statement<[number], ChainRow>
  /** A dataset's last row before a position, by a scan (only when its head is not before it). */
  before: Database.Statement<[number, number], ChainRow>
  put: MultiRowStatement
  /** Moves a dataset's head forward: `[did, position, seq, hash]`. */
  putHead: Database.Statement<[number, number, number, Buffer]>
}

/** Prepares AuditChainStatements on `db`. */
export function prepareAuditChainStatements(db: SqliteDatabase): AuditChainStatements {
  return {
    between: db.prepare<[number, number], DatasetChainRow>('SELECT did, position, seq, hash FROM rm_audit_chain WHERE position BETWEEN ? AND ?'),
    head: db.prepare<[number], ChainRow>('SELECT position, seq, hash FROM rm_audit_heads WHERE did = ?'),
    before: db.prepare<[number, number], ChainRow>(
      'SELECT position, seq, hash FROM rm_audit_chain WHERE did = ? AND position < ? ORDER BY position DESC LIMIT 1',
    ),
    put: new MultiRowStatement(db, 'INSERT INTO rm_audit_chain (did, position, seq, hash) VALUES', 4, '', 200),
    putHead: db.prepare<[number, number, number, Buffer]>(
      `INSERT INTO rm_audit_heads (did, position, seq, hash) VALUES (?, ?, ?, ?)
       ON CONFLICT (did) DO UPDATE SET position = excluded.position, seq = excluded.seq, hash = excluded.hash WHERE excluded.position > rm_audit_heads.position`,
    ),
  }
}

/** A dataset's part of a run: the chain's last link so far, and whether the run added rows to it. */
interface DatasetChain {
  last: { position: number; seq: number; hash: string } | null
  added: boolean
}

/**
 * Where a dataset's chain goes on from before `position`: its head (rm_audit_heads) when that is
 * before it (a dataset's rows are always a prefix of its records in log order, so this is the
 * case whenever the record at `position` has no row yet), else its last row before it, scanned.
 */
function linkBefore(st: AuditChainStatements, did: number, position: number): ChainRow | undefined {
  const head = st.head.get(did)
  if (head === undefined || head.position < position) return head
  return st.before.get(did, position)
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
  // The rows a replay finds already written (one read of the run's position range, usually empty).
  const held = new Map(st.between.all(low, high).map((r) => [r.position, r]))
  const chains = new Map<number, DatasetChain>()
  const rows = st.put.rows()
  for (const c of changes) {
    const did = didOf(c.datasetId)
    let chain = chains.get(did)
    if (chain === undefined) {
      chain = { last: null, added: false }
      chains.set(did, chain)
    }
    const row = held.get(c.position)
    if (row !== undefined && row.did === did) {
      chain.last = { position: row.position, seq: row.seq, hash: row.hash.toString('hex') }
      continue
    }
    if (chain.last === null) {
      const before = linkBefore(st, did, c.position)
      chain.last = before === undefined ? { position: 0, seq: 0, hash: GENESIS_HASH } : { ...before, hash: before.hash.toString('hex') }
    }
    const next = { position: c.position, seq: chain.last.seq + 1, hash: chainRecord(chain.last.hash, c.record) }
    rows.add(did)
    rows.add(c.position)
    rows.add(next.seq)
    rows.add(Buffer.from(next.hash, 'hex'))
    chain.last = next
    chain.added = true
  }
  rows.end()
  for (const [did, chain] of chains) {
    if (chain.added && chain.last !== null) st.putHead.run(did, chain.last.position, chain.last.seq, Buffer.from(chain.last.hash, 'hex'))
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

/** A dataset's last chain entry at or before `position` (null: its last, its head), or null when it has none. */
export function readAuditChainAt(db: SqliteDatabase, datasetId: string, position: number | null): AuditChainEntry | null {
  if (position === null) {
    const head = db
      .prepare<[string], ChainRow>('SELECT position, seq, hash FROM rm_audit_heads WHERE did = (SELECT did FROM rm_datasets WHERE dataset_id = ?)')
      .get(datasetId)
    return head === undefined ? null : toEntry(head)
  }
  const row = db
    .prepare<[string, number], ChainRow>(
      'SELECT position, seq, hash FROM rm_audit_chain WHERE did = (SELECT did FROM rm_datasets WHERE dataset_id = ?) AND position <= ? ORDER BY position DESC LIMIT 1',
    )
    .get(datasetId, position)
  return row === undefined ? null : toEntry(row)
}
