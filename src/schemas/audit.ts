/**
 * The audit chain (README § Operations, docs/operations.md § Digests): one entry per record of a
 * dataset, in log order, holding the chain hash after that record.
 */
import { type Static, Type } from 'typebox'

/** One record's place in its dataset's audit chain. */
export const AuditChainEntry = Type.Object({
  position: Type.Integer({ description: 'the record’s log position' }),
  seq: Type.Integer({ minimum: 1, description: 'the record’s number in its dataset: 1 for the first record' }),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'h_seq = SHA-256(h_(seq−1) ‖ canonical(record)), lowercase hex' }),
})
export type AuditChainEntry = Static<typeof AuditChainEntry>

/** A dataset's digest: the chain's hash after the last record at or before `position`. */
export const Digest = Type.Object({
  dataset_id: Type.String(),
  format: Type.Integer({ description: 'the canonical form’s version (AUDIT_CHAIN_FORMAT)' }),
  position: Type.Union([Type.Integer(), Type.Null()], { description: 'the last record’s log position (null: no record yet)' }),
  records: Type.Integer({ description: 'records in the chain up to it' }),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
})
export type Digest = Static<typeof Digest>
