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

/** Rows written value by value (MultiRowStatement.rows). */
export interface RowSink {
  /** The next value of the current row (rows follow each other, each `columns` values in column order). */
  add(value: SqlValue): void
  /**
   * Writes the rows not yet written.
   * @returns the rows the engine changed since `rows()` (SQLite's `changes()`, summed).
   * @throws Error when the values added are not a whole number of rows.
   */
  end(): number
}

export class MultiRowStatement implements RowSink {
  private readonly statements = new Map<number, Statement<unknown[]>>()
  /** One statement's values (rowsPerStatement × columns), bound and run each time it is full. */
  private readonly buffer: SqlValue[]
  private filled = 0
  private changed = 0

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
  ) {
    this.buffer = rowValues(rowsPerStatement, columns)
  }

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
   * Starts a run of rows written value by value (`add`, then `end`): each statement of
   * `rowsPerStatement` rows runs as soon as its values are in, so a run of thousands of rows holds
   * one statement's values, with no array per row or per run (bench/HISTORY.md#flat-rows-for-the-multi-row-inserts).
   * A run not ended (a write that threw) is dropped by the next `rows()`.
   */
  rows(): RowSink {
    this.filled = 0
    this.changed = 0
    return this
  }

  add(value: SqlValue): void {
    this.buffer[this.filled++] = value
    if (this.filled === this.buffer.length) {
      this.filled = 0
      this.changed += this.statement(this.rowsPerStatement).run(this.buffer).changes
    }
  }

  end(): number {
    const filled = this.filled
    this.filled = 0
    if (filled % this.columns !== 0) throw new Error(`${this.head}: ${String(filled)} values left are not rows of ${String(this.columns)}`)
    if (filled > 0) this.changed += this.statement(filled / this.columns).run(this.buffer.slice(0, filled)).changes
    // No value of the run is kept alive by the buffer until the next one overwrites it.
    this.buffer.fill(null)
    const changed = this.changed
    this.changed = 0
    return changed
  }

  /**
   * Writes rows given as one flat array of values (row after row, each `columns` values in column
   * order), as `rows()` does value by value.
   * @returns the rows the engine changed (SQLite's `changes()`, summed).
   * @throws Error when `values` is not a whole number of rows (then nothing is written).
   */
  run(values: readonly SqlValue[]): number {
    if (values.length % this.columns !== 0) throw new Error(`${this.head}: ${String(values.length)} values are not rows of ${String(this.columns)}`)
    const sink = this.rows()
    for (const value of values) sink.add(value)
    return sink.end()
  }
}
