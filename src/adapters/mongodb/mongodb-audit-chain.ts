/**
 * The audit chain in MongoDB (collection `audit_chain`; README § Operations, digests): one document
 * per record, `{dataset_id, position, seq, hash}` (hash: 64 lowercase hex), unique on
 * (dataset_id, position). The same rows as the SQLite store's `rm_audit_chain`.
 */
import type { ClientSession, Collection } from 'mongodb'
import { chainRecord, GENESIS_HASH } from '../../core/audit-chain.js'
import type { AuditChainChange } from '../../core/read-model-changes.js'
import type { AuditChainEntry } from '../../schemas/audit.js'

/** A document of `audit_chain`. */
export interface AuditChainDoc {
  dataset_id: string
  position: number
  seq: number
  hash: string
}

/**
 * Chains `changes` (log order) per dataset from the last document held before each, and inserts one
 * document per record; a record whose document is there already keeps it, and the chain goes on
 * from its hash (the replay rule). Runs in the caller's transaction (`session`).
 */
export async function writeAuditChain(c: Collection<AuditChainDoc>, changes: readonly AuditChainChange[], session: ClientSession): Promise<void> {
  const byDataset = new Map<string, AuditChainChange[]>()
  for (const ch of changes) byDataset.set(ch.datasetId, [...(byDataset.get(ch.datasetId) ?? []), ch])
  for (const [datasetId, run] of byDataset) {
    const first = run[0]
    if (first === undefined) continue
    const held = new Map<number, AuditChainDoc>()
    for await (const d of c.find({ dataset_id: datasetId, position: { $in: run.map((r) => r.position) } }, { session })) held.set(d.position, d)
    const before = await c.findOne({ dataset_id: datasetId, position: { $lt: first.position } }, { session, sort: { position: -1 } })
    let last = before === null ? { seq: 0, hash: GENESIS_HASH } : { seq: before.seq, hash: before.hash }
    const docs: AuditChainDoc[] = []
    for (const r of run) {
      const h = held.get(r.position)
      last = h === undefined ? { seq: last.seq + 1, hash: chainRecord(last.hash, r.record) } : { seq: h.seq, hash: h.hash }
      if (h === undefined) docs.push({ dataset_id: datasetId, position: r.position, ...last })
    }
    if (docs.length > 0) await c.insertMany(docs, { session, ordered: true })
  }
}

/** A dataset's entries after `after` (exclusive; null: from the first), in log order, at most `limit`. */
export async function readAuditChain(c: Collection<AuditChainDoc>, datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]> {
  const docs = await c
    .find({ dataset_id: datasetId, position: { $gt: after ?? -1 } }, { sort: { position: 1 }, limit, projection: { _id: 0, position: 1, seq: 1, hash: 1 } })
    .toArray()
  return docs.map((d) => ({ position: d.position, seq: d.seq, hash: d.hash }))
}

/** A dataset's last entry at or before `position` (null: its last), or null when it has none. */
export async function readAuditChainAt(c: Collection<AuditChainDoc>, datasetId: string, position: number | null): Promise<AuditChainEntry | null> {
  const d = await c.findOne(
    { dataset_id: datasetId, position: { $lte: position ?? Number.MAX_SAFE_INTEGER } },
    { sort: { position: -1 }, projection: { _id: 0, position: 1, seq: 1, hash: 1 } },
  )
  return d === null ? null : { position: d.position, seq: d.seq, hash: d.hash }
}
