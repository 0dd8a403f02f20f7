/**
 * What the logs that keep their records in SQL rows share (docs/architecture.md#ports-and-adapters):
 * SQLite's and PostgreSQL's records table has one row shape, read back by the one decoder, and both
 * follow the log by position, woken by their own appends and polling for other processes'.
 */
import type { EventEmitter } from 'node:events'
import { type DecodeOptions, decodeRecord } from '../core/record-decoder.js'
import type { TailOptions } from '../ports/event-log.js'
import type { StoredRecord } from '../schemas/records.js'

/** A row of the records table (SQLite's `records`, PostgreSQL's `ocelog.records`, which gives its bigint position as text: `P`). */
export interface RecordRow<P extends number | string = number> {
  position: P
  stream: string
  type: string
  version: number
  data: string
  appended_at: string
  idempotency_key: string | null
  fingerprint: string | null
}

/**
 * A stored row back into a record, by the one decoder: throws UnreadableRecordError on a (type,
 * version) this build cannot read. The data's schema is not checked again: only the log's own
 * `append` writes the table, after validation, and the table refuses updates (`ocelog verify`
 * passes `{checkData: true}` to check it all the same).
 */
export function rowToRecord(row: RecordRow<number | string>, options: DecodeOptions = { checkData: false }): StoredRecord {
  return recordOf(Number(row.position), row.stream, row.type, row.version, row.data, row.appended_at, row.idempotency_key, row.fingerprint, options)
}

/**
 * A row of the records table as an array of its RecordRow columns in declaration order (position,
 * stream, type, version, data, appended_at, idempotency_key, fingerprint): better-sqlite3's raw
 * mode, which makes no object per row (about 0.8 µs less a record read).
 */
export type RecordTuple = readonly [number, string, string, number, string, string, string | null, string | null]

/** A stored row read as a RecordTuple back into a record, as rowToRecord. */
export function tupleToRecord(t: RecordTuple): StoredRecord {
  return recordOf(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], { checkData: false })
}

function recordOf(
  position: number,
  stream: string,
  type: string,
  version: number,
  data: string,
  appendedAt: string,
  key: string | null,
  fingerprint: string | null,
  options: DecodeOptions,
): StoredRecord {
  const record = decodeRecord({ position, stream, type, version, data, appendedAt }, options)
  if (key !== null && fingerprint !== null) record.idempotency = { key, fingerprint }
  return record
}

/**
 * The EventLog port's `tail` over `readAll`: yields each non-empty read after the last position
 * seen; when a read is empty, waits for the next `'append'` of `appended` (this process's own
 * appends), `pollMs` (other processes' appends), or the abort, then reads again.
 */
export async function* tailByPolling(
  readAll: (after: number | null, maxCount: number) => Promise<StoredRecord[]>,
  appended: EventEmitter,
  pollMs: number,
  after: number | null,
  options: TailOptions,
): AsyncIterable<StoredRecord[]> {
  let cursor = after
  const { signal } = options
  while (!signal.aborted) {
    const batch = await readAll(cursor, options.maxBatch)
    const last = batch[batch.length - 1]
    if (last !== undefined) {
      cursor = last.position
      yield batch
      continue
    }
    await nextAppendOrPoll(appended, pollMs, signal)
  }
}

/**
 * Resolves on the next `'append'` of `appended` (at once), after `pollMs`, or on abort. The timer is
 * a referenced setTimeout: a process that only tails the log (`ocelog project`) must stay alive
 * while it waits, and AbortSignal.timeout would not hold the event loop open.
 */
function nextAppendOrPoll(appended: EventEmitter, pollMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      appended.off('append', done)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, pollMs)
    appended.once('append', done)
    signal.addEventListener('abort', done, { once: true })
  })
}
