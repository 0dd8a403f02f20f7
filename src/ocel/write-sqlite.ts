/**
 * Writer of OCEL 2.0 SQLite: the relational layout of the OCEL 2.0 standard (as in its example
 * `ocel20_example.sqlite`, and as pm4py, ocpa and ocelescope write it), from the OCEL 2.0 JSON
 * document that `ocelog export` builds, so that the SQLite form carries exactly the same log:
 * - `event_map_type` / `object_map_type (ocel_type, ocel_type_map)`: type name → table suffix (the
 *   name without characters other than A–Z, a–z, 0–9 and _, made unique; `type<n>` when none is left);
 * - `event (ocel_id, ocel_type)`, `object (ocel_id, ocel_type)`;
 * - `event_object (ocel_event_id, ocel_object_id, ocel_qualifier)` (E2O) and
 *   `object_object (ocel_source_id, ocel_target_id, ocel_qualifier)` (O2O);
 * - `event_<Map> (ocel_id, ocel_time, <attribute columns>)`: one row per event;
 * - `object_<Map> (ocel_id, ocel_time, ocel_changed_field, <attribute columns>)`: the attribute
 *   history. An object's values at its first attribute time are one row without
 *   `ocel_changed_field`; every later value (and a second value of one attribute at that first
 *   time) is a row naming the attribute in `ocel_changed_field`, with only that column set.
 *   An object without attributes has no row there (its identity is in `object`).
 *
 * Every declared type gets its table, with a column per declared attribute; attributes a type
 * does not declare get a TEXT column. Column types follow the declared OCEL type: integer →
 * INTEGER, float → REAL, boolean → BOOLEAN (0/1), time → TIMESTAMP, string → TEXT. Values are
 * stored typed (integer/float as numbers, booleans as 1/0) when they read as their declared type,
 * else as the text the document has. Times are written as the document has them (ISO 8601 UTC).
 */
import Database from 'better-sqlite3'
import { existsSync, renameSync, rmSync } from 'node:fs'
import { typedValue } from './import/model.js'
import type { OcelJson } from './ocel-json.js'

/** Columns of the per-type tables that the standard reserves. */
const RESERVED = new Set(['ocel_id', 'ocel_time', 'ocel_changed_field'])

const COLUMN_TYPES: Record<string, string> = { string: 'TEXT', integer: 'INTEGER', float: 'REAL', boolean: 'BOOLEAN', time: 'TIMESTAMP' }

type Declaration = OcelJson['eventTypes'][number]

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** A value for a column of OCEL type `type` (see module comment): typed as the readers type XML text, booleans as 1/0. */
export function sqliteValue(value: string, type: string): string | number {
  const typed = typedValue(value, type)
  if (typeof typed === 'boolean') return typed ? 1 : 0
  return typeof typed === 'number' ? typed : value
}

/** Table suffixes for type names: unique ignoring case (SQLite's table names ignore case). */
function suffixes(names: readonly string[]): Map<string, string> {
  const taken = new Set<string>()
  const out = new Map<string, string>()
  for (const name of names) {
    const base = name.replace(/[^A-Za-z0-9_]/g, '')
    let suffix = base === '' ? 'type1' : base
    for (let n = 2; taken.has(suffix.toLowerCase()); n++) suffix = `${base === '' ? 'type' : base}${String(n)}`
    taken.add(suffix.toLowerCase())
    out.set(name, suffix)
  }
  return out
}

interface TypeTable {
  table: string
  /** Attribute name → OCEL type, in column order. */
  columns: Map<string, string>
}

/**
 * The per-type tables of one prefix: declared types first (in document order), then the types that
 * only items name; declared attributes first, then the ones only items carry (as `string`).
 * @throws Error when an attribute uses a reserved column name or two attributes of one type differ only in case.
 */
function typeTables(
  prefix: 'event' | 'object',
  declared: readonly Declaration[],
  items: readonly { type: string; attributes?: readonly { name: string }[] }[],
) {
  const byName = new Map<string, Map<string, string>>()
  for (const d of declared) {
    const columns = byName.get(d.name) ?? new Map<string, string>()
    for (const a of d.attributes) if (!columns.has(a.name)) columns.set(a.name, COLUMN_TYPES[a.type] === undefined ? 'string' : a.type)
    byName.set(d.name, columns)
  }
  for (const item of items) {
    const columns = byName.get(item.type) ?? new Map<string, string>()
    for (const a of item.attributes ?? []) if (!columns.has(a.name)) columns.set(a.name, 'string')
    byName.set(item.type, columns)
  }
  const tables = suffixes([...byName.keys()])
  const out = new Map<string, TypeTable>()
  for (const [type, columns] of byName) {
    const lower = new Set<string>()
    for (const name of columns.keys()) {
      if (RESERVED.has(name.toLowerCase()))
        throw new Error(`OCEL SQLite: ${prefix} type "${type}" has an attribute named "${name}", a column the standard reserves`)
      if (lower.has(name.toLowerCase()))
        throw new Error(`OCEL SQLite: ${prefix} type "${type}" has attributes whose names differ only in case ("${name}"), which SQLite columns cannot hold`)
      lower.add(name.toLowerCase())
    }
    out.set(type, { table: `${prefix}_${tables.get(type) ?? type}`, columns })
  }
  return out
}

