/**
 * The SQLite log's durable group commit (src/adapters/sqlite/log/wal-sync.ts): the commit runs under
 * synchronous=NORMAL and the WAL is fdatasynced off the event loop, and a caller is answered only
 * after an fdatasync that started after its commit. The fdatasync is held by hand here, so that the
 * order can be observed; a failing disk cannot be made here, so its error is passed in.
 */
import { existsSync, fdatasync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { type FdatasyncFn, WalSync } from '../../src/adapters/sqlite/log/wal-sync.js'
import { LogUnavailableError } from '../../src/ports/event-log.js'
import type { StoredRecord } from '../../src/schemas/records.js'
import { buildObjectUpserted } from '../../src/core/records.js'
import { heldFdatasync, testContext } from '../helpers/sqlite.js'

let dir: string
let db: SqliteDatabase

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-wal-sync-'))
  db = openDatabase(dir)
})
afterEach(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** An object upsert record of dataset d1, as the API builds it. */
const upsert = (id: string) => buildObjectUpserted({ type: 't', id, properties: {} }, testContext('d1'))

/** Lets the group commit's setImmediate and the promise callbacks run. */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

const count = () => db.prepare('SELECT count(*) FROM records').pluck().get() as number

/** A WalSync on an empty `other.db-wal` of the test's folder (a WAL of no database: WalSync only opens and syncs it). */
function walSyncOn(sync: FdatasyncFn): { walPath: string; walSync: WalSync } {
  const walPath = join(dir, 'other.db-wal')
  writeFileSync(walPath, '')
  return { walPath, walSync: new WalSync(walPath, sync) }
}

/** Whether `p` has settled, without waiting for it. */
function tracked<T>(p: Promise<T>) {
  const state = { settled: false, value: undefined as T | undefined, error: undefined as unknown }
  p.then(
    (value) => {
      state.settled = true
      state.value = value
    },
    (error: unknown) => {
      state.settled = true
      state.error = error
    },
  )
  return state
}

describe('SqliteEventLog: durable group commit by fdatasync of the WAL', () => {
  it('answers an append only after the fdatasync of the WAL that follows its commit, and wakes onCommit listeners then', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    let commits = 0
    log.onCommit(() => commits++)
    const a = tracked(log.append('d1', [upsert('a')], ['t:a']))
    await turns()
    expect(count()).toBe(1) // committed,
    expect(held.calls).toBe(1) // its fdatasync asked for,
    expect(a.settled).toBe(false) // and the caller not answered yet
    expect(commits).toBe(0)
    expect(existsSync(join(dir, 'ocelog.db-wal'))).toBe(true)
    held.release()
    await turns()
    expect(a.settled).toBe(true)
    expect(a.value?.positions).toEqual([1])
    expect([...(a.value?.claimed ?? [])]).toEqual(['t:a'])
    expect(commits).toBe(1)
    await log.close()
  })

  it('gathers the appends made during an fdatasync into one commit after it, with one fdatasync of their own', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    const a = tracked(log.append('d1', [upsert('a')], []))
    await turns()
    expect(held.calls).toBe(1)
    // Two appends in two turns while the first fdatasync runs: they wait, uncommitted.
    const b = tracked(log.append('d1', [upsert('b')], []))
    await turns()
    const c = tracked(log.append('d1', [upsert('c')], []))
    await turns()
    expect(count()).toBe(1)
    expect(held.calls).toBe(1)
    held.release()
    await turns()
    expect([a.settled, b.settled, c.settled]).toEqual([true, false, false])
    // Committed together once the first returned, and synced by one fdatasync.
    expect(count()).toBe(3)
    expect(held.calls).toBe(2)
    held.release()
    await turns()
    expect([b.value?.positions, c.value?.positions]).toEqual([[2], [3]])
    expect(held.calls).toBe(2)
    expect(held.fds[0]).toBe(held.fds[1])
    await log.close()
  })

  it('keeps the connection at synchronous=FULL outside its own commits (the key store writes on it too)', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    const a = log.append('d1', [upsert('a')], [])
    await turns()
    expect(db.pragma('synchronous', { simple: true })).toBe(2)
    held.release()
    await a
    await log.close()
  })

  it('close() waits for the fdatasync in flight', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    const a = tracked(log.append('d1', [upsert('a')], []))
    await turns()
    const closed = tracked(log.close())
    await turns()
    expect(closed.settled).toBe(false)
    held.release()
    await turns()
    expect(a.settled && closed.settled).toBe(true)
  })

  it('rejects the callers of a failed fdatasync with LogUnavailableError, and every later append too', async () => {
    let calls = 0
    const failing: FdatasyncFn = (_fd, callback) => {
      calls++
      callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
    }
    const log = new SqliteEventLog(db, { fdatasync: failing })
    const first = await log.append('d1', [upsert('a')], []).catch((e: unknown) => e)
    expect(first).toBeInstanceOf(LogUnavailableError)
    expect((first as Error).message).toMatch(/append to dataset-d1 was not made durable: fdatasync of .*ocelog\.db-wal failed: EIO/)
    // Committed, though unconfirmed: a retry with the same idempotency key is then a duplicate.
    expect(count()).toBe(1)
    // The page cache's state is unknown after a failed fdatasync: no later append is confirmed.
    const second = await log.append('d1', [upsert('b')], []).catch((e: unknown) => e)
    expect(second).toBeInstanceOf(LogUnavailableError)
    expect(calls).toBe(1)
    await log.close()
  })

  it('leaves a connection below synchronous=FULL as it is: no fdatasync, answered after the commit', async () => {
    db.pragma('synchronous = NORMAL')
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    const result = await log.append('d1', [upsert('a')], [])
    expect(result.positions).toEqual([1])
    expect(held.calls).toBe(0)
    await log.close()
  })
})

