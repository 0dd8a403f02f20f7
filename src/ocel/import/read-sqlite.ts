/**
 * Reader of OCEL 2.0 SQLite (`.sqlite`): the relational layout of the OCEL 2.0 standard, as pm4py,
 * ocpa and ocelescope write it:
 * - `event (ocel_id, ocel_type)`, `object (ocel_id, ocel_type)`;
 * - `event_object (ocel_event_id, ocel_object_id, ocel_qualifier)` (E2O) and
 *   `object_object (ocel_source_id, ocel_target_id, ocel_qualifier)` (O2O);
 * - `event_map_type` / `object_map_type (ocel_type, ocel_type_map)`: type name → table suffix;
 * - `event_<Map> (ocel_id, ocel_time, <attribute columns>)`: one row per event;
 * - `object_<Map> (ocel_id, ocel_time, ocel_changed_field, <attribute columns>)`: the attribute
 *   history; a row with no `ocel_changed_field` sets every non-null column (initial values, usually
 *   at 1970-01-01), a row with one sets that column (or those, comma-separated) at `ocel_time`.
 * Values keep their SQLite types (REAL/INTEGER → numbers), except that 0 and 1 in a column declared
 * BOOLEAN are read as false and true (SQLite has no boolean values). Ids are read as text (the running
 * example stores item ids as INTEGER in `object_Items`, as TEXT in `object`). Opened read-only.
 */
import Database from 'better-sqlite3'
import {
  asQualifier,
  asText,
  newNotes,
  OcelReadError,
  tally,
  collector,
  type OcelLog,
  type OcelRelationship,
  type OcelSink,
  type ReadEnd,
  type ReadNotes,
  type OcelTypeDeclaration,
  putAttribute,
} from './model.js'
import { readTime, type TimeZone } from './time.js'
import { messageOf } from '../../core/errors.js'

type Row = Record<string, unknown>

const RESERVED = new Set(['ocel_id', 'ocel_time', 'ocel_changed_field'])

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** OCEL attribute type of a declared SQLite column type. */
function ocelType(declared: string): string {
  const t = declared.toUpperCase()
  if (t.includes('INT')) return 'integer'
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB') || t.includes('NUM')) return 'float'
  if (t.includes('BOOL')) return 'boolean'
  if (t.includes('TIME') || t.includes('DATE')) return 'time'
  return 'string'
}

class Tables {
  private readonly names: Map<string, string>

  constructor(private readonly db: Database.Database) {
    const rows = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all()
    this.names = new Map(rows.map((r) => [r.name.toLowerCase(), r.name]))
  }

  /** The table's real name (SQLite names are case-insensitive), or null. */
  find(name: string): string | null {
    return this.names.get(name.toLowerCase()) ?? null
  }

  /**
   * The table's rows as objects keyed by column name. Built here from raw rows: better-sqlite3's
   * row objects drop a column named `__proto__` (it sets their prototype), and such a column is an
   * attribute of the log like any other.
   */
  rows(table: string): Row[] {
    const statement = this.db.prepare(`SELECT * FROM ${quote(table)} ORDER BY rowid`).raw()
    const names = statement.columns().map((c) => c.name)
    return (statement.all() as unknown[][]).map((values) => {
      const row: Row = {}
      names.forEach((name, i) => {
        putAttribute(row, name, values[i])
      })
      return row
    })
  }

  /** The table's rows one at a time, as `rows` builds them. */
  *iterate(table: string): Generator<Row> {
    const statement = this.db.prepare(`SELECT * FROM ${quote(table)} ORDER BY rowid`).raw()
    const names = statement.columns().map((c) => c.name)
    for (const values of statement.iterate() as IterableIterator<unknown[]>) {
      const row: Row = {}
      names.forEach((name, i) => {
        putAttribute(row, name, values[i])
      })
      yield row
    }
  }

  columns(table: string): { name: string; type: string }[] {
    return this.db.prepare<[], { name: string; type: string }>(`PRAGMA table_info(${quote(table)})`).all()
  }

  /** The table's columns declared BOOLEAN (see module comment). */
  booleanColumns(table: string): Set<string> {
    return new Set(
      this.columns(table)
        .filter((c) => ocelType(c.type) === 'boolean')
        .map((c) => c.name),
    )
  }
}

/** A cell value: 0/1 of a BOOLEAN column as false/true, anything else as SQLite gives it. */
function cellValue(value: unknown, column: string, booleans: ReadonlySet<string>): unknown {
  if (booleans.has(column) && (value === 0 || value === 1)) return value === 1
  return value
}

