/**
 * Projection of the `audit_chain` read model (README § Operations, docs/operations.md § Digests):
 * every record, in log order. The store chains them per dataset, h_n = SHA-256(h_(n−1) ‖
 * canonical(record_n)) (src/core/audit-chain.ts, chainRecord), from the hash it holds before them,
 * and keeps each record's h_n. Its version is part of the audit contract: a digest
 * handed to an auditor must verify years later, so the canonical form never changes under it.
 */
import type { AuditChainChange } from '../src/core/read-model-changes.js'
import type { StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'

/** Folds one record (any type or version: every record is in the chain) into the slice. */
function evolve(slice: AuditChainChange[], record: StoredRecord): void {
  slice.push({ datasetId: record.datasetId, position: record.position, record })
}

export const auditChain: Projection<'audit_chain'> = {
  name: 'audit_chain',
  version: 1,
  readModels: ['audit_chain'],
  emptySlice: () => [],
  evolve,
}
