/**
 * The SQLite log's appends made while an fdatasync of the WAL that a read asked for runs (a read of
 * records another connection wrote waits for one: docs/architecture.md#durability-on-the-embedded-default).
 * The log holds such appends until that fdatasync returns, so that they share one commit; they must
 * then be written and answered, whether the fdatasync returns, fails, or the log is being closed.
 * Two SqliteEventLog instances on one real file; the fdatasync is the real one, held by hand where
 * the order matters, and a failing one only where a failing disk is needed (none can be made here).
 */
import { fdatasync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog, type SqliteEventLogOptions } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import type { FdatasyncFn } from '../../src/adapters/sqlite/log/wal-sync.js'
import { LogUnavailableError } from '../../src/ports/event-log.js'
import { upsertRecord } from '../contract/fixtures.js'
import { heldFdatasync, openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

/** How long an append may take here before it counts as lost: far above any fdatasync of a few pages. */
const GENEROUS_MS = 10_000

let fx: SqliteFixture | undefined
let otherDb: SqliteDatabase | undefined
let other: SqliteEventLog | undefined

/** `fx` with its log built with `options`, and `other`: a second log on another connection to the same ocelog.db. */
function open(options: SqliteEventLogOptions = {}): { fx: SqliteFixture; log: SqliteEventLog; other: SqliteEventLog } {
  fx = openSqliteFixture('ocelog-append-during-sync-', options)
  otherDb = openDatabase(fx.dir)
  other = new SqliteEventLog(otherDb)
  return { fx, log: fx.log, other }
}

beforeEach(() => {
  fx = undefined
  otherDb = undefined
  other = undefined
})
afterEach(async () => {
  await other?.close()
  otherDb?.close()
  fx?.close()
})

/** `p`'s value, or a rejection naming `what` when it has not settled after GENEROUS_MS. */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still pending after ${String(GENEROUS_MS)} ms`)), GENEROUS_MS)
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Lets setImmediate callbacks and promise callbacks run. */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

const upsert = (id: string) => upsertRecord('d', 'order', id, {})

describe('SqliteEventLog: an append made while a read syncs the WAL', () => {
  it('is written and answered once the read’s fdatasync returns, with no later append to push it', async () => {
    const { log, other } = open()
    await other.append('d', [upsert('a')], [])
    // A read of another connection's record: this log must fdatasync the WAL before it answers.
    const read = log.readAll(null, 10)
    const b = upsert('b')
    const append = log.append('d', [b], [])
    expect((await within(read, 'the read')).map((r) => r.position)).toEqual([1])
    const result = await within(append, 'the append made during the read’s fdatasync')
    expect(result.positions).toEqual([2])
    const logged = await log.readAll(null, 10)
    expect(logged.map((r) => r.position)).toEqual([1, 2])
    expect(logged[1]?.data).toEqual(b.data)
    expect((await other.readAll(1, 10)).map((r) => r.position)).toEqual([2])
  })

  it('is written once the read’s fdatasync returns when that one was queued behind the log’s own', async () => {
    const held = heldFdatasync(fdatasync)
    const { log, other } = open({ fdatasync: held.sync })
    const first = log.append('d', [upsert('a')], [])
    await turns()
    expect(held.waiting).toBe(1) // the first append's fdatasync
    await other.append('d', [upsert('b')], [])
    const read = log.readAll(null, 10) // position 2 is not known to be on disk: an fdatasync after the first
    const second = log.append('d', [upsert('c')], [])
    await turns()
    held.release()
    expect((await within(first, 'the first append')).positions).toEqual([1])
    await turns()
    expect(held.waiting).toBe(1) // the read's
    held.release()
    expect((await within(read, 'the read')).map((r) => r.position)).toEqual([1, 2])
    // The second append is committed after the read's fdatasync, then waits for its own.
    await within(
      (async () => {
        while (held.waiting === 0) await turns(1)
      })(),
      'the second append’s fdatasync',
    )
    held.release()
    expect((await within(second, 'the second append')).positions).toEqual([3])
    expect((await log.readAll(2, 10)).map((r) => r.position)).toEqual([3])
  })

  it('is rejected with LogUnavailableError, not left pending, when the read’s fdatasync fails', async () => {
    // The failure comes back from the thread pool a turn later, as a real one would, not within the call.
    const failing: FdatasyncFn = (_fd, callback) => {
      setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })))
    }
    const { log, other } = open({ fdatasync: failing })
    await other.append('d', [upsert('a')], [])
    const read = log.readAll(null, 10).catch((e: unknown) => e)
    const append = log.append('d', [upsert('b')], []).catch((e: unknown) => e)
    const readError = await within(read, 'the read')
    expect(readError).toBeInstanceOf(LogUnavailableError)
    const appendError = await within(append, 'the append made during the failing fdatasync')
    expect(appendError).toBeInstanceOf(LogUnavailableError)
    expect((appendError as Error).message).toMatch(/append to dataset-d was not made durable: fdatasync of .*ocelog\.db-wal failed: EIO/)
  })

  it('is answered by close(), when made while close() waits for the read’s fdatasync', async () => {
    const held = heldFdatasync(fdatasync)
    const { log, other } = open({ fdatasync: held.sync })
    await other.append('d', [upsert('a')], [])
    const read = log.readAll(null, 10)
    await turns()
    expect(held.waiting).toBe(1)
    const closed = log.close()
    const append = log.append('d', [upsert('b')], [])
    let answered = false
    void append.then(() => {
      answered = true
    })
    held.release()
    expect((await within(read, 'the read')).map((r) => r.position)).toEqual([1])
    // close() commits the append and waits for its fdatasync: release it when asked for.
    await within(
      (async () => {
        while (held.waiting === 0) await turns(1)
      })(),
      'the append’s fdatasync',
    )
    held.release()
    await within(closed, 'close()')
    expect(answered).toBe(true)
    expect((await append).positions).toEqual([2])
    expect((await other.readAll(1, 10)).map((r) => r.position)).toEqual([2])
  })

  it('is refused with LogUnavailableError once close() has resolved, and nothing is written', async () => {
    const { log, other } = open()
    expect((await log.append('d', [upsert('a')], [])).positions).toEqual([1])
    await log.close()
    await expect(log.append('d', [upsert('b')], [])).rejects.toBeInstanceOf(LogUnavailableError)
    await expect(log.append('d', [upsert('c')], [])).rejects.toThrow(/closed/)
    expect((await other.readAll(null, 10)).map((r) => r.position)).toEqual([1])
  })
})