/** Type name → table of its rows (`<prefix>_<map>`), from the map table, else from the type name without non-alphanumerics. */
function typeTables(tables: Tables, prefix: 'event' | 'object', typeNames: Iterable<string>): Map<string, string | null> {
  const mapped = new Map<string, string>()
  const mapTable = tables.find(`${prefix}_map_type`)
  if (mapTable !== null) {
    for (const r of tables.rows(mapTable)) {
      const type = asText(r.ocel_type)
      const suffix = asText(r.ocel_type_map)
      if (type !== null && suffix !== null) mapped.set(type, suffix)
    }
  }
  const out = new Map<string, string | null>()
  for (const type of [...mapped.keys(), ...typeNames]) {
    if (out.has(type)) continue
    const suffix = mapped.get(type)
    const candidates = suffix === undefined ? [type, type.replace(/[^A-Za-z0-9_]/g, '')] : [suffix]
    out.set(type, candidates.map((c) => tables.find(`${prefix}_${c}`)).find((t) => t !== null) ?? null)
  }
  return out
}

function declaration(tables: Tables, name: string, table: string | null): OcelTypeDeclaration {
  const attributes =
    table === null
      ? []
      : tables
          .columns(table)
          .filter((c) => !RESERVED.has(c.name))
          .map((c) => ({ name: c.name, type: ocelType(c.type) }))
  return { name, attributes }
}

/** The attribute values one `object_<Map>` row sets (see module comment). */
function changedValues(row: Row, attributeColumns: readonly string[]): [string, unknown][] {
  const changed = asText(row.ocel_changed_field)
  if (changed === null || changed === '')
    return attributeColumns.flatMap((c) => (row[c] === null || row[c] === undefined ? [] : [[c, row[c]] as [string, unknown]]))
  const fields = attributeColumns.includes(changed)
    ? [changed]
    : changed
        .split(',')
        .map((f) => f.trim())
        .filter((f) => attributeColumns.includes(f))
  return fields.map((f) => [f, row[f] ?? null])
}

/** Where the SQLite reader keeps its indexes of the file's rows: a database of its own (the staging file, or one in memory). */
export interface SqliteScratch {
  db: Database.Database
  /** Called after each row written (the staging file ends its transactions by it). */
  wrote(): void
}

/**
 * Reads an OCEL 2.0 SQLite file into `sink`, a row at a time: the links (E2O, O2O), the object
 * attribute rows and the event type rows are first copied, keyed by id, into `scratch` (tables
 * `src_*`), then the `object` and `event` tables are read in order and each object or event is
 * assembled from them and handed on. So memory holds one item at a time, plus the type names.
 * @throws OcelReadError when the file is not SQLite or has no `event` and `object` tables.
 */
export function sqliteReader(path: string, zone: TimeZone, sink: OcelSink, scratch: SqliteScratch): ReadEnd {
  let db: Database.Database
  try {
    db = new Database(path, { readonly: true, fileMustExist: true })
  } catch (error) {
    throw new OcelReadError(`cannot open ${path} as SQLite: ${messageOf(error)}`)
  }
  try {
    let tables: Tables
    try {
      tables = new Tables(db)
    } catch (error) {
      throw new OcelReadError(`${path} is not an SQLite database: ${messageOf(error)}`)
    }
    const eventTable = tables.find('event')
    const objectTable = tables.find('object')
    if (eventTable === null || objectTable === null) throw new OcelReadError('no "event" and "object" tables: not an OCEL 2.0 SQLite log')
    return streamTables(tables, eventTable, objectTable, zone, sink, scratch)
  } finally {
    db.close()
  }
}

/**
 * Reads an OCEL 2.0 SQLite file into memory (sqliteReader with a scratch database in memory).
 * @throws OcelReadError when the file is not SQLite or has no `event` and `object` tables.
 */
export function readOcelSqlite(path: string, zone: TimeZone): OcelLog {
  const scratch = new Database(':memory:')
  try {
    const { sink, finish } = collector()
    return finish(sqliteReader(path, zone, sink, { db: scratch, wrote: () => {} }))
  } finally {
    scratch.close()
  }
}

/** Link kinds in the scratch table `src_link`. */
const E2O = 0
const O2O = 1

/** What the passes over a SQLite log share: its tables, the zone of zoneless times, the sink, the scratch database and the notes. */
interface Pass {
  tables: Tables
  zone: TimeZone
  sink: OcelSink
  scratch: SqliteScratch
  notes: ReadNotes
  /** The E2O or O2O links of an event or object, in file order (once stageLinks has run). */
  relationshipsOf: (kind: number, source: string) => OcelRelationship[]
}

