/**
 * Which SQLite failures mean "the engine is away" (busy, locked, I/O, disk full, file gone,
 * connection closed) rather than "this write cannot be done": the projector waits out the first
 * kind without limit and stops a projection on the second (SQLite result codes, sqlite.org/rescode.html).
 */
import Database from 'better-sqlite3'

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|NOMEM|NOLFS|READONLY)/

/** Whether `error` (from better-sqlite3) means the SQLite file cannot be used now, whatever is written. */
export function isSqliteUnavailable(error: unknown): boolean {
  if (error instanceof Database.SqliteError) return UNAVAILABLE_CODES.test(error.code)
  return error instanceof TypeError && /database connection is not open/.test(error.message)
}
