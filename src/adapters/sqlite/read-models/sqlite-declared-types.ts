/**
 * The `declared_types` read model in SQLite (docs/read-models.md#declared_types): its tables, and
 * the runs of its statements, which are written once for SQLite and PostgreSQL
 * (src/adapters/sql/declared-types-sql.ts): its write by the replay rule (declaredAttributesToApply,
 * src/core/read-model-changes.ts), its clearing and its read. Used by the store
 * (sqlite-slice-writes.ts) and the query (sqlite-read-model-query.ts).
 *
 * - `rm_declared_types`: one row per (dataset, kind, name), kind `event` or `object`, with the
 *   highest position of a record that declared the type;
 * - `rm_declared_attributes`: one row per (dataset, kind, type name, attribute name) with the OCEL
 *   2.0 attribute type of its latest declaration and that record's position.
 * A dataset declares few types, so the rows keep the dataset's id as text.
 */
import type Database from 'better-sqlite3'
import { type DeclaredTypeChanges, declaredAttributesToApply } from '../../../core/read-model-changes.js'
import { groupDeclaredTypes } from '../../../core/declared-types.js'
import type { DeclaredTypes } from '../../../schemas/read-models.js'
import { attributeValues, declaredTypesSql, storedAttributePositions, typeKeyValues, typeValues } from '../../sql/declared-types-sql.js'
import { SQLITE } from '../../sql/dialect.js'
import type { SqliteDatabase } from '../log/database.js'

/** The tables, made with the others (read-models-database.ts). */
export const DECLARED_TYPES_SCHEMA = `
CREATE TABLE rm_declared_types (
  dataset_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, kind, name)
) WITHOUT ROWID;
CREATE TABLE rm_declared_attributes (
  dataset_id TEXT NOT NULL, kind TEXT NOT NULL, type_name TEXT NOT NULL, name TEXT NOT NULL,
  type TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (dataset_id, kind, type_name, name)
) WITHOUT ROWID;
`

/** The tables of DECLARED_TYPES_SCHEMA, in the order they are dropped. */
export const DECLARED_TYPES_TABLES = ['rm_declared_types', 'rm_declared_attributes'] as const

/** The statements, rendered for SQLite. */
const SQL = declaredTypesSql(SQLITE)

/** The statements of the write, prepared once per store. */
export interface DeclaredTypesStatements {
  putType: Database.Statement<[string, string, string, number]>
  attributePositions: Database.Statement<[string, string, string], { name: string; position: number }>
  putAttribute: Database.Statement<[string, string, string, string, string, number]>
}

/** Prepares DeclaredTypesStatements on `db`. */
export function prepareDeclaredTypesStatements(db: SqliteDatabase): DeclaredTypesStatements {
  return {
    putType: db.prepare<[string, string, string, number]>(SQL.putType),
    attributePositions: db.prepare<[string, string, string], { name: string; position: number }>(SQL.attributePositions),
    putAttribute: db.prepare<[string, string, string, string, string, number]>(SQL.putAttribute),
  }
}

/**
 * Writes a run's declared types (Slices.declared_types) inside the store's transaction: each type's
 * row, and the attributes the replay rule keeps (declaredAttributesToApply over the stored positions).
 */
export function writeDeclaredTypes(st: DeclaredTypesStatements, slice: DeclaredTypeChanges): void {
  for (const t of slice.values()) {
    st.putType.run(...typeValues(t))
    const stored = storedAttributePositions(st.attributePositions.all(...typeKeyValues(t)))
    for (const a of declaredAttributesToApply(t, (name) => stored.get(name))) st.putAttribute.run(...attributeValues(t, a))
  }
}

/** Empties the read model for its projection's rebuild alone. */
export function clearDeclaredTypes(db: SqliteDatabase): void {
  db.exec(SQL.clear)
}

/**
 * The declared types of `datasetId` (ReadModelQuery.declaredTypes): event and object types by name,
 * each with its attributes by name (byte order).
 */
export function readDeclaredTypes(db: SqliteDatabase, datasetId: string): DeclaredTypes {
  const types = db.prepare<[string], { kind: string; name: string }>(SQL.types).all(datasetId)
  const attributes = db.prepare<[string], { kind: string; type_name: string; name: string; type: string }>(SQL.attributes).all(datasetId)
  return groupDeclaredTypes(types, attributes)
}