/** Streams the objects, then the events, then the type declarations of a SQLite log to `sink`, staging what it must look up in `scratch`. */
function streamTables(tables: Tables, eventTable: string, objectTable: string, zone: TimeZone, sink: OcelSink, scratch: SqliteScratch): ReadEnd {
  const notes = newNotes(zone.label)
  scratch.db.exec(`
    CREATE TABLE src_link (kind INTEGER NOT NULL, source TEXT NOT NULL, ord INTEGER PRIMARY KEY, object_id TEXT NOT NULL, qualifier TEXT);
    CREATE TABLE src_object_key (type TEXT NOT NULL, id TEXT NOT NULL, last INTEGER NOT NULL, PRIMARY KEY (type, id));
    CREATE TABLE src_attribute (type TEXT NOT NULL, id TEXT NOT NULL, ord INTEGER PRIMARY KEY, name TEXT NOT NULL, time INTEGER NOT NULL, value TEXT NOT NULL);
    CREATE TABLE src_event_row (type TEXT NOT NULL, id TEXT NOT NULL, row TEXT NOT NULL, PRIMARY KEY (type, id));
    CREATE TABLE src_known (id TEXT PRIMARY KEY);
  `)
  const distinctTypes = (table: string) => {
    const out = new Set<string>()
    for (const r of tables.iterate(table)) {
      const t = asText(r.ocel_type)
      if (t !== null) out.add(t)
    }
    return out
  }
  const eventTypeTables = typeTables(tables, 'event', distinctTypes(eventTable))
  const objectTypeTables = typeTables(tables, 'object', distinctTypes(objectTable))
  const pass: Pass = { tables, zone, sink, scratch, notes, relationshipsOf: stageLinks(tables, scratch, notes) }
  streamObjects(pass, objectTable, objectTypeTables)
  streamEvents(pass, eventTable, eventTypeTables)

  for (const [name, table] of eventTypeTables) sink.eventType(declaration(tables, name, table))
  for (const [name, table] of objectTypeTables) sink.objectType(declaration(tables, name, table))
  return { format: 'sqlite', notes, typeText: false }
}

/** Copies the E2O and O2O links into the scratch database, keyed by their source (event or object id), in file order. @returns Pass.relationshipsOf. */
function stageLinks(tables: Tables, scratch: SqliteScratch, notes: ReadNotes): Pass['relationshipsOf'] {
  const s = scratch.db
  const insertLink = s.prepare<[number, string, string, string | null]>('INSERT INTO src_link (kind, source, object_id, qualifier) VALUES (?, ?, ?, ?)')
  const copyLinks = (kind: number, table: string | null, from: string, to: string, cause: string) => {
    if (table === null) return
    for (const r of tables.iterate(table)) {
      const source = asText(r[from])
      const objectId = asText(r[to])
      if (source === null || objectId === null) {
        tally(notes.unreadable, cause, `${table} (${String(r[from])}, ${String(r[to])})`)
        continue
      }
      insertLink.run(kind, source, objectId, asQualifier(r.ocel_qualifier))
      scratch.wrote()
    }
  }
  copyLinks(E2O, tables.find('event_object'), 'ocel_event_id', 'ocel_object_id', 'e2o_unreadable')
  copyLinks(O2O, tables.find('object_object'), 'ocel_source_id', 'ocel_target_id', 'o2o_unreadable')
  s.exec('CREATE INDEX src_link_source ON src_link (kind, source, ord)')
  const linksOf = s.prepare<[number, string], { object_id: string; qualifier: string | null }>(
    'SELECT object_id, qualifier FROM src_link WHERE kind = ? AND source = ? ORDER BY ord',
  )
  return (kind, source) => linksOf.all(kind, source).map((l) => ({ objectId: l.object_id, qualifier: l.qualifier }))
}

