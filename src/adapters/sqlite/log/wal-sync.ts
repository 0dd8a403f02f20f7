/**
 * Durability of the SQLite log's group commits off the event loop (README § The API: a 2xx means
 * durable). The log commits with `synchronous=NORMAL`, which in WAL mode writes the transaction's
 * frames to `ocelog.db-wal` without an fsync, and then asks this class for an `fdatasync(2)` of the
 * WAL file, run in libuv's thread pool. A caller is answered only after an fdatasync that started
 * after its commit has returned. That is what `synchronous=FULL` does inside the commit (SQLite,
 * "Write-Ahead Logging" § Performance Considerations; PRAGMA synchronous), except that the thread
 * that commits goes on serving requests meanwhile, and commits made during one fdatasync share the
 * next.
 *
 * Checkpoints are not affected: under NORMAL, SQLite itself syncs the WAL before a checkpoint and
 * the database file after it.
 *
 * A failed fdatasync leaves the file's state in the page cache unknown (Linux may drop the dirty
 * pages it could not write), so the error is sticky: every later request fails with it too, and
 * only a restart (which re-reads the file) clears it. PostgreSQL does the same since 2018.
 */
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs'
import { dirname } from 'node:path'

/** `fs.fdatasync`'s shape: tests pass one that they complete by hand, or that fails. */
export type FdatasyncFn = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void

export class WalSync {
  private fd: number | null = null
  private inFlight = false
  /** Callers whose commits precede the next fdatasync. */
  private waiting: Array<(error: Error | null) => void> = []
  private idle: Array<() => void> = []
  private failure: Error | null = null
  /** Set by close(): later requests are answered with an error, not a new descriptor. */
  private closed = false

  /**
   * @param walPath the WAL file (`<database>-wal`); opened, read-only, at the first request, when
   *   the first commit has surely made it. Its folder is fsynced once then, so that the file's
   *   directory entry is durable too.
   * @param sync the fdatasync to run (default `fs.fdatasync`, in libuv's thread pool).
   */
  constructor(
    private readonly walPath: string,
    private readonly sync: FdatasyncFn = fdatasync,
  ) {}

  /**
   * Calls `done(null)` once every commit made before this call is on disk, or `done(error)` when
   * that cannot be known: the fdatasync failed, now or before (see the class comment), or close()
   * has run.
   */
  request(done: (error: Error | null) => void): void {
    const refusal = this.failure ?? (this.closed ? new Error(`the WAL ${this.walPath} was closed: its durability is no longer known here`) : null)
    if (refusal !== null) {
      queueMicrotask(() => done(refusal))
      return
    }
    this.waiting.push(done)
    if (!this.inFlight) this.start()
  }

  /** Whether an fdatasync is running or requested: a commit made now would wait for the next one. */
  get busy(): boolean {
    return this.inFlight || this.waiting.length > 0
  }

  /** Resolves when no fdatasync is running or waiting (then every answered commit is on disk). */
  drained(): Promise<void> {
    if (!this.inFlight && this.waiting.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  /**
   * Closes the WAL file's descriptor once no fdatasync runs or waits, looked at again after each
   * wait: one asked for meanwhile is synced first. When idle it closes in the call itself, with no
   * turn in between in which an fdatasync could start on the descriptor (one on a closed descriptor
   * fails with EBADF, or syncs whatever file took its number).
   */
  async close(): Promise<void> {
    while (this.busy) await this.drained()
    // A request after this is refused (request): it would open the WAL again, and nothing would close it.
    this.closed = true
    if (this.fd !== null) closeSync(this.fd)
    this.fd = null
  }

  private start(): void {
    const batch = this.waiting.splice(0)
    this.inFlight = true
    const finish = (error: Error | null) => {
      if (error !== null) this.failure ??= new Error(`fdatasync of ${this.walPath} failed: ${error.message}`)
      this.inFlight = false
      // Every caller is answered, and the next fdatasync started or the idle waiters told, even when a
      // callback throws: one that stopped this loop would leave the others' commits unanswered and
      // close() waiting for ever. The first error is thrown again afterwards, as it would have been.
      let thrown: { error: unknown } | null = null
      for (const done of batch) {
        try {
          done(this.failure)
        } catch (caught) {
          thrown ??= { error: caught }
        }
      }
      // A caller that asked again from its callback started the next fdatasync already: its end goes on from here.
      if (!this.inFlight) {
        if (this.waiting.length > 0) this.start()
        else for (const resolve of this.idle.splice(0)) resolve()
      }
      if (thrown !== null) throw thrown.error
    }
    try {
      this.fd ??= this.openWal()
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)))
      return
    }
    // A sync that throws instead of calling back (`fs.fdatasync` does on an argument it refuses) fails
    // this fdatasync as an error it called back with would: else inFlight stayed set, this batch
    // unanswered and close() waiting for ever. Only its first answer counts.
    let answered = false
    const once = (error: Error | null) => {
      if (answered) return
      answered = true
      finish(error)
    }
    try {
      this.sync(this.fd, once)
    } catch (error) {
      // Thrown by a caller's callback, after the sync answered: finish throws that again.
      if (answered) throw error
      once(error instanceof Error ? error : new Error(String(error)))
    }
  }

  private openWal(): number {
    const fd = openSync(this.walPath, 'r')
    const dir = openSync(dirname(this.walPath), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
    return fd
  }
}
