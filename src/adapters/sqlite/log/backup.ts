/**
 * Online backup and restore of the embedded default's log file (README § Operations,
 * docs/operations.md § Backup and restore): `ocelog.db` holds the log, the keys and the claims,
 * the only data that cannot be rebuilt; the read models (`read-models.db`, `read-models-process.db`) are not copied (they are rebuilt from the log).
 *
 * The copy goes through SQLite's online backup API (sqlite.org/backup.html, better-sqlite3's
 * `backup()`), page by page, inside one read transaction of the source connection: in WAL mode
 * that transaction sees one snapshot of the file, so the copy is consistent at one log position
 * whatever the service appends meanwhile, and the copy never restarts; appends are not held up
 * (WAL readers do not block the writer).
 */
import Database from 'better-sqlite3'
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CliError } from '../../../core/errors.js'
import { MIGRATIONS, type SqliteDatabase } from './database.js'
import { READ_MODELS_FILE_NAMES } from '../read-models/read-models-database.js'

/** The log's file name inside OCELOG_DATA_DIR. */
export const LOG_FILE = 'ocelog.db'

/** Pages copied per step of the backup (4 KiB pages: 16 MiB), between which the progress is reported. */
const PAGES_PER_STEP = 4096

/** What a backup holds: where the log's head was when it was taken. */
export interface BackupSummary {
  file: string
  bytes: number
  /** Position of the last record in the copy (null: the log was empty). */
  head: number | null
  records: number
  /** Wall time of the copy, ms. */
  ms: number
}

/** The head position and the record count of a log file's connection. */
function headOf(db: SqliteDatabase): { head: number | null; records: number } {
  const row = db.prepare<[], { head: number | null; records: number }>('SELECT max(position) AS head, count(*) AS records FROM records').get()
  return { head: row?.head ?? null, records: row?.records ?? 0 }
}

/**
 * Copies `<dataDir>/ocelog.db` to `out` while the service may run and append (see module comment).
 * The copy is written to `<out>.partial` and renamed to `out` once complete and checked
 * (checkLogFile), so `out` is never a torn file.
 * @param onProgress called after each step with pages copied and pages in all.
 * @throws CliError when the data dir has no log, `out` exists, or the copy fails its check.
 */
export async function backupLog(dataDir: string, out: string, onProgress: (done: number, total: number) => void = () => {}): Promise<BackupSummary> {
  const source = join(dataDir, LOG_FILE)
  if (!existsSync(source)) throw new CliError(`no log to back up: ${source} does not exist (OCELOG_DATA_DIR=${dataDir})`)
  if (existsSync(out)) throw new CliError(`${out} exists; a backup never overwrites a file (choose another name or remove it)`)
  const partial = `${out}.partial`
  rmSync(partial, { force: true })
  const started = performance.now()
  const db = new Database(source, { readonly: true, fileMustExist: true })
  db.pragma('busy_timeout = 5000')
  let snapshot: { head: number | null; records: number }
  try {
    // One read transaction: every step copies the same snapshot (see module comment).
    db.exec('BEGIN')
    snapshot = headOf(db)
    await db.backup(partial, {
      progress({ totalPages, remainingPages }) {
        onProgress(totalPages - remainingPages, totalPages)
        return PAGES_PER_STEP
      },
    })
    db.exec('COMMIT')
  } finally {
    db.close()
  }
  // The copy carries the log's WAL mode in its header; a backup is one self-contained file, so it
  // goes back to a rollback journal (a restore's open turns WAL on again) and leaves no -wal or -shm.
  const copy = new Database(partial, { fileMustExist: true })
  try {
    copy.pragma('journal_mode = DELETE')
  } finally {
    copy.close()
  }
  const check = checkLogFile(partial)
  if (!check.ok || check.head !== snapshot.head) {
    rmSync(partial, { force: true })
    throw new CliError(
      `the copy failed its check (${check.ok ? `head ${String(check.head)}, expected ${String(snapshot.head)}` : check.problem}); nothing was written to ${out}`,
    )
  }
  renameSync(partial, out)
  return { file: out, bytes: statSync(out).size, head: snapshot.head, records: snapshot.records, ms: performance.now() - started }
}

