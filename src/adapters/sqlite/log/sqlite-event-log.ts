/**
 * EventLog adapter on the embedded SQLite file. Appends are group-committed: the appends that
 * arrive within one turn of the event loop, or while the previous commit's fdatasync runs, are
 * written in one transaction, and each caller's promise resolves only once that transaction is
 * durable. On a connection set to synchronous=FULL (openDatabase's), the commit itself runs under
 * NORMAL and the WAL is then fdatasynced in libuv's thread pool (WalSync), so the event loop goes
 * on parsing requests while the disk syncs. Object identity claims (SqliteObjectClaims) are taken
 * inside the same transaction (docs/architecture.md#records-and-ids).
 *
 * Reads return durable records only. A commit is visible to readers before its fdatasync returns
 * (on this connection, and on every other connection to the file: the projector's worker, `ocelog
 * project`); so a read that reaches past the highest position this log knows to be on disk waits for
 * an fdatasync of the WAL that starts after the read (it flushes every connection's frames: they
 * are one file). A projector therefore never applies, and a replay never shows, a record that a
 * power cut could still take from the log.
 */
import { EventEmitter } from 'node:events'
import type { Statement, Transaction } from 'better-sqlite3'
import type { AppendOutcome, AppendResult, Backlog, EventLog, TailOptions } from '../../../ports/event-log.js'
import { LogUnavailableError } from '../../../ports/event-log.js'
import { claimsOfAppended, decideKey } from '../../../core/idempotency.js'
import { isoNow } from '../../../core/timestamp.js'
import { type NewRecord, type StoredRecord, streamName } from '../../../schemas/records.js'
import { type RecordRow, type RecordTuple, rowToRecord, tailByPolling, tupleToRecord } from '../../log-reads.js'
import type { SqliteDatabase } from './database.js'
import { SqliteObjectClaims } from './sqlite-object-claims.js'
import { type FdatasyncFn, WalSync } from './wal-sync.js'

interface PendingAppend {
  datasetId: string
  records: readonly NewRecord[]
  /** JSON of each record's data, encoded before the append joins a group commit. */
  encoded: readonly string[]
  claims: readonly string[]
  resolve: (result: AppendResult) => void
  reject: (error: Error) => void
}

export interface SqliteEventLogOptions {
  /** How often `tail` looks for records appended by other processes, in ms (default 250). */
  pollMs?: number
  /**
   * Largest read of `readAll` and `tail`, in characters of the records' stored JSON (about bytes):
   * a read stops after the record that reaches it (so it always holds one record), even short of
   * `maxCount`. Default: no bound. The projector worker sets it so that a read of large records
   * fits its heap (workerHeapMb in src/projector/embedded.ts).
   */
  readBytesMax?: number
  /** The WAL's fdatasync (default `fs.fdatasync`): tests pass one they hold or fail. */
  fdatasync?: FdatasyncFn
}

/** The columns of a RecordRow (log-reads.ts), which the reads select. */
const RECORD_ROW_COLUMNS = 'position, stream, type, version, data, appended_at, idempotency_key, fingerprint'

/** SQLite's `synchronous` levels (PRAGMA synchronous): NORMAL syncs the WAL only at checkpoints. */
const SYNCHRONOUS_NORMAL = 1
const SYNCHRONOUS_FULL = 2

/** Runs a statement that may fail only with the connection (then the next statement says so). */
function runQuietly(statement: Statement | null): void {
  try {
    statement?.run()
  } catch {
    // The caller's next statement reports the connection's failure.
  }
}

export class SqliteEventLog implements EventLog {
  private readonly pending: PendingAppend[] = []
  /** Set when close() has resolved: appends are refused from then on. */
  private closed = false
  private scheduled = false
  private readonly appended = new EventEmitter()
  private readonly readBytesMax: number
  private readonly insertRecord: Statement<[string, string, string, number, string, string, string | null, string | null]>
  private readonly selectByKey: Statement<[string, string]>
  private readonly objectClaims: SqliteObjectClaims
  private readonly selectAll: Statement<[number, number], RecordTuple>
  private readonly selectStream: Statement<[string, number, number], RecordTuple>
  private readonly selectHead: Statement<[]>
  private readonly selectFirstAfter: Statement<[number, number]>
  private readonly pollMs: number
  /** Null when the connection is not file-backed WAL at FULL or above: then the commit itself is as durable as the connection is set to be. */
  private readonly walSync: WalSync | null
  private readonly relaxSync: Statement | null
  private readonly restoreSync: Statement | null
  /** Every record at or below this position is known to be on disk (0: none known yet); see `durablePosition`. */
  private durableHead = 0
  /** The group commit's transactions (`commit`), made once: better-sqlite3 builds a wrapper per `transaction()` call. */
  private readonly writeGroup: Transaction<(batch: readonly PendingAppend[], appendedAt: string) => AppendResult[]>
  private readonly writeAlone: Transaction<(p: PendingAppend, appendedAt: string) => AppendResult>

