/**
 * The `declared_types` read model's statements (docs/read-models.md#declared_types), written once
 * for SQLite and PostgreSQL, whose tables agree column for column
 * (docs/architecture.md#sql-shared-between-sqlite-and-postgresql):
 * - `rm_declared_types`: one row per (dataset_id, kind, name), kind `event` or `object`, with the
 *   highest `position` of a record that declared the type;
 * - `rm_declared_attributes`: one row per (dataset_id, kind, type_name, name) with the OCEL 2.0
 *   attribute `type` of its latest declaration and that record's `position`.
 * Each adapter runs them with its own driver, in its store's transaction, by the replay rule
 * (declaredAttributesToApply, src/core/read-model-changes.ts): a row set by a later record is
 * never overwritten, which the upserts' `WHERE` guards.
 */
import type { DeclaredAttributeChange, DeclaredTypeChange } from '../../core/read-model-changes.js'
import { renderSql, type SqlDialect } from './dialect.js'

/** The statements, rendered for one engine; parameters as each one's docstring lists them (DeclaredTypesSql values). */
export interface DeclaredTypesSql {
  /** Keeps a type's row at its highest position: typeValues. */
  putType: string
  /** The stored attributes of a type: `[dataset_id, kind, type_name]` → `{ name, position }`. */
  attributePositions: string
  /** Keeps an attribute's latest declaration: attributeValues. */
  putAttribute: string
  /** Empties the read model (its projection's rebuild), no parameter: two statements, run as one script. */
  clear: string
  /** A dataset's types, by kind then name in byte order: `[dataset_id]` → `{ kind, name }`. */
  types: string
  /** A dataset's attributes, by kind, type name, then name in byte order: `[dataset_id]` → `{ kind, type_name, name, type }`. */
  attributes: string
}

/** The statements of DeclaredTypesSql for `d`. */
export function declaredTypesSql(d: SqlDialect): DeclaredTypesSql {
  const types = d.table('rm_declared_types')
  const attributes = d.table('rm_declared_attributes')
  return {
    putType: renderSql(
      d,
      `INSERT INTO ${types} AS t (dataset_id, kind, name, position) VALUES (?, ?, ?, ?)
       ON CONFLICT (dataset_id, kind, name) DO UPDATE SET position = excluded.position WHERE t.position < excluded.position`,
    ),
    attributePositions: renderSql(d, `SELECT name, position FROM ${attributes} WHERE dataset_id = ? AND kind = ? AND type_name = ?`),
    putAttribute: renderSql(
      d,
      `INSERT INTO ${attributes} AS a (dataset_id, kind, type_name, name, type, position) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, kind, type_name, name) DO UPDATE SET type = excluded.type, position = excluded.position
       WHERE a.position < excluded.position`,
    ),
    clear: `DELETE FROM ${types}; DELETE FROM ${attributes}`,
    types: renderSql(d, `SELECT kind, name FROM ${types} WHERE dataset_id = ? ORDER BY ${d.byteOrder('kind')}, ${d.byteOrder('name')}`),
    attributes: renderSql(
      d,
      `SELECT kind, type_name, name, type FROM ${attributes} WHERE dataset_id = ?
       ORDER BY ${d.byteOrder('kind')}, ${d.byteOrder('type_name')}, ${d.byteOrder('name')}`,
    ),
  }
}

/** The values of DeclaredTypesSql.putType: `[dataset_id, kind, name, position]` of a run's declared type. */
export const typeValues = (t: DeclaredTypeChange): [string, string, string, number] => [t.datasetId, t.kind, t.name, t.maxPosition]

/** The values of DeclaredTypesSql.attributePositions: `[dataset_id, kind, type_name]` of a run's declared type. */
export const typeKeyValues = (t: DeclaredTypeChange): [string, string, string] => [t.datasetId, t.kind, t.name]

/** The values of DeclaredTypesSql.putAttribute: `[dataset_id, kind, type_name, name, type, position]` of an attribute of type `t`. */
export const attributeValues = (t: DeclaredTypeChange, a: DeclaredAttributeChange): [string, string, string, string, string, number] => [
  t.datasetId,
  t.kind,
  t.name,
  a.name,
  a.type,
  a.position,
]

/**
 * The rows of DeclaredTypesSql.attributePositions as the stored position of each attribute, by name,
 * the lookup declaredAttributesToApply takes (PostgreSQL's `bigint` may come back as text).
 */
export function storedAttributePositions(rows: readonly { name: string; position: number | string }[]): Map<string, number> {
  return new Map(rows.map((r) => [r.name, Number(r.position)]))
}