/** What checkLogFile found: a log file this build can open, with its head, or the first problem. */
export type LogFileCheck = { ok: true; head: number | null; records: number } | { ok: false; problem: string }

/**
 * Checks that `file` is an Ocelog log file this build can use: SQLite's `integrity_check`, a
 * schema version it knows (user_version), and a `records` table. Opens it read-only.
 */
export function checkLogFile(file: string): LogFileCheck {
  if (!existsSync(file)) return { ok: false, problem: `${file} does not exist` }
  let db: SqliteDatabase | null = null
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
    const rows = db.pragma('integrity_check(1)') as { integrity_check: string }[]
    const first = rows[0]?.integrity_check ?? 'ok'
    if (first !== 'ok') return { ok: false, problem: `integrity_check: ${first}` }
    const version = Number(db.pragma('user_version', { simple: true }))
    if (version < 1 || version > MIGRATIONS.length)
      return { ok: false, problem: `schema version ${String(version)} is not an Ocelog log this build knows (1 to ${String(MIGRATIONS.length)})` }
    return { ok: true, ...headOf(db) }
  } catch (error) {
    return { ok: false, problem: error instanceof Database.SqliteError ? `${error.code}: ${error.message}` : (error as Error).message }
  } finally {
    db?.close()
  }
}

/**
 * Whether a process has `file` open (a running `ocelog serve`, or any command). Ocelog's files are in
 * WAL mode, where the last connection to close checkpoints the WAL and removes `-wal` and `-shm`
 * (sqlite.org/wal.html): this opens the file, reads it, closes it, and the file is live when those
 * remain. A lock that cannot be taken at once (a write under way) means live as well.
 */
export function isLive(file: string): boolean {
  if (!existsSync(file)) return false
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 0')
    db.prepare('SELECT count(*) FROM sqlite_schema').get()
  } catch (error) {
    if (error instanceof Database.SqliteError && /^SQLITE_(BUSY|LOCKED)/.test(error.code)) return true
    throw error
  } finally {
    db.close()
  }
  return existsSync(`${file}-wal`) || existsSync(`${file}-shm`)
}

/** What restoreLog did. */
export interface RestoreSummary {
  file: string
  head: number | null
  records: number
  /** Where the data dir's earlier log went (with --force), or null when there was none. */
  movedAside: string | null
}

/**
 * Brings `<dataDir>/ocelog.db` back from the backup `file`: checks it first (checkLogFile), refuses
 * a data dir whose log is in use (isLive) and, unless `force`, one that has a log at all; with
 * `force` the earlier log is kept as `ocelog.db.before-restore-<time>`, never deleted. The copy is
 * made beside the target and renamed into place; the read models' files are removed, to be rebuilt from the
 * restored log at the next start.
 * @throws CliError naming what was refused or what the check found.
 */
export async function restoreLog(file: string, dataDir: string, force: boolean, now: Date = new Date()): Promise<RestoreSummary> {
  const check = checkLogFile(file)
  if (!check.ok) throw new CliError(`${file} is not a usable backup: ${check.problem}`)
  mkdirSync(dataDir, { recursive: true })
  const target = join(dataDir, LOG_FILE)
  if (isLive(target)) throw new CliError(`${target} is in use (is ocelog serve running on OCELOG_DATA_DIR=${dataDir}?); stop it before a restore`)
  let movedAside: string | null = null
  if (existsSync(target)) {
    if (!force) throw new CliError(`${target} exists; a restore replaces it only with --force (the earlier log is then kept beside it)`)
    movedAside = `${target}.before-restore-${now.toISOString().replace(/[-:.]/g, '')}`
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${movedAside}${suffix}`)
  }
  const staging = `${target}.restoring`
  rmSync(staging, { force: true })
  const source = new Database(file, { readonly: true, fileMustExist: true })
  try {
    await source.backup(staging)
  } finally {
    source.close()
  }
  renameSync(staging, target)
  for (const name of Object.values(READ_MODELS_FILE_NAMES))
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `${name}${suffix}`), { force: true })
  return { file: target, head: check.head, records: check.records, movedAside }
}