/** Objects: identity from `object` (the last row of a (type, id) gets its attribute history), history from `object_<Map>`. */
function streamObjects(pass: Pass, objectTable: string, objectTypeTables: ReadonlyMap<string, string | null>): void {
  const { tables, zone, sink, scratch, notes } = pass
  const s = scratch.db
  const insertKey = s.prepare<[string, string, number]>('INSERT OR REPLACE INTO src_object_key (type, id, last) VALUES (?, ?, ?)')
  let rowNumber = 0
  for (const r of tables.iterate(objectTable)) {
    rowNumber += 1
    const id = asText(r.ocel_id)
    const type = asText(r.ocel_type)
    if (id === null || type === null) {
      tally(notes.unreadable, 'object_unreadable', `${objectTable} (${String(r.ocel_id)}, ${String(r.ocel_type)})`)
      continue
    }
    insertKey.run(type, id, rowNumber)
    scratch.wrote()
  }
  const isObject = s.prepare<[string, string], number>('SELECT 1 FROM src_object_key WHERE type = ? AND id = ?').pluck()
  const insertAttribute = s.prepare<[string, string, string, number, string]>('INSERT INTO src_attribute (type, id, name, time, value) VALUES (?, ?, ?, ?, ?)')
  for (const [type, table] of objectTypeTables) {
    if (table === null) continue
    const attributeColumns = tables
      .columns(table)
      .map((c) => c.name)
      .filter((c) => !RESERVED.has(c))
    const booleans = tables.booleanColumns(table)
    for (const r of tables.iterate(table)) {
      const id = asText(r.ocel_id)
      if (id === null || isObject.get(type, id) === undefined) {
        tally(notes.unreadable, 'object_attribute_unknown_object', `${table} (${String(r.ocel_id)})`)
        continue
      }
      const values = changedValues(r, attributeColumns)
      if (values.length === 0) continue
      const time = r.ocel_time === undefined || r.ocel_time === null ? 0 : readTime(r.ocel_time, zone, notes)
      if (time === null) {
        tally(notes.unreadable, 'object_attribute_unreadable_time', `${id} (${String(r.ocel_time)})`, values.length)
        continue
      }
      for (const [name, value] of values) {
        insertAttribute.run(type, id, name, time, JSON.stringify(cellValue(value, name, booleans) ?? null))
        scratch.wrote()
      }
    }
  }
  s.exec('CREATE INDEX src_attribute_object ON src_attribute (type, id, ord)')
  const lastOf = s.prepare<[string, string], number>('SELECT last FROM src_object_key WHERE type = ? AND id = ?').pluck()
  const attributesOf = s.prepare<[string, string], { name: string; time: number; value: string }>(
    'SELECT name, time, value FROM src_attribute WHERE type = ? AND id = ? ORDER BY ord',
  )
  rowNumber = 0
  for (const r of tables.iterate(objectTable)) {
    rowNumber += 1
    const id = asText(r.ocel_id)
    const type = asText(r.ocel_type)
    if (id === null || type === null) continue
    const attributes =
      lastOf.get(type, id) === rowNumber ? attributesOf.all(type, id).map((a) => ({ name: a.name, time: a.time, value: JSON.parse(a.value) as unknown })) : []
    sink.object({ id, type, attributes, relationships: pass.relationshipsOf(O2O, id) })
  }
}

/** Events: identity from `event`, time and attributes from the first row of its id in `event_<Map>`; E2O links of no event are noted. */
function streamEvents(pass: Pass, eventTable: string, eventTypeTables: ReadonlyMap<string, string | null>): void {
  const { tables, zone, sink, scratch, notes } = pass
  const s = scratch.db
  const insertRow = s.prepare<[string, string, string]>('INSERT OR IGNORE INTO src_event_row (type, id, row) VALUES (?, ?, ?)')
  const eventBooleans = new Map<string, Set<string>>()
  for (const [type, table] of eventTypeTables) {
    if (table === null) continue
    eventBooleans.set(type, tables.booleanColumns(table))
    for (const r of tables.iterate(table)) {
      const id = asText(r.ocel_id)
      if (id === null) continue
      insertRow.run(type, id, JSON.stringify(Object.entries(r)))
      scratch.wrote()
    }
  }
  const rowOf = s.prepare<[string, string], string>('SELECT row FROM src_event_row WHERE type = ? AND id = ?').pluck()
  const insertKnown = s.prepare<[string]>('INSERT OR IGNORE INTO src_known (id) VALUES (?)')
  for (const r of tables.iterate(eventTable)) {
    const id = asText(r.ocel_id)
    const type = asText(r.ocel_type)
    if (id === null || type === null) {
      tally(notes.unreadable, 'event_unreadable', `${eventTable} (${String(r.ocel_id)}, ${String(r.ocel_type)})`)
      continue
    }
    insertKnown.run(id)
    scratch.wrote()
    const staged = rowOf.get(type, id)
    if (staged === undefined) {
      tally(notes.unreadable, 'event_without_row', `${id} (no row in ${eventTypeTables.get(type) ?? `event_<${type}>`})`)
      continue
    }
    const row: Row = {}
    for (const [name, value] of JSON.parse(staged) as [string, unknown][]) putAttribute(row, name, value)
    const time = readTime(row.ocel_time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'event_unreadable_time', `${id} (${String(row.ocel_time)})`)
      continue
    }
    const attributes: Record<string, unknown> = {}
    const booleans = eventBooleans.get(type) ?? new Set<string>()
    for (const [name, value] of Object.entries(row)) if (!RESERVED.has(name) && value !== null) putAttribute(attributes, name, cellValue(value, name, booleans))
    sink.event({ id, type, time, attributes, relationships: pass.relationshipsOf(E2O, id) })
  }
  const unknown = s
    .prepare<[number], { source: string; n: number }>(
      'SELECT source, count(*) AS n, min(ord) AS first FROM src_link WHERE kind = ? AND source NOT IN (SELECT id FROM src_known) GROUP BY source ORDER BY first',
    )
    .all(E2O)
  for (const u of unknown) tally(notes.unreadable, 'e2o_unknown_event', u.source, u.n)
}
