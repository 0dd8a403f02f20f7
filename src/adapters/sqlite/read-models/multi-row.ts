/**
 * Set-based writes for the embedded read-model store: one prepared statement writes up to
 * `rowsPerStatement` rows (`VALUES (…), (…), …`), so a run of a few thousand rows costs a few dozen
 * statement calls instead of one per row. Statements are prepared once per row count and kept.
 */
import type { Statement } from 'better-sqlite3'
import type { SqliteDatabase } from '../log/database.js'

/** A value SQLite binds: what one column of a row takes. */
export type SqlValue = number | string | bigint | Buffer | null

/**
 * An array for up to `rows` rows of `columns` values (MultiRowStatement.run), to fill by index and
 * cut to the values written (`values.length = n`): made once at its full size and already of the
 * element kind that mixed values take, so that filling it copies nothing (an array grown by `push`,
 * or made holding only small integers, is copied as it grows or as a value of another kind goes in).
 */
export function rowValues(rows: number, columns: number): SqlValue[] {
  return new Array<SqlValue>(rows * columns).fill(null)
}

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
   * Writes rows given as one flat array of values (row after row, each `columns` values in column
   * order), in statements of at most `rowsPerStatement` rows: no array per row, which a run of
   * thousands of rows would otherwise make and collect (bench/HISTORY.md#flat-rows-for-the-multi-row-inserts).
   * @returns the rows the engine changed (SQLite's `changes()`, summed).
   * @throws Error when `values` is not a whole number of rows.
   */
  run(values: readonly SqlValue[]): number {
    const columns = this.columns
    if (values.length % columns !== 0) throw new Error(`${this.head}: ${String(values.length)} values are not rows of ${String(columns)}`)
    const perStatement = this.rowsPerStatement * columns
    let changed = 0
    for (let i = 0; i < values.length; i += perStatement) {
      // better-sqlite3 binds an array argument's items in turn; one slice per statement, none when one statement takes them all.
      const chunk = i === 0 && values.length <= perStatement ? values : values.slice(i, i + perStatement)
      changed += this.statement(chunk.length / columns).run(chunk).changes
    }
    return changed
  }
}