function createTypeTable(db: Database.Database, t: TypeTable, prefix: 'event' | 'object'): void {
  const attributes = [...t.columns].map(([name, type]) => `${quote(name)} ${COLUMN_TYPES[type] ?? 'TEXT'}`)
  const head = prefix === 'event' ? ['ocel_id TEXT PRIMARY KEY', 'ocel_time TIMESTAMP'] : ['ocel_id TEXT', 'ocel_time TIMESTAMP', 'ocel_changed_field TEXT']
  const parent = prefix === 'event' ? 'event' : 'object'
  db.exec(`CREATE TABLE ${quote(t.table)} (${[...head, ...attributes, `FOREIGN KEY (ocel_id) REFERENCES ${parent} (ocel_id)`].join(', ')})`)
}

const SCHEMA = `
CREATE TABLE event_map_type (ocel_type TEXT PRIMARY KEY, ocel_type_map TEXT);
CREATE TABLE object_map_type (ocel_type TEXT PRIMARY KEY, ocel_type_map TEXT);
CREATE TABLE event (ocel_id TEXT PRIMARY KEY, ocel_type TEXT, FOREIGN KEY (ocel_type) REFERENCES event_map_type (ocel_type));
CREATE TABLE object (ocel_id TEXT PRIMARY KEY, ocel_type TEXT, FOREIGN KEY (ocel_type) REFERENCES object_map_type (ocel_type));
CREATE TABLE event_object (ocel_event_id TEXT, ocel_object_id TEXT, ocel_qualifier TEXT, PRIMARY KEY (ocel_event_id, ocel_object_id, ocel_qualifier),
  FOREIGN KEY (ocel_event_id) REFERENCES event (ocel_id), FOREIGN KEY (ocel_object_id) REFERENCES object (ocel_id));
CREATE TABLE object_object (ocel_source_id TEXT, ocel_target_id TEXT, ocel_qualifier TEXT, PRIMARY KEY (ocel_source_id, ocel_target_id, ocel_qualifier),
  FOREIGN KEY (ocel_source_id) REFERENCES object (ocel_id), FOREIGN KEY (ocel_target_id) REFERENCES object (ocel_id));
`

