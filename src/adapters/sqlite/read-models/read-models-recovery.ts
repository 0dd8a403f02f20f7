/**
 * Read models that heal themselves (README § Operations, docs/operations.md § A damaged file): the
 * embedded default's read-models files (`read-models.db`, `read-models-process.db`) hold nothing but
 * what the projector derived from the log, so when one cannot be opened, fails SQLite's quick check,
 * or raises SQLITE_CORRUPT, SQLITE_NOTADB or an I/O error later, both are moved aside
 * (`<name>.corrupt-<time>`, with their -wal and -shm) and made anew; the projector then rebuilds them
 * from the log. While it rebuilds, the
 * read side answers ReadModelsRebuildingError (503 with Retry-After and the rebuild's progress),
 * never a 500. The log's `ocelog.db` is never touched here.
 */
import Database from 'better-sqlite3'
import { existsSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { messageOf, EngineUnavailableError, ReadModelsRebuildingError } from '../../../core/errors.js'
import type { ReadModelQuery } from '../../../ports/read-model-query.js'
import type { ReadModelStore } from '../../../ports/read-model-store.js'
import type { SqliteDatabase } from '../log/database.js'
import { startCheck } from '../start-check.js'
import {
  openReadModelsDatabase,
  PROCESS_READ_MODELS_FILE,
  READ_MODELS_FILE,
  READ_MODELS_FILE_KINDS,
  READ_MODELS_FILE_NAMES,
  type ReadModelsFile,
} from './read-models-database.js'
import { SqliteReadModelQuery } from './sqlite-read-model-query.js'
import { SqliteReadModelStore } from './sqlite-read-model-store.js'

/** SQLite result codes (sqlite.org/rescode.html) that mean the file itself is damaged or unreadable, not busy or full. */
const DAMAGE_CODES = /^SQLITE_(CORRUPT|NOTADB|IOERR)/

/**
 * Whether `error` (from better-sqlite3) says that a file is damaged: SQLITE_CORRUPT, SQLITE_NOTADB
 * or an I/O error (SQLITE_IOERR_*). A full disk (SQLITE_FULL) or a lock (SQLITE_BUSY) is not.
 */
export function isSqliteDamage(error: unknown): boolean {
  return error instanceof Database.SqliteError && DAMAGE_CODES.test(error.code)
}

/**
 * Renames the read models' files (`<dataDir>/read-models.db` and `read-models-process.db`, each with
 * its -wal and -shm) to `<name>.corrupt-<time>` (time: ISO 8601 UTC without colons, e.g.
 * `20261126T101500123Z`), keeping them for a post-mortem. Both go, whichever was damaged: they are
 * rebuilt from the log together.
 * @returns the new path of read-models.db's main file.
 * @throws the file system's error when a rename fails.
 */
export function moveReadModelsAside(dataDir: string, now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:.]/g, '')
  const moved = READ_MODELS_FILE_KINDS.map((kind) => {
    const from = join(dataDir, READ_MODELS_FILE_NAMES[kind])
    const to = `${from}.corrupt-${stamp}`
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(`${from}${suffix}`)) renameSync(`${from}${suffix}`, `${to}${suffix}`)
    }
    return to
  })
  return moved[0] ?? join(dataDir, `${READ_MODELS_FILE}.corrupt-${stamp}`)
}

/** What opening read-models.db found: the file, and when it was damaged, what and where it went. */
export interface CheckedReadModelsFile extends ReadModelsFile {
  /** Set when the file was damaged and moved aside: SQLite's message and the file's new path. */
  damaged: { error: string; movedTo: string } | null
}

/**
 * Opens the read models as openReadModelsDatabase does, after a check of both files (startCheck of
 * the connection, which checks the attached file too); files that cannot be opened or fail the check
 * are moved aside (moveReadModelsAside) and made anew, so that the projector rebuilds them from the log.
 * @throws when the fresh file cannot be made either (the folder is not writable, the disk is full).
 */
