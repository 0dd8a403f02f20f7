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
  type OcelEvent,
  type OcelLog,
  type OcelObject,
  type OcelRelationship,
  type OcelTypeDeclaration,
  type ReadNotes,
  putAttribute,
} from './model.js'
import { readTime, type TimeZone } from './time.js'

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

function links(tables: Tables, table: string, from: string, to: string, cause: string, notes: ReadNotes): Map<string, OcelRelationship[]> {
  const out = new Map<string, OcelRelationship[]>()
  for (const r of tables.rows(table)) {
    const source = asText(r[from])
    const objectId = asText(r[to])
    if (source === null || objectId === null) {
      tally(notes.unreadable, cause, `${table} (${String(r[from])}, ${String(r[to])})`)
      continue
    }
    const list = out.get(source) ?? []
    list.push({ objectId, qualifier: asQualifier(r.ocel_qualifier) })
    out.set(source, list)
  }
  return out
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

/**
 * Reads an OCEL 2.0 SQLite file.
 * @throws OcelReadError when the file is not SQLite or has no `event` and `object` tables.
 */
export function readOcelSqlite(path: string, zone: TimeZone): OcelLog {
  let db: Database.Database
  try {
    db = new Database(path, { readonly: true, fileMustExist: true })
  } catch (error) {
    throw new OcelReadError(`cannot open ${path} as SQLite: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    let tables: Tables
    try {
      tables = new Tables(db)
    } catch (error) {
      throw new OcelReadError(`${path} is not an SQLite database: ${error instanceof Error ? error.message : String(error)}`)
    }
    const eventTable = tables.find('event')
    const objectTable = tables.find('object')
    if (eventTable === null || objectTable === null) throw new OcelReadError('no "event" and "object" tables: not an OCEL 2.0 SQLite log')
    return readTables(tables, eventTable, objectTable, zone)
  } finally {
    db.close()
  }
}

function readTables(tables: Tables, eventTable: string, objectTable: string, zone: TimeZone): OcelLog {
  const notes = newNotes(zone.label)
  const eventRows = tables.rows(eventTable)
  const objectRows = tables.rows(objectTable)
  const eventTypeTables = typeTables(
    tables,
    'event',
    eventRows.flatMap((r) => asText(r.ocel_type) ?? []),
  )
  const objectTypeTables = typeTables(
    tables,
    'object',
    objectRows.flatMap((r) => asText(r.ocel_type) ?? []),
  )

  const e2oTable = tables.find('event_object')
  const o2oTable = tables.find('object_object')
  const e2o = e2oTable === null ? new Map<string, OcelRelationship[]>() : links(tables, e2oTable, 'ocel_event_id', 'ocel_object_id', 'e2o_unreadable', notes)
  const o2o = o2oTable === null ? new Map<string, OcelRelationship[]>() : links(tables, o2oTable, 'ocel_source_id', 'ocel_target_id', 'o2o_unreadable', notes)

  // Objects: identity from `object`, attribute history from `object_<Map>`.
  const objects: OcelObject[] = []
  const byKey = new Map<string, OcelObject>()
  for (const r of objectRows) {
    const id = asText(r.ocel_id)
    const type = asText(r.ocel_type)
    if (id === null || type === null) {
      tally(notes.unreadable, 'object_unreadable', `${objectTable} (${String(r.ocel_id)}, ${String(r.ocel_type)})`)
      continue
    }
    const o: OcelObject = { id, type, attributes: [], relationships: o2o.get(id) ?? [] }
    objects.push(o)
    byKey.set(`${type}\u0000${id}`, o)
  }
  for (const [type, table] of objectTypeTables) {
    if (table === null) continue
    const attributeColumns = tables
      .columns(table)
      .map((c) => c.name)
      .filter((c) => !RESERVED.has(c))
    const booleans = tables.booleanColumns(table)
    for (const r of tables.rows(table)) {
      const id = asText(r.ocel_id)
      const o = id === null ? undefined : byKey.get(`${type}\u0000${id}`)
      if (o === undefined) {
        tally(notes.unreadable, 'object_attribute_unknown_object', `${table} (${String(r.ocel_id)})`)
        continue
      }
      const values = changedValues(r, attributeColumns)
      if (values.length === 0) continue
      const time = r.ocel_time === undefined || r.ocel_time === null ? 0 : readTime(r.ocel_time, zone, notes)
      if (time === null) {
        tally(notes.unreadable, 'object_attribute_unreadable_time', `${o.id} (${String(r.ocel_time)})`, values.length)
        continue
      }
      for (const [name, value] of values) o.attributes.push({ name, time, value: cellValue(value, name, booleans) })
    }
  }

  // Events: identity from `event`, time and attributes from `event_<Map>`.
  const eventRowsByType = new Map<string, Map<string, Row>>()
  const eventBooleans = new Map<string, Set<string>>()
  for (const [type, table] of eventTypeTables) {
    const rows = new Map<string, Row>()
    if (table !== null) {
      eventBooleans.set(type, tables.booleanColumns(table))
      for (const r of tables.rows(table)) {
        const id = asText(r.ocel_id)
        if (id !== null && !rows.has(id)) rows.set(id, r)
      }
    }
    eventRowsByType.set(type, rows)
  }
  const events: OcelEvent[] = []
  const known = new Set<string>()
  for (const r of eventRows) {
    const id = asText(r.ocel_id)
    const type = asText(r.ocel_type)
    if (id === null || type === null) {
      tally(notes.unreadable, 'event_unreadable', `${eventTable} (${String(r.ocel_id)}, ${String(r.ocel_type)})`)
      continue
    }
    known.add(id)
    const row = eventRowsByType.get(type)?.get(id)
    if (row === undefined) {
      tally(notes.unreadable, 'event_without_row', `${id} (no row in ${eventTypeTables.get(type) ?? `event_<${type}>`})`)
      continue
    }
    const time = readTime(row.ocel_time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'event_unreadable_time', `${id} (${String(row.ocel_time)})`)
      continue
    }
    const attributes: Record<string, unknown> = {}
    const booleans = eventBooleans.get(type) ?? new Set<string>()
    for (const [name, value] of Object.entries(row)) if (!RESERVED.has(name) && value !== null) putAttribute(attributes, name, cellValue(value, name, booleans))
    events.push({ id, type, time, attributes, relationships: e2o.get(id) ?? [] })
  }
  for (const [eventId, rels] of e2o) if (!known.has(eventId)) tally(notes.unreadable, 'e2o_unknown_event', eventId, rels.length)

  return {
    format: 'sqlite',
    eventTypes: [...eventTypeTables].map(([name, table]) => declaration(tables, name, table)),
    objectTypes: [...objectTypeTables].map(([name, table]) => declaration(tables, name, table)),
    events,
    objects,
    notes,
  }
}
