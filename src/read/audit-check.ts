/**
 * Checks of a dataset's ingest history against its audit chain (README § Operations,
 * docs/operations.md § Digests), over the ports, so they work on every engine:
 * - `recomputeChain`: the chain recomputed from the log, record by record (chainRecord);
 * - `verifyDigest`: whether the history up to a position still gives the digest an auditor holds,
 *   and, comparing the recomputed chain with the audit read model's entry by entry, the first
 *   record where they part.
 */
import { chainRecord, GENESIS_HASH } from '../core/audit-chain.js'
import type { EventLog } from '../ports/event-log.js'
import type { ReadModelQuery } from '../ports/read-model-query.js'
import type { AuditChainEntry } from '../schemas/audit.js'
import type { StoredRecord } from '../schemas/records.js'

/** Records and chain entries read at once. */
const PAGE = 2000

/**
 * The dataset's records up to `through` (inclusive; null: the head), each with its recomputed
 * chain entry, in log order, read a page at a time.
 */
export async function* recomputeChain(
  log: Pick<EventLog, 'readStream'>,
  datasetId: string,
  through: number | null,
): AsyncGenerator<{ record: StoredRecord; entry: AuditChainEntry }> {
  let hash = GENESIS_HASH
  let seq = 0
  let after: number | null = null
  for (;;) {
    const page = await log.readStream(datasetId, after, PAGE)
    for (const record of page) {
      if (through !== null && record.position > through) return
      hash = chainRecord(hash, record)
      seq += 1
      yield { record, entry: { position: record.position, seq, hash } }
    }
    const last = page[page.length - 1]
    if (last === undefined || page.length < PAGE) return
    after = last.position
  }
}

async function* storedChain(query: Pick<ReadModelQuery, 'auditChain'>, datasetId: string): AsyncGenerator<AuditChainEntry> {
  let after: number | null = null
  for (;;) {
    const page = await query.auditChain(datasetId, after, PAGE)
    yield* page
    const last = page[page.length - 1]
    if (last === undefined || page.length < PAGE) return
    after = last.position
  }
}

/** What verifyDigest found. */
export interface DigestCheck {
  dataset_id: string
  /** The position the auditor's digest is for, and the hash recomputed from the log there. */
  position: number
  records: number
  recomputed: string
  expected: string
  /** Whether the recomputed hash is the auditor's: the history up to `position` is unchanged. */
  unchanged: boolean
  /**
   * The first record where the log and the audit read model part (recomputed hash or position
   * differs from the stored entry of the same number): the first changed position; null when they
   * agree up to `position`.
   */
  first_changed: { position: number; seq: number; stored: AuditChainEntry | null } | null
  /** Stored entries compared (up to `position`); fewer than `records` when the read model is behind. */
  compared: number
}

/**
 * Recomputes the dataset's chain from the log up to `position` (inclusive) and compares it with
 * `expected` (a digest the auditor holds) and with the audit read model, entry by entry (by number
 * in the dataset, so a record removed or added shows at its place).
 */
export async function verifyDigest(
  log: Pick<EventLog, 'readStream'>,
  query: Pick<ReadModelQuery, 'auditChain'>,
  datasetId: string,
  position: number,
  expected: string,
): Promise<DigestCheck> {
  const stored = storedChain(query, datasetId)
  let hash = GENESIS_HASH
  let records = 0
  let compared = 0
  let storedDone = false
  let firstChanged: DigestCheck['first_changed'] = null
  for await (const { entry } of recomputeChain(log, datasetId, position)) {
    hash = entry.hash
    records = entry.seq
    if (firstChanged !== null || storedDone) continue
    const next = await stored.next()
    if (next.done === true) {
      storedDone = true
      continue
    }
    const s = next.value
    if (s.position > position) {
      // The read model holds no more records up to `position`: the log has one it lacks here.
      firstChanged = { position: entry.position, seq: entry.seq, stored: null }
      continue
    }
    compared += 1
    if (s.position !== entry.position || s.hash !== entry.hash) firstChanged = { position: Math.min(s.position, entry.position), seq: entry.seq, stored: s }
  }
  if (firstChanged === null && !storedDone) {
    // A stored entry up to `position` past the log's last record there: a record is gone from the log.
    const next = await stored.next()
    if (next.done !== true && next.value.position <= position) firstChanged = { position: next.value.position, seq: next.value.seq, stored: next.value }
  }
  await stored.return(undefined)
  return {
    dataset_id: datasetId,
    position,
    records,
    recomputed: hash,
    expected,
    unchanged: hash === expected,
    first_changed: firstChanged,
    compared,
  }
}