export function openCheckedReadModels(dataDir: string): CheckedReadModelsFile {
  let problem: string
  try {
    const file = openReadModelsDatabase(dataDir)
    try {
      const bad = startCheck(file.db, join(dataDir, READ_MODELS_FILE), 'rm_events')
      if (bad === null) return { ...file, damaged: null }
      problem = `quick_check: ${bad}`
    } catch (error) {
      problem = (error as Error).message
    }
    file.db.close()
  } catch (error) {
    if (!(error instanceof Database.SqliteError)) throw error
    problem = `${error.code}: ${error.message}`
  }
  const movedTo = moveReadModelsAside(dataDir)
  const file = openReadModelsDatabase(dataDir)
  return {
    db: file.db,
    made: `the read models' files were damaged (${problem}); moved them aside (${READ_MODELS_FILE} to ${movedTo}, ${PROCESS_READ_MODELS_FILE} beside it)`,
    damaged: { error: problem, movedTo },
  }
}

/**
 * `store` with every method watched: an error that says the file is damaged (isSqliteDamage) calls
 * `onDamage` once, then is thrown on as it was. The projector's worker reports so to the API
 * thread, which moves the file aside (HealingReadModels).
 */
export function watchForDamage<T extends object>(store: T, onDamage: (error: unknown) => void): T {
  let reported = false
  const seen = (error: unknown): never => {
    if (!reported && isSqliteDamage(error)) {
      reported = true
      onDamage(error)
    }
    throw error
  }
  return new Proxy(store, {
    get: (target, name) => {
      const value: unknown = Reflect.get(target, name)
      if (typeof value !== 'function') return value
      return (...args: unknown[]): unknown => {
        try {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args)
          return result instanceof Promise ? result.catch(seen) : result
        } catch (error) {
          return seen(error)
        }
      }
    },
  })
}

/** What writes the read-models files besides the API thread (the embedded projector's workers): stopped before the files move, started after. */
export interface ReadModelsWriters {
  pause(): Promise<void>
  resume(): void
}

/** Where a rebuild is: the read models' checkpoint and the log's head when the rebuild began. */
export interface RebuildProgress {
  position: number
  head: number
}

/**
 * The API thread's read models on the embedded default, healing themselves: `query` and `store`
 * answer through the current file; an error that says the file is damaged (isSqliteDamage), from
 * them or reported by the projector (`damaged`), moves the file aside, makes it anew and lets the
 * projector rebuild it. Until the rebuild reaches the log's head as it was when the damage was
 * found, `query` throws ReadModelsRebuildingError (503), whatever the reader asks.
 */
export class HealingReadModels {
  /** Damaged files moved aside by this process (`ocelog_read_models_recovered_total`). */
  recovered = 0
  /** Why the file was made at open (then the projector rebuilds it from the log), or null when it was there and current. */
  readonly made: string | null
  logger: Pick<Logger, 'info' | 'error'> | null = null
  writers: ReadModelsWriters | null = null
  private db: SqliteDatabase
  private currentQuery: SqliteReadModelQuery
  private currentStore: SqliteReadModelStore
  /** Set while a rebuild runs: the head it must reach (null until read). */
  private rebuilding: { head: number | null } | null = null
  private swapping: Promise<void> | null = null
  readonly query: ReadModelQuery
  readonly store: ReadModelStore

  /**
   * @param file the file as openCheckedReadModels opened it; one moved aside at open counts as a
   *   recovery, and the read side answers 503 until its rebuild reaches `head()` of now.
   * @param head the log's head position (null: empty), the target of a rebuild.
   * @param applied the position up to which a store's read models hold the log (the lowest of the
   *   projections' checkpoints; null: nothing applied), from the composition root, which knows the projections.
   */
  constructor(
    private readonly dataDir: string,
    file: CheckedReadModelsFile,
    private readonly head: () => Promise<number | null>,
    private readonly applied: (store: ReadModelStore) => Promise<number | null>,
  ) {
    this.db = file.db
    this.made = file.made
    this.currentQuery = new SqliteReadModelQuery(file.db)
    this.currentStore = new SqliteReadModelStore(file.db)
    if (file.damaged !== null) {
      this.recovered += 1
      this.beginRebuild()
    }
    this.query = this.healing(() => this.currentQuery, true)
    this.store = this.healing(() => this.currentStore, false)
  }

  /** The connection to the current file (it changes after a recovery). */
  get database(): SqliteDatabase {
    return this.db
  }

  /** The rebuild under way, or null when the read models answer. */
  async progress(): Promise<RebuildProgress | null> {
    const rebuild = this.rebuilding
    if (rebuild === null) return null
    if (this.swapping !== null || rebuild.head === null) return { position: 0, head: rebuild.head ?? 0 }
    const position = (await this.applied(this.currentStore)) ?? 0
    if (position >= rebuild.head) {
      this.rebuilding = null
      this.logger?.info(`read models: rebuilt from the log up to position ${String(position)}; reads answer again`)
      return null
    }
    return { position, head: rebuild.head }
  }