/**
 * A writer and a reader log on two connections to one file, each with its own held fdatasync
 * (`readerOptions` may give the reader another), closed after `body`.
 */
async function withWriterAndReader(
  body: (w: {
    writer: SqliteEventLog
    writerSync: ReturnType<typeof heldFdatasync>
    reader: SqliteEventLog
    readerSync: ReturnType<typeof heldFdatasync>
  }) => Promise<void>,
  readerOptions: { fdatasync?: FdatasyncFn; pollMs?: number } = {},
): Promise<void> {
  const writerSync = heldFdatasync()
  const writer = new SqliteEventLog(db, { fdatasync: writerSync.sync })
  const readerDb = openDatabase(dir)
  const readerSync = heldFdatasync()
  const reader = new SqliteEventLog(readerDb, { fdatasync: readerSync.sync, ...readerOptions })
  try {
    await body({ writer, writerSync, reader, readerSync })
  } finally {
    await writer.close()
    await reader.close()
    readerDb.close()
  }
}

describe('SqliteEventLog: reads return durable records only', () => {
  it("a reader on another connection gets a writer's committed records only after an fdatasync of the WAL that started after its read", async () => {
    await withWriterAndReader(async ({ writer, writerSync, reader, readerSync }) => {
      const a = tracked(writer.append('d1', [upsert('a'), upsert('b')], []))
      await turns()
      expect(count()).toBe(2) // committed, not yet on disk (the writer's fdatasync is held)
      const read = tracked(reader.readAll(null, 10))
      await turns()
      expect(readerSync.calls).toBe(1) // the read waits on an fdatasync of the reader's
      expect(read.settled).toBe(false)
      readerSync.release()
      await turns()
      expect(read.value?.map((r) => r.position)).toEqual([1, 2])
      expect(a.settled).toBe(false) // the writer's own fdatasync is still held: its caller waits
      // Known to be on disk now: reading them again, by either read, asks for no fdatasync.
      expect((await reader.readAll(null, 10)).length).toBe(2)
      expect((await reader.readStream('d1', null, 10)).map((r) => r.position)).toEqual([1, 2])
      expect(readerSync.calls).toBe(1)
      writerSync.release()
      await turns()
      expect(a.value?.positions).toEqual([1, 2])
    })
  })

  it('reads of what its own answered appends wrote need no fdatasync; an empty read needs none either', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    expect(await log.readAll(null, 10)).toEqual([])
    const a = log.append('d1', [upsert('a')], [])
    await turns()
    held.release()
    expect((await a).positions).toEqual([1])
    expect((await log.readAll(null, 10)).map((r) => r.position)).toEqual([1])
    expect((await log.readStream('d1', null, 10)).map((r) => r.position)).toEqual([1])
    expect(held.calls).toBe(1) // the append's only
    await log.close()
  })

  it('a tail yields a committed batch only once it is on disk', async () => {
    await withWriterAndReader(
      async ({ writer, writerSync, reader, readerSync }) => {
        const abort = new AbortController()
        const a = writer.append('d1', [upsert('a')], [])
        await turns()
        const it = reader.tail(null, { signal: abort.signal, maxBatch: 10 })[Symbol.asyncIterator]()
        const next = tracked(it.next())
        await turns()
        expect(readerSync.calls).toBe(1)
        expect(next.settled).toBe(false)
        readerSync.release()
        await turns()
        expect((next.value?.value as StoredRecord[] | undefined)?.map((r) => r.position)).toEqual([1])
        abort.abort()
        writerSync.release()
        await a
      },
      { pollMs: 5 },
    )
  })

  it('a read past the durable head fails with LogUnavailableError when the fdatasync fails', async () => {
    const failing: FdatasyncFn = (_fd, callback) => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
    await withWriterAndReader(
      async ({ writer, writerSync, reader }) => {
        const a = writer.append('d1', [upsert('a')], [])
        await turns()
        const error = await reader.readAll(null, 10).catch((e: unknown) => e)
        expect(error).toBeInstanceOf(LogUnavailableError)
        expect((error as Error).message).toMatch(/read of the log up to position 1: its durability is unknown: fdatasync of .*ocelog\.db-wal failed: EIO/)
        writerSync.release()
        await a
      },
      { fdatasync: failing },
    )
  })
})

