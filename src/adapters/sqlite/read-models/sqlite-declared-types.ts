/**
 * The `declared_types` read model in SQLite (docs/read-models.md#declared_types): its tables, its
 * write by the replay rule (declaredAttributesToApply, src/core/read-model-changes.ts), its clearing
 * and its read. Shared by the store (sqlite-slice-writes.ts) and the query (sqlite-read-model-query.ts);
 * the statements are plain SQL that PostgreSQL reads too (`ON CONFLICT … DO UPDATE … WHERE`).
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

/** The statements of the write, prepared once per store. */
export interface DeclaredTypesStatements {
  putType: Database.Statement
  attributePositions: Database.Statement<[string, string, string], { name: string; position: number }>
  putAttribute: Database.Statement
}

/** Prepares DeclaredTypesStatements on `db`. */
export function prepareDeclaredTypesStatements(db: SqliteDatabase): DeclaredTypesStatements {
  return {
    putType: db.prepare(
      `INSERT INTO rm_declared_types (dataset_id, kind, name, position) VALUES (?, ?, ?, ?)
       ON CONFLICT (dataset_id, kind, name) DO UPDATE SET position = max(position, excluded.position)`,
    ),
    attributePositions: db.prepare<[string, string, string], { name: string; position: number }>(
      'SELECT name, position FROM rm_declared_attributes WHERE dataset_id = ? AND kind = ? AND type_name = ?',
    ),
    // Guarded like the rule it follows: a row set by a later record is never overwritten.
    putAttribute: db.prepare(
      `INSERT INTO rm_declared_attributes (dataset_id, kind, type_name, name, type, position) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, kind, type_name, name) DO UPDATE SET type = excluded.type, position = excluded.position
       WHERE rm_declared_attributes.position < excluded.position`,
    ),
  }
}

/**
 * Writes a run's declared types (Slices.declared_types) inside the store's transaction: each type's
 * row, and the attributes the replay rule keeps (declaredAttributesToApply over the stored positions).
 */
export function writeDeclaredTypes(st: DeclaredTypesStatements, slice: DeclaredTypeChanges): void {
  for (const t of slice.values()) {
    st.putType.run(t.datasetId, t.kind, t.name, t.maxPosition)
    const stored = new Map(st.attributePositions.all(t.datasetId, t.kind, t.name).map((r) => [r.name, r.position]))
    for (const a of declaredAttributesToApply(t, (name) => stored.get(name))) st.putAttribute.run(t.datasetId, t.kind, t.name, a.name, a.type, a.position)
  }
}

/** Empties the read model for its projection's rebuild alone. */
export function clearDeclaredTypes(db: SqliteDatabase): void {
  db.exec('DELETE FROM rm_declared_types; DELETE FROM rm_declared_attributes')
}

/**
 * The declared types of `datasetId` (ReadModelQuery.declaredTypes): event and object types by name,
 * each with its attributes by name (code-unit order, as `ORDER BY` on SQLite's BINARY collation).
 */
export function readDeclaredTypes(db: SqliteDatabase, datasetId: string): DeclaredTypes {
  const types = db
    .prepare<[string], { kind: string; name: string }>('SELECT kind, name FROM rm_declared_types WHERE dataset_id = ? ORDER BY kind, name')
    .all(datasetId)
  const attributes = db
    .prepare<[string], { kind: string; type_name: string; name: string; type: string }>(
      'SELECT kind, type_name, name, type FROM rm_declared_attributes WHERE dataset_id = ? ORDER BY kind, type_name, name',
    )
    .all(datasetId)
  return groupDeclaredTypes(types, attributes)
}