  /**
   * The file is damaged (`error` says how): moves it aside, makes it anew and restarts its writers,
   * once however many report it; meanwhile and until the rebuild is done, reads answer 503.
   */
  damaged(error: unknown): void {
    if (this.swapping !== null) return
    const message = messageOf(error)
    this.beginRebuild()
    this.swapping = this.recover(message).finally(() => {
      this.swapping = null
    })
  }

  private beginRebuild(): void {
    const rebuild: { head: number | null } = { head: null }
    this.rebuilding = rebuild
    void this.head().then(
      (head) => (rebuild.head = head ?? 0),
      () => (rebuild.head = Number.MAX_SAFE_INTEGER),
    )
  }

  private async recover(message: string): Promise<void> {
    this.logger?.error(`the read models' files are damaged (${message}); moving them aside and rebuilding the read models from the log`)
    try {
      await this.writers?.pause()
      for (const close of [() => this.currentStore.close(), () => this.db.close()]) {
        try {
          await close()
        } catch {
          // A connection to a damaged file may fail to close; it is replaced either way.
        }
      }
      const movedTo = moveReadModelsAside(this.dataDir)
      const file = openReadModelsDatabase(this.dataDir)
      this.db = file.db
      this.currentQuery = new SqliteReadModelQuery(file.db)
      this.currentStore = new SqliteReadModelStore(file.db)
      this.recovered += 1
      this.logger?.info(
        `read models: moved aside (${READ_MODELS_FILE} to ${movedTo}, ${PROCESS_READ_MODELS_FILE} beside it); made anew, the projector rebuilds them from the log`,
      )
    } catch (error) {
      this.logger?.error({ err: error }, `read models: could not be moved aside and made anew; the next damaged read tries again`)
    } finally {
      this.writers?.resume()
    }
  }

  private async rebuildingError(): Promise<ReadModelsRebuildingError | null> {
    const progress = await this.progress()
    return progress === null ? null : new ReadModelsRebuildingError(progress.position, progress.head)
  }

  /**
   * A port whose every method calls the current adapter's (`current()`): a damage error starts a
   * recovery and is answered as ReadModelsRebuildingError; with `gate`, calls during a rebuild are
   * answered so without reaching the file. `close` always goes through.
   */
  private healing<T extends object>(current: () => T, gate: boolean): T {
    const call = async (name: string | symbol, args: unknown[]): Promise<unknown> => {
      if (name !== 'close' && (gate || this.swapping !== null)) {
        const rebuilding = await this.rebuildingError()
        if (rebuilding !== null) throw rebuilding
      }
      const target = current()
      const method: unknown = Reflect.get(target, name)
      if (typeof method !== 'function') throw new TypeError(`${String(name)} is not a method of the read-model port`)
      try {
        return await (method as (...a: unknown[]) => Promise<unknown>).apply(target, args)
      } catch (error) {
        if (!isSqliteDamage(error)) throw error
        this.damaged(error)
        throw (await this.rebuildingError()) ?? error
      }
    }
    return new Proxy(current(), {
      get: (_target, name) => {
        const value: unknown = Reflect.get(current(), name)
        return typeof value === 'function' ? (...args: unknown[]) => call(name, args) : value
      },
    })
  }
}

/**
 * The API thread's read models on the embedded default, opened in one step: `<dataDir>/read-models.db`
 * checked (openCheckedReadModels: a damaged file is moved aside and made anew) and wrapped in
 * HealingReadModels. `head` and `applied` are HealingReadModels' own.
 * @throws EngineUnavailableError naming the file and OCELOG_DATA_DIR when the file cannot be made
 *   either (the folder is not writable, the disk is full).
 */
export function openHealingReadModels(
  dataDir: string,
  head: () => Promise<number | null>,
  applied: (store: ReadModelStore) => Promise<number | null>,
): HealingReadModels {
  let file: CheckedReadModelsFile
  try {
    file = openCheckedReadModels(dataDir)
  } catch (error) {
    throw new EngineUnavailableError(`cannot open ${READ_MODELS_FILE} in OCELOG_DATA_DIR=${dataDir}: ${(error as Error).message}`)
  }
  return new HealingReadModels(dataDir, file, head, applied)
}
