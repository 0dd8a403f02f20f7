/**
 * The check that each embedded file gets as it is opened (README § Operations, docs/operations.md §
 * A damaged file): the log's ocelog.db (openCheckedLog, which refuses a damaged log) and
 * read-models files (openCheckedReadModels, which moves them aside and makes them anew when one is damaged).
 */
import { existsSync, statSync } from 'node:fs'
import type Database from 'better-sqlite3'

/** A connection to either file: log/database.ts's SqliteDatabase, named here because importing it would close an import cycle. */
type SqliteDatabase = Database.Database

/**
 * Files up to this size get a full quick check when they are opened (quickCheck, whose time grows
 * with the file, so this bounds a start's wait); larger ones a bounded one (startCheck;
 * docs/operations.md#a-damaged-file). `ocelog verify` checks a file of any size in full.
 */
export const FULL_CHECK_MAX_BYTES = 256 * 1024 * 1024

/**
 * The check of a file as it is opened, bounded in time: quickCheck for a file up to
 * FULL_CHECK_MAX_BYTES; beyond, a read of its schema and of the last page of `table`'s primary key
 * (header, schema and the B-tree's right edge), so that a start never waits on a whole large file.
 * @returns null when the file passed, else what failed.
 */
export function startCheck(db: SqliteDatabase, path: string, table: string): string | null {
  const size = existsSync(path) ? statSync(path).size : 0
  if (size <= FULL_CHECK_MAX_BYTES) return quickCheck(db)
  db.prepare('SELECT count(*) FROM sqlite_schema').get()
  db.prepare(`SELECT max(rowid) FROM ${table}`).get()
  return null
}

/**
 * SQLite's `PRAGMA quick_check(1)` (sqlite.org/pragma.html#pragma_quick_check): the file's
 * B-trees are well formed, without the slower index-against-table check of integrity_check. Its
 * time grows with the file (about a second per few hundred MB); one problem is enough to stop.
 * @returns null when the file passed, else SQLite's first message.
 * @throws SQLite's error when the file cannot be read at all (e.g. SQLITE_NOTADB).
 */
export function quickCheck(db: SqliteDatabase): string | null {
  const rows = db.pragma('quick_check(1)') as { quick_check: string }[]
  const first = rows[0]?.quick_check ?? 'ok'
  return first === 'ok' ? null : first
}