describe('SqliteEventLog: the durable head after a read', () => {
  it('one fdatasync covers every record committed before it, so a catch-up in several reads syncs once', async () => {
    await withWriterAndReader(async ({ writer, writerSync, reader, readerSync }) => {
      const a = writer.append('d1', [upsert('a'), upsert('b'), upsert('c')], [])
      await turns()
      const first = tracked(reader.readAll(null, 1))
      await turns()
      readerSync.release()
      await turns()
      expect(first.value?.map((r) => r.position)).toEqual([1])
      // Positions 2 and 3 were committed before that fdatasync: read on without another.
      expect((await reader.readAll(1, 1)).map((r) => r.position)).toEqual([2])
      expect((await reader.readAll(2, 1)).map((r) => r.position)).toEqual([3])
      expect(readerSync.calls).toBe(1)
      writerSync.release()
      await a
      // A record committed after it needs an fdatasync of its own.
      const d = writer.append('d1', [upsert('d')], [])
      await turns()
      writerSync.release()
      await d
      const later = tracked(reader.readAll(3, 10))
      await turns()
      expect(readerSync.calls).toBe(2)
      readerSync.release()
      await turns()
      expect(later.value?.map((r) => r.position)).toEqual([4])
    })
  })
})

describe('SqliteEventLog: the durable head passed from the appending log (the embedded projector)', () => {
  it('at each commit the durable position is known, and a reader woken with it reads up to it without an fdatasync of its own', async () => {
    await withWriterAndReader(async ({ writer, writerSync, reader, readerSync }) => {
      const heads: number[] = []
      writer.onCommit(() => heads.push(writer.durablePosition))
      const a = writer.append('d1', [upsert('a'), upsert('b')], [])
      await turns()
      writerSync.release()
      await a
      expect(heads).toEqual([2])
      reader.wake(writer.durablePosition)
      expect((await reader.readAll(null, 10)).map((r) => r.position)).toEqual([1, 2])
      expect(readerSync.calls).toBe(0)
      // A record past the head it was given still waits for its own fdatasync.
      const c = writer.append('d1', [upsert('c')], [])
      await turns()
      const read = tracked(reader.readAll(2, 10))
      await turns()
      expect(readerSync.calls).toBe(1)
      expect(read.settled).toBe(false)
      readerSync.release()
      writerSync.release()
      await c
      await turns()
      expect(read.value?.map((r) => r.position)).toEqual([3])
      expect(heads).toEqual([2, 3])
    })
  })
})

describe('WalSync: drained() after a caller asks again from its callback', () => {
  it('resolves only once the fdatasync that the callback started has returned too', async () => {
    const held = heldFdatasync()
    const { walSync } = walSyncOn(held.sync)
    const answers: string[] = []
    walSync.request(() => {
      answers.push('first')
      walSync.request(() => answers.push('second'))
    })
    const drained = tracked(walSync.drained())
    held.release()
    await turns()
    expect(answers).toEqual(['first'])
    expect(held.calls).toBe(2) // the second fdatasync runs,
    expect(walSync.busy).toBe(true)
    expect(drained.settled).toBe(false) // so the WalSync is not drained
    held.release()
    await turns()
    expect(answers).toEqual(['first', 'second'])
    expect(drained.settled).toBe(true)
    await walSync.close()
  })
})