  constructor(
    private readonly db: SqliteDatabase,
    options: SqliteEventLogOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 250
    this.readBytesMax = options.readBytesMax ?? Number.POSITIVE_INFINITY
    this.appended.setMaxListeners(0)
    // A record whose key the dataset's stream holds already is not inserted (changes: 0): writeOne then reads the holder.
    this.insertRecord = db.prepare(
      `INSERT INTO records (stream, dataset_id, type, version, data, appended_at, idempotency_key, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
    )
    this.selectByKey = db.prepare('SELECT * FROM records WHERE dataset_id = ? AND idempotency_key = ?')
    this.objectClaims = new SqliteObjectClaims(db)
    // The columns of a RecordRow only (`dataset_id`, the stream's, would be one more string made per
    // record read), as arrays (RecordTuple): no object per row.
    this.selectAll = db
      .prepare<[number, number], RecordTuple>(`SELECT ${RECORD_ROW_COLUMNS} FROM records WHERE position > ? ORDER BY position LIMIT ?`)
      .raw(true)
    this.selectStream = db
      .prepare<[string, number, number], RecordTuple>(`SELECT ${RECORD_ROW_COLUMNS} FROM records WHERE stream = ? AND position > ? ORDER BY position LIMIT ?`)
      .raw(true)
    this.selectHead = db.prepare('SELECT max(position) AS position FROM records')
    this.selectFirstAfter = db.prepare('SELECT position, appended_at FROM records WHERE position > ? AND position <= ? ORDER BY position LIMIT 1')
    const level = Number(db.pragma('synchronous', { simple: true }))
    const wal = String(db.pragma('journal_mode', { simple: true })) === 'wal'
    if (wal && !db.memory && level >= SYNCHRONOUS_FULL) {
      this.walSync = new WalSync(`${db.name}-wal`, options.fdatasync)
      // Only the log's own commits are relaxed: other writes on this connection (the key store's)
      // keep the connection's level.
      this.relaxSync = db.prepare(`PRAGMA synchronous = ${String(SYNCHRONOUS_NORMAL)}`)
      this.restoreSync = db.prepare(`PRAGMA synchronous = ${String(level)}`)
    } else {
      this.walSync = null
      this.relaxSync = null
      this.restoreSync = null
    }
    this.writeGroup = db.transaction((batch: readonly PendingAppend[], appendedAt: string) => batch.map((p) => this.writeOne(p, appendedAt)))
    this.writeAlone = db.transaction((p: PendingAppend, appendedAt: string) => this.writeOne(p, appendedAt))
  }

  append(datasetId: string, records: readonly NewRecord[], claims: readonly string[]): Promise<AppendResult> {
    // After close() its WAL file's descriptor is gone: an append could be written and never synced.
    if (this.closed) return Promise.reject(new LogUnavailableError('the SQLite log is closed: it takes no append'))
    return new Promise((resolve, reject) => {
      // Encoding is the caller's business, not the engine's: a record that cannot be encoded
      // rejects this call with its own error, and only what the engine throws below becomes
      // LogUnavailableError (a 503 that a retry may clear).
      let encoded: string[]
      try {
        encoded = records.map((r) => JSON.stringify(r.data))
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
        return
      }
      this.pending.push({ datasetId, records, encoded, claims, resolve, reject })
      this.schedule()
    })
  }

  /**
   * Flushes at the next turn of the event loop, unless an fdatasync is running or asked for (an
   * append's or a read's): then the appends gather until it returns and go in one transaction (the
   * group commit of a log that syncs in its own thread; committing every turn meanwhile would write
   * the same hot pages again per commit). Every fdatasync this log asks for goes through `syncWal`,
   * which calls this again when it returns or fails, so appends held here are never left unwritten.
   */
  private schedule(): void {
    if (this.scheduled || this.walSync?.busy === true) return
    this.scheduled = true
    setImmediate(() => this.flush())
  }

  /**
   * Asks `walSync` for an fdatasync of the WAL (WalSync.request: `done(null)` once every commit made
   * before is on disk, `done(error)` when that cannot be known), then schedules the appends that
   * gathered meanwhile (see `schedule`), even when `done` throws. While a chain of fdatasyncs runs,
   * the last one's callers find the WalSync idle, so one of them schedules.
   */
  private syncWal(walSync: WalSync, done: (error: Error | null) => void): void {
    walSync.request((error) => {
      try {
        done(error)
      } finally {
        if (this.pending.length > 0) this.schedule()
      }
    })
  }

  /**
   * Writes one caller's records inside the group's transaction. A record with a key is inserted
   * unless the unique index on (dataset, key) holds the key already; only then is the record that
   * holds it read, to tell a duplicate from a conflict (decideKey). Both happen in that same
   * transaction, so the check is exact under concurrency, and a key repeated within one append is
   * recorded by its first record. A new key costs one descent of the index, not a read and a write.
   */
  private writeOne(p: PendingAppend, appendedAt: string): AppendResult {
    const stream = streamName(p.datasetId)
    const positions: number[] = []
    const outcomes: AppendOutcome[] = []
    const appended: NewRecord[] = []
    p.records.forEach((r, i) => {
      const key = r.idempotency?.key ?? null
      const info = this.insertRecord.run(stream, p.datasetId, r.type, r.version, p.encoded[i] ?? '', appendedAt, key, r.idempotency?.fingerprint ?? null)
      if (info.changes === 1) {
        const position = Number(info.lastInsertRowid)
        positions.push(position)
        outcomes.push({ kind: 'appended', position })
        appended.push(r)
        return
      }
      const row = key === null ? undefined : (this.selectByKey.get(p.datasetId, key) as RecordRow | undefined)
      const original = row === undefined ? undefined : rowToRecord(row)
      const decision = decideKey(r.idempotency, original?.idempotency)
      if (decision === 'duplicate' && original !== undefined) outcomes.push({ kind: 'duplicate', original })
      else if (decision === 'conflict' && key !== null) outcomes.push({ kind: 'conflict', key })
      // Not inserted, yet no record holds its key: the engine's state contradicts its own index.
      else throw new Error(`record ${String(i)} of an append to ${stream} was not inserted, and no record holds its idempotency key`)
    })
    const claims = appended.length === p.records.length ? p.claims : claimsOfAppended(p.claims, appended)
    return { positions, outcomes, claimed: this.objectClaims.claimWithin(p.datasetId, claims) }
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.pending.splice(0)
    if (batch.length === 0) return
    const committed: Array<{ p: PendingAppend; result: AppendResult }> = []
    // A connection that cannot take the pragma cannot take the commit either: commit() answers.
    runQuietly(this.relaxSync)
    this.commit(batch, committed)
    runQuietly(this.restoreSync)
    const answer = (error: Error | null) => {
      for (const { p, result } of committed) {
        if (error === null) {
          // A loop, not Math.max(...positions): an append of a few hundred thousand records would overflow the call's arguments.
          for (const position of result.positions) if (position > this.durableHead) this.durableHead = position
          p.resolve(result)
        } else p.reject(new LogUnavailableError(`append to ${streamName(p.datasetId)} was not made durable: ${error.message}`))
      }
      this.appended.emit('append')
    }
    if (this.walSync === null) {
      answer(null)
      return
    }
    this.syncWal(this.walSync, answer)
  }

  /**
   * Writes the group in one transaction, adding each caller and its result to `committed`. When the
   * transaction fails, one caller's bad write must not fail the others: each is retried alone, and a
   * caller whose own transaction fails is rejected at once with LogUnavailableError.
   */
  private commit(batch: readonly PendingAppend[], committed: Array<{ p: PendingAppend; result: AppendResult }>): void {
    const appendedAt = isoNow()
    try {
      const results = this.writeGroup.immediate(batch, appendedAt)
      this.objectClaims.settle(true)
      batch.forEach((p, i) => {
        const result = results[i]
        if (result !== undefined) committed.push({ p, result })
      })
      return
    } catch {
      this.objectClaims.settle(false)
    }
    for (const p of batch) {
      try {
        committed.push({ p, result: this.writeAlone.immediate(p, appendedAt) })
        this.objectClaims.settle(true)
      } catch (error) {
        this.objectClaims.settle(false)
        p.reject(new LogUnavailableError(`append to ${streamName(p.datasetId)} failed: ${(error as Error).message}`))
      }
    }
  }

  /**
   * `records` (ascending positions, as read) once they are all on disk: at once when the last is at
   * or below the durable head; otherwise after an fdatasync of the WAL that started after they were
   * read (see the module comment). Without a WalSync (an in-memory file, or a connection below
   * synchronous=FULL), at once: such a log promises no more durability to readers than to writers.
   * @throws LogUnavailableError when the fdatasync fails (now or earlier: WalSync's error is sticky).
   */
  private durable(records: StoredRecord[]): Promise<StoredRecord[]> {
    const last = records[records.length - 1]
    const walSync = this.walSync
    if (walSync === null || last === undefined || last.position <= this.durableHead) return Promise.resolve(records)
    // The fdatasync covers every commit visible now, so a catch-up over a long log syncs once, not once per read.
    const head = Math.max(last.position, (this.selectHead.get() as { position: number | null } | undefined)?.position ?? 0)
    return new Promise((resolve, reject) => {
      this.syncWal(walSync, (error) => {
        if (error !== null) {
          reject(new LogUnavailableError(`read of the log up to position ${String(last.position)}: its durability is unknown: ${error.message}`))
          return
        }
        if (head > this.durableHead) this.durableHead = head
        resolve(records)
      })
    })
  }

  /** Durable records only (see `durable`): a read past the durable head waits for an fdatasync of the WAL. */
  async readAll(after: number | null, maxCount: number): Promise<StoredRecord[]> {
    if (this.readBytesMax === Number.POSITIVE_INFINITY) return this.durable(this.selectAll.all(after ?? 0, maxCount).map(tupleToRecord))
    const out: StoredRecord[] = []
    let bytes = 0
    for (const row of this.selectAll.iterate(after ?? 0, maxCount)) {
      out.push(tupleToRecord(row))
      bytes += row[4].length
      if (bytes >= this.readBytesMax) break
    }
    return this.durable(out)
  }

  /** Durable records only, as readAll. */
  async readStream(datasetId: string, after: number | null, maxCount: number): Promise<StoredRecord[]> {
    return this.durable(this.selectStream.all(streamName(datasetId), after ?? 0, maxCount).map(tupleToRecord))
  }

  tail(after: number | null, options: TailOptions): AsyncIterable<StoredRecord[]> {
    return tailByPolling((from, max) => this.readAll(from, max), this.appended, this.pollMs, after, options)
  }

  /**
   * Calls `listener` after each group commit of this log's appends is durable (one call per group
   * commit, when its callers are answered), e.g. to wake a projector in another thread. Returns the
   * function that removes it.
   */
  onCommit(listener: () => void): () => void {
    this.appended.on('append', listener)
    return () => this.appended.off('append', listener)
  }

  /** The durable head: every record at or below this position is known to be on disk (0: none known yet). */
  get durablePosition(): number {
    return this.durableHead
  }

  /**
   * Wakes this log's `tail` at once, as its own append would: for a tail in another thread than the
   * appends, told of each commit by a message (the embedded projector's worker).
   * @param durablePosition the appending log's `durablePosition` (0: none known): reads up to it then
   *   need no fdatasync of their own. Pass only a position that an fdatasync of this same file
   *   covered, after that fdatasync returned.
   */
  wake(durablePosition: number): void {
    if (durablePosition > this.durableHead) this.durableHead = durablePosition
    this.appended.emit('append')
  }

  /**
   * Sets this connection's WAL auto-checkpoint (SQLite's `wal_autocheckpoint`, in pages; 0: never,
   * another connection checkpoints). The embedded projector's worker takes the checkpoints over
   * while it runs, so that no append waits for one.
   */
  walAutocheckpoint(pages: number): void {
    this.db.pragma(`wal_autocheckpoint = ${String(pages)}`)
  }

  async lastPosition(datasetId?: string): Promise<number | null> {
    const row = (
      datasetId === undefined
        ? this.selectHead.get()
        : this.db.prepare('SELECT max(position) AS position FROM records WHERE stream = ?').get(streamName(datasetId))
    ) as { position: number | null } | undefined
    return row?.position ?? null
  }

  async countBetween(after: number | null, upTo: number, max: number): Promise<number> {
    const row = this.db
      .prepare('SELECT count(*) AS n FROM (SELECT 1 FROM records WHERE position > ? AND position <= ? LIMIT ?)')
      .get(after ?? 0, upTo, max) as { n: number }
    return row.n
  }

  /**
   * Positions are the records table's row ids (INTEGER PRIMARY KEY without AUTOINCREMENT): each
   * insert takes the highest row id plus one, a rolled-back insert takes none for good, and records
   * are never deleted (a trigger refuses it). So positions are dense, and the records in
   * (after, upTo] number upTo − first + 1, with `first` the first position after `after`: one
   * descent of the primary key, whatever the lag.
   */
  async backlog(after: number | null, upTo: number): Promise<Backlog> {
    const first = this.selectFirstAfter.get(after ?? 0, upTo) as { position: number; appended_at: string } | undefined
    if (first === undefined) return { records: 0, exact: true, oldestAppendedAt: null }
    return { records: upTo - first.position + 1, exact: true, oldestAppendedAt: first.appended_at }
  }

  /**
   * Writes the appends still pending, waits until every fdatasync asked for has returned (so every
   * append made before close() resolves is answered, those made while it waits too), then closes the
   * WAL file's descriptor. An append made after it resolves is refused (LogUnavailableError).
   */
  async close(): Promise<void> {
    while (this.pending.length > 0 || this.walSync?.busy === true) {
      if (this.pending.length > 0) this.flush()
      await this.walSync?.drained()
    }
    this.closed = true
    await this.walSync?.close()
  }
}
