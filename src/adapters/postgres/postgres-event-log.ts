/**
 * EventLog adapter on PostgreSQL (docs/architecture.md#the-log-on-postgresql). Appends are
 * group-committed per process: the appends that arrive while a transaction runs go together in
 * the next one. One append transaction:
 *
 * 1. claims the idempotency keys of the group (`idempotency_keys`, sorted, ON CONFLICT DO NOTHING):
 *    a key that another transaction holds uncommitted makes this one wait for it, so a key is
 *    recorded once; a key found taken is read back from `records` (a duplicate or a conflict);
 * 2. claims the object ids the appended records name (`object_claims`, sorted, ON CONFLICT DO NOTHING);
 * 3. takes the head (`UPDATE log_head SET position = position + n`), last: the row lock is held
 *    only while the records are inserted and committed, and it orders the appends, so positions
 *    are dense (a rolled-back append gives its positions back) and a record becomes visible only
 *    after every record below it. A reader of `position > checkpoint` can never skip a record that
 *    a slower transaction commits later;
 * 4. inserts the records in one multi-row statement (`unnest`), and notifies `ocelog_log`.
 *
 * A 2xx is sent after COMMIT returns: with PostgreSQL's default `synchronous_commit = on` the
 * commit is flushed to the WAL by then. Reads see committed records only.
 */
import { EventEmitter } from 'node:events'
import type pg from 'pg'
import { claimsOfAppended, decideKey } from '../../core/idempotency.js'
import { isoNow } from '../../core/timestamp.js'
import type { AppendOutcome, AppendResult, Backlog, EventLog, TailOptions } from '../../ports/event-log.js'
import { LogUnavailableError } from '../../ports/event-log.js'
import { type NewRecord, type StoredRecord, streamName } from '../../schemas/records.js'
import { type RecordRow, rowToRecord, tailByPolling } from '../log-reads.js'
import { inTransaction, isPostgresUnavailable } from './connection.js'
import { messageOf } from '../../core/errors.js'
import { joinKey } from '../../core/keys.js'

interface PendingAppend {
  datasetId: string
  records: readonly NewRecord[]
  encoded: readonly string[]
  claims: readonly string[]
  resolve: (result: AppendResult) => void
  reject: (error: Error) => void
}

const COLUMNS = 'position, stream, type, version, data, appended_at, idempotency_key, fingerprint'

export interface PostgresEventLogOptions {
  /** How often `tail` looks for records appended by other processes, in ms (default 100). */
  pollMs?: number
  /** Largest number of appends written in one transaction (default 256). */
  maxGroup?: number
}

/** What the claims step decided for one record of the group. */
type Plan = { kind: 'append' } | { kind: 'stored'; row: RecordRow<string> } | { kind: 'earlier'; index: number }

/** How often a group is tried again after a deadlock or serialization failure before its callers get a 503. */
const RETRIES = 3

/** One record of a group commit: the index of its append in the group, its dataset, the record and its encoded data. */
interface GroupRecord {
  p: number
  datasetId: string
  record: NewRecord
  data: string
}

const keyOf = (datasetId: string, key: string) => joinKey(datasetId, key)

/**
 * Step 1: claims the group's idempotency keys, the first record of the group with a key claiming
 * it; a key found taken is read back from `records`.
 * @returns what to do with each record of the group.
 */