function insert(db: Database.Database, table: string, columns: readonly string[]) {
  return db.prepare<unknown[]>(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
}

/** What the tables need to know before any row: the declared types and the item types and attributes (see typeTables). */
type TableShapes = Pick<OcelJson, 'eventTypes' | 'objectTypes'> & Partial<Pick<OcelJson, 'events' | 'objects'>>

/**
 * The tables of one OCEL 2.0 SQLite file, made in the empty database `db` from the declarations
 * (and the types and attributes `shapes` items carry), then filled one object and one event at a
 * time, so that a streamed export writes rows as it reads them. Callers choose the transactions.
 * @throws Error as typeTables when the declarations cannot be laid out as tables.
 */
export class OcelSqliteTables {
  private readonly object
  private readonly o2o
  private readonly objectRows
  private readonly changeStatements = new Map<string, Database.Statement<unknown[]>>()
  private readonly event
  private readonly e2o
  private readonly eventRows

  constructor(
    private readonly db: Database.Database,
    shapes: TableShapes,
  ) {
    const eventTables = typeTables('event', shapes.eventTypes, shapes.events ?? [])
    const objectTables = typeTables('object', shapes.objectTypes, shapes.objects ?? [])
    db.exec(SCHEMA)
    for (const t of eventTables.values()) createTypeTable(db, t, 'event')
    for (const t of objectTables.values()) createTypeTable(db, t, 'object')
    const eventMap = insert(db, 'event_map_type', ['ocel_type', 'ocel_type_map'])
    for (const [type, t] of eventTables) eventMap.run(type, t.table.slice('event_'.length))
    const objectMap = insert(db, 'object_map_type', ['ocel_type', 'ocel_type_map'])
    for (const [type, t] of objectTables) objectMap.run(type, t.table.slice('object_'.length))

    this.object = insert(db, 'object', ['ocel_id', 'ocel_type'])
    this.o2o = insert(db, 'object_object', ['ocel_source_id', 'ocel_target_id', 'ocel_qualifier'])
    this.objectRows = new Map([...objectTables].map(([type, t]) => [type, { t, initial: insert(db, t.table, ['ocel_id', 'ocel_time', ...t.columns.keys()]) }]))
    this.event = insert(db, 'event', ['ocel_id', 'ocel_type'])
    this.e2o = insert(db, 'event_object', ['ocel_event_id', 'ocel_object_id', 'ocel_qualifier'])
    this.eventRows = new Map([...eventTables].map(([type, t]) => [type, { t, row: insert(db, t.table, ['ocel_id', 'ocel_time', ...t.columns.keys()]) }]))
  }

  private change(table: string, column: string): Database.Statement<unknown[]> {
    const key = JSON.stringify([table, column])
    let statement = this.changeStatements.get(key)
    if (statement === undefined) {
      statement = insert(this.db, table, ['ocel_id', 'ocel_time', 'ocel_changed_field', column])
      this.changeStatements.set(key, statement)
    }
    return statement
  }

  /** The rows of one object: `object`, its O2O, and its attribute history in `object_<Type>`. */
  writeObject(o: OcelJson['objects'][number]): void {
    this.object.run(o.id, o.type)
    for (const r of o.relationships ?? []) this.o2o.run(o.id, r.objectId, r.qualifier)
    const rows = this.objectRows.get(o.type)
    const attributes = o.attributes ?? []
    const first = attributes[0]
    if (rows === undefined || first === undefined) return
    // The values at the first time, one per attribute, in one row; every other value as a change.
    const initial = new Map<string, string>()
    const changes: { name: string; time: string; value: string }[] = []
    for (const a of attributes) {
      if (a.time === first.time && !initial.has(a.name) && changes.length === 0) initial.set(a.name, a.value)
      else changes.push(a)
    }
    const columns = [...rows.t.columns]
    rows.initial.run(o.id, first.time, ...columns.map(([name, type]) => (initial.has(name) ? sqliteValue(initial.get(name) ?? '', type) : null)))
    for (const c of changes) {
      this.change(rows.t.table, c.name).run(o.id, c.time, c.name, sqliteValue(c.value, rows.t.columns.get(c.name) ?? 'string'))
    }
  }

  /** The rows of one event: `event`, its E2O, and its row in `event_<Type>`. */
  writeEvent(e: OcelJson['events'][number]): void {
    this.event.run(e.id, e.type)
    for (const r of e.relationships ?? []) this.e2o.run(e.id, r.objectId, r.qualifier)
    const rows = this.eventRows.get(e.type)
    if (rows === undefined) return
    const values = new Map((e.attributes ?? []).map((a) => [a.name, a.value]))
    rows.row.run(e.id, e.time, ...[...rows.t.columns].map(([name, type]) => (values.has(name) ? sqliteValue(values.get(name) ?? '', type) : null)))
  }
}

/**
 * Opens `<path>.partial-<pid>` for an OCEL 2.0 SQLite file (removing a leftover one): rollback
 * journal, foreign keys declared as the standard's layout has them but not enforced (a document may
 * name objects it does not define, an O2O target say, and its file must still hold every row).
 */
export function openPartialSqlite(path: string): { db: Database.Database; partial: string } {
  const partial = `${path}.partial-${String(process.pid)}`
  rmSync(partial, { force: true })
  const db = new Database(partial)
  db.pragma('journal_mode = DELETE')
  db.pragma('foreign_keys = OFF')
  return { db, partial }
}

/** Closes `db` and renames `partial` over `path`; or, when `error` is given, closes and removes it. */
export function finishPartialSqlite(db: Database.Database, partial: string, path: string, error?: unknown): void {
  if (db.open) db.close()
  if (error === undefined) renameSync(partial, path)
  else if (existsSync(partial)) rmSync(partial, { force: true })
}

/**
 * Writes `doc` as an OCEL 2.0 SQLite file at `path` (see module comment for the layout), atomically:
 * into `<path>.partial-<pid>` beside it, then renamed over `path`, so a reader never sees half a
 * file and an existing file is replaced only by a complete one.
 * @throws Error when the document cannot be laid out as tables (an attribute named like a reserved
 *   column, or two attribute names of one type that differ only in case), or SQLite's and Node's
 *   file errors; the partial file is removed.
 */
export function writeOcelSqlite(doc: OcelJson, path: string): void {
  const { db, partial } = openPartialSqlite(path)
  try {
    db.transaction(() => {
      const tables = new OcelSqliteTables(db, doc)
      for (const o of doc.objects) tables.writeObject(o)
      for (const e of doc.events) tables.writeEvent(e)
    })()
  } catch (error) {
    finishPartialSqlite(db, partial, path, error)
    throw error
  }
  finishPartialSqlite(db, partial, path)
}
