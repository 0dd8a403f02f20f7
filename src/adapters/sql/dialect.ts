/**
 * The seam between the read models' SQL on SQLite and on PostgreSQL
 * (docs/architecture.md#sql-shared-between-sqlite-and-postgresql): what differs between the two
 * engines where a statement otherwise reads the same. A shared statement is written once, with `?`
 * placeholders and its tables named through `table`, and rendered per engine (renderSql); each
 * adapter runs the rendered text with its own driver (better-sqlite3, synchronously; node-postgres,
 * asynchronously).
 */

/** A read-model table's own name, as both layouts name it (`rm_…`). */
export type ReadModelTableName = `rm_${string}`

/** What differs between the two engines in a statement that otherwise reads the same. */
export interface SqlDialect {
  /** The engine, for messages and tests. */
  readonly engine: 'sqlite' | 'postgres'
  /** A read-model table as a statement names it: bare on SQLite (its own file), in the schema `ocelog` on PostgreSQL. */
  table(name: ReadModelTableName): string
  /** The placeholder of the statement's `n`-th parameter (from 1): `?` on SQLite (bound in order), `$n` on PostgreSQL. */
  param(n: number): string
  /**
   * A text column as an `ORDER BY` term in byte order (the order the query port asks for names and
   * ids): the column itself on SQLite (its BINARY collation), `COLLATE "C"` on PostgreSQL, whatever
   * the database's collation.
   */
  byteOrder(column: string): string
}

/** SQLite (better-sqlite3): the read models' own files, `read-models.db` and `read-models-process.db`. */
export const SQLITE: SqlDialect = {
  engine: 'sqlite',
  table: (name) => name,
  param: () => '?',
  byteOrder: (column) => column,
}

/** PostgreSQL (node-postgres): the read models beside the log in the schema `ocelog`. */
export const POSTGRES: SqlDialect = {
  engine: 'postgres',
  table: (name) => `ocelog.${name}`,
  param: (n) => `$${String(n)}`,
  byteOrder: (column) => `${column} COLLATE "C"`,
}

/**
 * A statement written with `?` placeholders as `dialect` runs it: each `?` outside a quoted string
 * ('…') or identifier ("…") becomes the dialect's placeholder of its number, counted from 1 in
 * order of appearance (on PostgreSQL `$1`, `$2`, …; a value used twice is bound twice). Shared
 * statements use no operator spelled `?` (PostgreSQL's jsonb `?`, `?|`, `?&`): those stay per engine.
 * @throws Error when a quote is left open (the statement would be cut wrongly).
 */
export function renderSql(dialect: SqlDialect, text: string): string {
  let out = ''
  let n = 0
  let quote: string | null = null
  for (const ch of text) {
    if (quote !== null) {
      if (ch === quote) quote = null
      out += ch
    } else if (ch === "'" || ch === '"') {
      quote = ch
      out += ch
    } else if (ch === '?') {
      n += 1
      out += dialect.param(n)
    } else out += ch
  }
  if (quote !== null) throw new Error(`renderSql: a ${quote} quote is left open in: ${text}`)
  return out
}