async function claimKeys(client: pg.PoolClient, flat: readonly GroupRecord[]): Promise<Plan[]> {
  const plans: Plan[] = flat.map(() => ({ kind: 'append' }))
  const firstWithKey = new Map<string, number>()
  flat.forEach((f, i) => {
    const key = f.record.idempotency?.key
    if (key === undefined) return
    const k = keyOf(f.datasetId, key)
    const earlier = firstWithKey.get(k)
    if (earlier === undefined) firstWithKey.set(k, i)
    else plans[i] = { kind: 'earlier', index: earlier }
  })
  if (firstWithKey.size === 0) return plans
  const keyed = [...firstWithKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const columns = (entries: readonly [string, number][]) => [
    entries.map(([, i]) => flat[i]?.datasetId ?? ''),
    entries.map(([, i]) => flat[i]?.record.idempotency?.key ?? ''),
  ]
  const claimed = await client.query<{ dataset_id: string; key: string }>(
    `INSERT INTO ocelog.idempotency_keys (dataset_id, key)
     SELECT d, k FROM unnest($1::text[], $2::text[]) AS u(d, k) ORDER BY d, k
     ON CONFLICT DO NOTHING RETURNING dataset_id, key`,
    columns(keyed),
  )
  const won = new Set(claimed.rows.map((r) => keyOf(r.dataset_id, r.key)))
  const lost = keyed.filter(([k]) => !won.has(k))
  if (lost.length === 0) return plans
  const stored = await client.query<RecordRow<string> & { dataset_id: string }>(
    `SELECT ${COLUMNS}, dataset_id FROM ocelog.records
     WHERE (dataset_id, idempotency_key) IN (SELECT d, k FROM unnest($1::text[], $2::text[]) AS u(d, k))`,
    columns(lost),
  )
  const byKey = new Map(stored.rows.map((row) => [keyOf(row.dataset_id, row.idempotency_key ?? ''), row]))
  for (const [k, i] of lost) {
    const row = byKey.get(k)
    // Claimed, yet no record holds it: a claim commits only with its records, so the engine contradicts itself.
    if (row === undefined) throw new Error(`idempotency key of record ${String(i)} is claimed, and no record holds it`)
    plans[i] = { kind: 'stored', row }
  }
  return plans
}

/**
 * Step 2: claims the object ids the appended records name, each id for the first append of the
 * group that names it. @returns per append of the group, the ids it claimed first.
 */
async function claimObjects(
  client: pg.PoolClient,
  group: readonly PendingAppend[],
  flat: readonly GroupRecord[],
  appendedIdx: readonly number[],
): Promise<Set<string>[]> {
  const claimer = new Map<string, { datasetId: string; p: number }>()
  group.forEach((p, pi) => {
    const mine = appendedIdx.flatMap((i) => (flat[i]?.p === pi ? [flat[i].record] : []))
    const ids = mine.length === p.records.length ? p.claims : claimsOfAppended(p.claims, mine)
    for (const id of ids) if (!claimer.has(id)) claimer.set(id, { datasetId: p.datasetId, p: pi })
  })
  const claimedBy: Set<string>[] = group.map(() => new Set())
  if (claimer.size === 0) return claimedBy
  const ids = [...claimer.keys()].sort()
  const got = await client.query<{ object_id: string }>(
    `INSERT INTO ocelog.object_claims (object_id, dataset_id)
     SELECT o, d FROM unnest($1::text[], $2::text[]) AS u(o, d) ORDER BY o
     ON CONFLICT DO NOTHING RETURNING object_id`,
    [ids, ids.map((id) => claimer.get(id)?.datasetId ?? '')],
  )
  for (const { object_id } of got.rows) {
    const c = claimer.get(object_id)
    if (c !== undefined) claimedBy[c.p]?.add(object_id)
  }
  return claimedBy
}

/**
 * Steps 3 and 4: takes the head, last, and inserts the appended records at the positions it gives.
 * @returns the position of each appended record, by its index in the group.
 */
async function insertRecords(
  client: pg.PoolClient,
  flat: readonly GroupRecord[],
  appendedIdx: readonly number[],
  appendedAt: string,
): Promise<Map<number, number>> {
  const positions = new Map<number, number>()
  if (appendedIdx.length === 0) return positions
  const head = await client.query<{ position: string }>('UPDATE ocelog.log_head SET position = position + $1 RETURNING position', [appendedIdx.length])
  const last = Number(head.rows[0]?.position)
  const first = last - appendedIdx.length + 1
  appendedIdx.forEach((i, n) => {
    positions.set(i, first + n)
  })
  const rows = appendedIdx.map((i) => flat[i])
  await client.query(
    `INSERT INTO ocelog.records (position, stream, dataset_id, type, version, data, appended_at, idempotency_key, fingerprint)
     SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::int4[], $6::text[], $7::text[], $8::text[], $9::text[])`,
    [
      appendedIdx.map((i) => positions.get(i)),
      rows.map((f) => streamName(f?.datasetId ?? '')),
      rows.map((f) => f?.datasetId),
      rows.map((f) => f?.record.type),
      rows.map((f) => f?.record.version),
      rows.map((f) => f?.data),
      rows.map(() => appendedAt),
      rows.map((f) => f?.record.idempotency?.key ?? null),
      rows.map((f) => f?.record.idempotency?.fingerprint ?? null),
    ],
  )
  await client.query("SELECT pg_notify('ocelog_log', $1)", [String(last)])
  return positions
}

export class PostgresEventLog implements EventLog {
  private readonly pending: PendingAppend[] = []
  private writing = false
  private readonly appended = new EventEmitter()
  private readonly pollMs: number
  private readonly maxGroup: number

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresEventLogOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 100
    this.maxGroup = options.maxGroup ?? 256
    this.appended.setMaxListeners(0)
  }

  append(datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      let encoded: string[]
      try {
        encoded = records.map((r) => JSON.stringify(r.data))
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
        return
      }
      this.pending.push({ datasetId, records, encoded, claims, resolve, reject })
      if (!this.writing) {
        this.writing = true
        setImmediate(() => void this.drain())
      }
    })
  }

  /** Writes the pending appends, a group per transaction, until none is left. */
  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group = this.pending.splice(0, this.maxGroup)
        await this.writeGroup(group)
        this.appended.emit('append')
      }
    } finally {
      this.writing = false
    }
  }

  /**
   * One transaction for the group; on a failure that is not the server's absence, each append is
   * tried alone so that one bad append does not fail the others.
   */
  private async writeGroup(group: PendingAppend[]): Promise<void> {
    try {
      const results = await this.withRetries(group)
      group.forEach((p, i) => {
        const result = results[i]
        if (result !== undefined) p.resolve(result)
      })
      return
    } catch (error) {
      if (group.length === 1 || isPostgresUnavailable(error)) {
        for (const p of group) p.reject(this.unavailable(p, error))
        return
      }
    }
    for (const p of group) {
      try {
        const [result] = await this.withRetries([p])
        if (result !== undefined) p.resolve(result)
      } catch (error) {
        p.reject(this.unavailable(p, error))
      }
    }
  }

  private unavailable(p: PendingAppend, error: unknown): LogUnavailableError {
    return new LogUnavailableError(`append to ${streamName(p.datasetId)} failed: ${messageOf(error)}`)
  }

  private async withRetries(group: readonly PendingAppend[]): Promise<AppendResult[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transaction(group)
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (attempt >= RETRIES || (code !== '40P01' && code !== '40001')) throw error
      }
    }
  }

  private transaction(group: readonly PendingAppend[]): Promise<AppendResult[]> {
    return inTransaction(this.pool, (client) => this.writeIn(client, group))
  }

  /** The four steps of the module comment, inside the caller's transaction. */
  private async writeIn(client: pg.PoolClient, group: readonly PendingAppend[]): Promise<AppendResult[]> {
    const flat: GroupRecord[] = group.flatMap((p, pi) => p.records.map((record, ri) => ({ p: pi, datasetId: p.datasetId, record, data: p.encoded[ri] ?? '' })))
    const plans = await claimKeys(client, flat)
    const appendedIdx = plans.flatMap((plan, i) => (plan.kind === 'append' ? [i] : []))
    const claimedBy = await claimObjects(client, group, flat, appendedIdx)
    const appendedAt = isoNow()
    const positions = await insertRecords(client, flat, appendedIdx, appendedAt)
    // The answers, per append, in the order given.
    const results: AppendResult[] = group.map((_, pi) => ({ positions: [], outcomes: [], claimed: claimedBy[pi] ?? new Set() }))
    flat.forEach((f, i) => {
      const result = results[f.p]
      if (result === undefined) return
      const outcome = this.outcome(f.record, plans, i, flat, positions, appendedAt)
      if (outcome.kind === 'appended') result.positions.push(outcome.position)
      result.outcomes.push(outcome)
    })
    return results
  }

  /** What happened to record `i` of the group (see AppendOutcome and decideKey). */
  private outcome(
    record: NewRecord,
    plans: readonly Plan[],
    i: number,
    flat: readonly GroupRecord[],
    positions: ReadonlyMap<number, number>,
    appendedAt: string,
  ): AppendOutcome {
    const plan = plans[i]
    if (plan === undefined || plan.kind === 'append') return { kind: 'appended', position: positions.get(i) ?? 0 }
    // A later record of the group with a key an earlier one holds: the earlier one's fate decides,
    // whether it was appended in this group or found stored.
    const holder = plan.kind === 'earlier' ? plans[plan.index] : plan
    let original: StoredRecord
    if (holder?.kind === 'stored') original = rowToRecord(holder.row)
    else {
      const first = plan.kind === 'earlier' ? flat[plan.index] : undefined
      const position = plan.kind === 'earlier' ? positions.get(plan.index) : undefined
      if (first === undefined || position === undefined) throw new Error(`record ${String(i)} repeats a key that no record of the group holds`)
      original = rowToRecord({
        position: String(position),
        stream: streamName(first.datasetId),
        type: first.record.type,
        version: first.record.version,
        data: first.data,
        appended_at: appendedAt,
        idempotency_key: first.record.idempotency?.key ?? null,
        fingerprint: first.record.idempotency?.fingerprint ?? null,
      })
    }
    const decision = decideKey(record.idempotency, original.idempotency)
    if (decision === 'duplicate') return { kind: 'duplicate', original }
    return { kind: 'conflict', key: record.idempotency?.key ?? '' }
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(text, values)).rows
    } catch (error) {
      if (isPostgresUnavailable(error)) throw new LogUnavailableError(`read of the log failed: ${(error as Error).message}`)
      throw error
    }
  }

  async readAll(after: number | null, maxCount: number): Promise<StoredRecord[]> {
    const rows = await this.query<RecordRow<string>>(`SELECT ${COLUMNS} FROM ocelog.records WHERE position > $1 ORDER BY position LIMIT $2`, [
      after ?? 0,
      maxCount,
    ])
    return rows.map((row) => rowToRecord(row))
  }

  async readStream(datasetId: string, after: number | null, maxCount: number): Promise<StoredRecord[]> {
    const rows = await this.query<RecordRow<string>>(`SELECT ${COLUMNS} FROM ocelog.records WHERE stream = $1 AND position > $2 ORDER BY position LIMIT $3`, [
      streamName(datasetId),
      after ?? 0,
      maxCount,
    ])
    return rows.map((row) => rowToRecord(row))
  }

  tail(after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]> {
    return tailByPolling((from, max) => this.readAll(from, max), this.appended, this.pollMs, after, options)
  }

  async lastPosition(datasetId?: string): Promise<number | null> {
    if (datasetId === undefined) {
      const rows = await this.query<{ position: string }>('SELECT position FROM ocelog.log_head', [])
      const head = Number(rows[0]?.position ?? 0)
      return head === 0 ? null : head
    }
    const rows = await this.query<{ position: string | null }>('SELECT max(position) AS position FROM ocelog.records WHERE stream = $1', [
      streamName(datasetId),
    ])
    const p = rows[0]?.position ?? null
    return p === null ? null : Number(p)
  }

  async countBetween(after: number | null, upTo: number, max: number): Promise<number> {
    const rows = await this.query<{ n: string }>(
      'SELECT count(*) AS n FROM (SELECT 1 FROM ocelog.records WHERE position > $1 AND position <= $2 LIMIT $3) AS s',
      [after ?? 0, upTo, max],
    )
    return Number(rows[0]?.n ?? 0)
  }

  /** Positions are dense (the head counter, module comment): the records in (after, upTo] are upTo − first + 1. */
  async backlog(after: number | null, upTo: number): Promise<Backlog> {
    const rows = await this.query<{ position: string; appended_at: string }>(
      'SELECT position, appended_at FROM ocelog.records WHERE position > $1 AND position <= $2 ORDER BY position LIMIT 1',
      [after ?? 0, upTo],
    )
    const first = rows[0]
    if (first === undefined) return { records: 0, exact: true, oldestAppendedAt: null }
    return { records: upTo - Number(first.position) + 1, exact: true, oldestAppendedAt: first.appended_at }
  }

  /** Waits for the appends in hand to be answered; the pool is the caller's to end. */
  async close(): Promise<void> {
    while (this.writing || this.pending.length > 0) await new Promise((resolve) => this.appended.once('append', resolve))
  }
}
