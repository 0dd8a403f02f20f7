/**
 * The statements of the event and object types' read models (`rm_event_types`, `rm_object_types`;
 * README § Read models) that SQLite and PostgreSQL share
 * (docs/architecture.md#sql-shared-between-sqlite-and-postgresql): the columns read here (dataset_id,
 * name, count, first_seen_at, last_seen_at) agree on both. Their writes stay per engine: SQLite's
 * rows carry a `source` column PostgreSQL's lack, and PostgreSQL writes a run's types in one
 * `unnest` statement where SQLite upserts row by row.
 */
import { renderSql, type SqlDialect } from './dialect.js'

/** One of the two types' tables. */
export type TypesTable = 'rm_event_types' | 'rm_object_types'

/** The statements of one types' table, rendered for one engine. */
export interface TypesSql {
  /** A dataset's types by name in byte order: `[dataset_id]` → `{ name, count, first_seen_at, last_seen_at }`. */
  list: string
  /** Empties the table (its projection's rebuild), no parameter. */
  clear: string
}

/** The statements of TypesSql for `table` on `d`. */
export function typesSql(d: SqlDialect, table: TypesTable): TypesSql {
  const t = d.table(table)
  return {
    list: renderSql(d, `SELECT name, count, first_seen_at, last_seen_at FROM ${t} WHERE dataset_id = ? ORDER BY ${d.byteOrder('name')}`),
    clear: `DELETE FROM ${t}`,
  }
}
