/**
 * Set-based writes for the embedded read-model store: one prepared statement writes up to
 * `rowsPerStatement` rows (`VALUES (…), (…), …`), so a run of a few thousand rows costs a few dozen
 * statement calls instead of one per row. Statements are prepared once per row count and kept.
 */
import type { Statement } from 'better-sqlite3'
import type { SqliteDatabase } from '../log/database.js'

export class MultiRowStatement {
  private readonly statements = new Map<number, Statement<unknown[]>>()

  /**
   * @param head the statement up to `VALUES`, e.g. `INSERT OR IGNORE INTO t (a, b) VALUES`.
   * @param columns the number of values of one row.
   * @param tail what follows the rows (e.g. an `ON CONFLICT` clause), or ''.
   * @param rowsPerStatement rows per statement (default 100; rows × columns stays under SQLite's 32,766 variables).
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly head: string,
    private readonly columns: number,
    private readonly tail = '',
    private readonly rowsPerStatement = 100,
  ) {}

  private statement(rows: number): Statement<unknown[]> {
    let s = this.statements.get(rows)
    if (s === undefined) {
      const row = `(${Array.from({ length: this.columns }, () => '?').join(', ')})`
      s = this.db.prepare<unknown[]>(`${this.head} ${Array.from({ length: rows }, () => row).join(', ')} ${this.tail}`)
      this.statements.set(rows, s)
    }
    return s
  }

  /**
   * Writes `rows` (each `columns` values, in column order), in statements of at most `rowsPerStatement` rows.
   * @returns the rows the engine changed (SQLite's `changes()`, summed).
   */
  run(rows: readonly (readonly unknown[])[]): number {
    let changed = 0
    for (let i = 0; i < rows.length; i += this.rowsPerStatement) {
      const chunk = rows.slice(i, i + this.rowsPerStatement)
      // better-sqlite3 binds each array argument's items in turn: no flat copy of the rows.
      changed += this.statement(chunk.length).run(...chunk).changes
    }
    return changed
  }
}