describe('WalSync: a caller whose callback throws', () => {
  it('throws its error, yet the next fdatasync starts, its callers are answered and drained() resolves', async () => {
    const held = heldFdatasync()
    const { walSync } = walSyncOn(held.sync)
    const answers: string[] = []
    walSync.request(() => {
      answers.push('first')
      throw new Error('a caller failed')
    })
    walSync.request(() => answers.push('second')) // asked during the first fdatasync: waits for the next
    const drained = tracked(walSync.drained())
    expect(held.calls).toBe(1)
    expect(() => held.release()).toThrow('a caller failed')
    expect(answers).toEqual(['first'])
    expect(held.calls).toBe(2) // the throw did not stop the next fdatasync from starting
    held.release()
    await turns()
    expect(answers).toEqual(['first', 'second'])
    expect(walSync.busy).toBe(false)
    expect(drained.settled).toBe(true)
    // A caller asking after the throw is served by a new fdatasync, not refused: the error was the caller's, not the disk's.
    const third = new Promise<Error | null>((resolve) => walSync.request(resolve))
    held.release()
    expect(await third).toBeNull()
    await walSync.close()
  })
})

describe('WalSync: an fdatasync function that throws instead of calling back', () => {
  /** An FdatasyncFn that throws at once, as `fs.fdatasync` does on an argument it refuses. */
  const throwing: FdatasyncFn = () => {
    throw new Error('refused at the call')
  }

  it('answers its caller with the error, leaves the WalSync idle, and drained() resolves', async () => {
    const { walPath, walSync } = walSyncOn(throwing)
    const answers: Array<Error | null> = []
    expect(() => walSync.request((error) => answers.push(error))).not.toThrow()
    expect(answers.map((e) => e?.message)).toEqual([`fdatasync of ${walPath} failed: refused at the call`])
    expect(walSync.busy).toBe(false)
    const drained = tracked(walSync.drained())
    await turns(1)
    expect(drained.settled).toBe(true)
    // The error is sticky, as a failed fdatasync's: the next caller gets it without a call.
    const next = await new Promise<Error | null>((resolve) => walSync.request(resolve))
    expect(next?.message).toBe(`fdatasync of ${walPath} failed: refused at the call`)
    await walSync.close()
  })

  it('SqliteEventLog: the append is refused with LogUnavailableError and close() resolves', async () => {
    const log = new SqliteEventLog(db, { fdatasync: throwing })
    const append = tracked(log.append('d1', [upsert('a')], []))
    await turns()
    expect(append.settled).toBe(true)
    expect(append.error).toBeInstanceOf(LogUnavailableError)
    expect(String(append.error)).toMatch(/was not made durable: fdatasync of .*ocelog\.db-wal failed: refused at the call/)
    const closed = tracked(log.close())
    await turns()
    expect(closed.settled).toBe(true)
  })
})

describe('WalSync.close()', () => {
  it('closes the descriptor at once when idle, and refuses a request made just after it rather than sync a closed descriptor', async () => {
    const held = heldFdatasync(fdatasync)
    const { walSync } = walSyncOn(held.sync)
    const first = new Promise<Error | null>((resolve) => walSync.request(resolve))
    held.release()
    expect(await first).toBeNull() // the descriptor is open now
    // Idle, then a request in the same turn (a read past the durable head, say): no fdatasync may
    // run on a descriptor that close() closed (EBADF, or another file that took the number), and
    // none on the WAL opened again (nothing would close it): the request is answered with an error.
    const closing = walSync.close()
    const second = new Promise<Error | null>((resolve) => walSync.request(resolve))
    await turns()
    expect(held.waiting).toBe(0)
    expect(held.calls).toBe(1)
    expect(String(await second)).toMatch(/was closed/)
    await closing
    await walSync.close()
  })
})

describe('WalSync: a request after close()', () => {
  it('is answered with an error and opens no descriptor; a read of the log past its durable head then fails with LogUnavailableError', async () => {
    const held = heldFdatasync()
    const log = new SqliteEventLog(db, { fdatasync: held.sync })
    const appended = log.append('d1', [upsert('a')], [])
    await turns()
    held.release()
    await appended
    // Another connection's commit: past this log's durable head, so a read of it asks for an fdatasync.
    const otherDb = openDatabase(dir)
    const other = new SqliteEventLog(otherDb)
    await other.append('d1', [upsert('b')], [])
    await other.close()
    otherDb.close()
    await log.close()
    const calls = held.calls
    await expect(log.readAll(null, 10)).rejects.toThrow(LogUnavailableError)
    await expect(log.readAll(null, 10)).rejects.toThrow(/was closed/)
    expect(held.calls).toBe(calls) // no fdatasync was started on a descriptor opened again
  })
})
