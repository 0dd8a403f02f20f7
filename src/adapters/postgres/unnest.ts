/**
 * Rows as the parameters of a multi-row statement on PostgreSQL: one array per column, expanded
 * by `unnest($1::text[], $2::bigint[], …)` into rows in array order (PostgreSQL's documentation,
 * "Array Functions": unnest of several arrays), so a batch of thousands of rows is one round trip.
 */

/** The columns of `rows`, one array per field, in `fields` order: the parameters of an `unnest` statement. */
export function columns<T>(rows: readonly T[], fields: readonly ((row: T) => unknown)[]): unknown[][] {
  return fields.map((f) => rows.map(f))
}
