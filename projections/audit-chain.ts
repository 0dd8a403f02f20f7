/**
 * Projection of the `audit_chain` read model (README § Operations, docs/operations.md § Digests):
 * each record's canonical form (src/core/audit-chain.ts), in log order. The store chains them per
 * dataset, h_n = SHA-256(h_(n−1) ‖ canonical(record_n)), from the hash it holds before them
 * (chainStep), and keeps each record's h_n.
 */
import { canonicalRecord } from '../src/core/audit-chain.js'
import type { ChangeSet } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'

/** Folds one record (any type or version: every record is in the chain) into `cs.auditChain`. */
export function evolve(cs: ChangeSet, record: StoredRecord): void {
  cs.auditChain.push({ datasetId: record.datasetId, position: record.position, canonical: canonicalRecord(record) })
}
