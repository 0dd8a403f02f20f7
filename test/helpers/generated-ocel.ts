/**
 * A small OCEL 2.0 log written by the tests themselves, in the three forms `ocelog import` reads
 * (JSON, XML, SQLite), so that import, export and round-trip tests run on every clone. It carries
 * the quirks of the real logs:
 * - timestamps with `Z`, with offsets (`+01:00`, `-05:30`, `-03:00`, `+00:00`), without a zone
 *   (`2024-03-01 11:00:00`, `2024-03-03T00:00:00`), and one with digits below the millisecond;
 * - initial object attribute values at the epoch, written as each form writes them (`…Z` in JSON,
 *   `time="0"` in XML, a zoneless `1970-01-01 00:00:00` in SQLite), then changes over time;
 * - E2O and O2O references to objects the log never defines (`ghost-…`), and an event that names
 *   only such an object;
 * - declared event and object types that nothing uses (`cancel order`, `warehouse`);
 * - unicode in type names, object ids, attribute names and values, and XML's special characters;
 * - an event with exactly 50 objects, and one with 51 (which the import must skip and count);
 * - qualifiers, and the empty qualifier `''` (read as none).
 *
 * The three forms hold the same log: read with the same `--timezone`, they give equal events and
 * objects. Its numbers, for assertions (JSON form; SQLite differs only in zoneless timestamps):
 * 8 events (5 event types declared, 4 used), 57 objects (4 object types declared, 3 used), 110 E2O,
 * 3 O2O, 63 object attribute values; 4 zoneless timestamps (58 in SQLite, whose 54 initial rows have
 * no zone), 1 cut to milliseconds. Importing it sends 7 events (2 of them naming the 2 undefined
 * objects, sent with the placeholder type), 61 object upserts of 57 objects, and skips 1 event with
 * 51 objects and 3 O2O relationships.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'

type AttributeType = 'string' | 'integer' | 'float'
type Value = string | number

interface TypeDeclaration {
  name: string
  /** Suffix of its SQLite table (`event_<map>`, `object_<map>`). */
  map: string
  attributes: { name: string; type: AttributeType }[]
}

interface Relationship {
  objectId: string
  qualifier: string
}

interface GeneratedEvent {
  id: string
  type: string
  time: string
  attributes: Record<string, Value>
  relationships: Relationship[]
}

interface GeneratedObject {
  id: string
  type: string
  /** `time` null: an initial value (the epoch). */
  attributes: { name: string; time: string | null; value: Value }[]
  relationships: Relationship[]
}

interface GeneratedLog {
  eventTypes: TypeDeclaration[]
  objectTypes: TypeDeclaration[]
  events: GeneratedEvent[]
  objects: GeneratedObject[]
}

/** Paths of the three forms of the generated log. */
export interface GeneratedOcelFiles {
  json: string
  xml: string
  sqlite: string
}

const CUSTOMER = 'Kunde 客户'
const CHECK = 'Bestellung prüfen ✓'
/** Ids of the 51 items: `item-1` … `item-51`. */
const items = (n: number) => Array.from({ length: n }, (_, i) => `item-${String(i + 1)}`)

/** The log (see module comment). */
function generatedLog(): GeneratedLog {
  const eventTypes: TypeDeclaration[] = [
    {
      name: 'place order',
      map: 'placeorder',
      attributes: [
        { name: 'channel', type: 'string' },
        { name: 'lines', type: 'integer' },
      ],
    },
    { name: CHECK, map: 'BestellungPruefen', attributes: [{ name: 'prüfer', type: 'string' }] },
    { name: 'pack items', map: 'packitems', attributes: [{ name: 'crate', type: 'string' }] },
    { name: 'pay order', map: 'payorder', attributes: [{ name: 'amount', type: 'float' }] },
    { name: 'cancel order', map: 'cancelorder', attributes: [{ name: 'reason', type: 'string' }] },
  ]
  const objectTypes: TypeDeclaration[] = [
    {
      name: 'order',
      map: 'order',
      attributes: [
        { name: 'status', type: 'string' },
        { name: 'total', type: 'float' },
        { name: 'lines', type: 'integer' },
      ],
    },
    {
      name: CUSTOMER,
      map: 'Kunde',
      attributes: [
        { name: 'name', type: 'string' },
        { name: 'größe', type: 'string' },
      ],
    },
    { name: 'item', map: 'item', attributes: [{ name: 'weight', type: 'float' }] },
    { name: 'warehouse', map: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] },
  ]
  const initial = (values: Record<string, Value>) => Object.entries(values).map(([name, value]) => ({ name, time: null, value }))
  const objects: GeneratedObject[] = [
    {
      id: 'o-1',
      type: 'order',
      attributes: [
        ...initial({ status: 'open', total: 10.5, lines: 2 }),
        { name: 'total', time: '2024-03-01T10:00:00Z', value: 12.25 },
        { name: 'status', time: '2024-03-02T11:30:00+01:00', value: 'paid' },
        { name: 'status', time: '2024-03-03 08:00:00', value: 'shipped' },
      ],
      relationships: [
        { objectId: '客户-1', qualifier: 'placed by' },
        { objectId: 'ghost-order', qualifier: '' },
      ],
    },
    {
      id: 'o-2',
      type: 'order',
      attributes: [...initial({ status: 'open', total: 5, lines: 1 }), { name: 'status', time: '2024-03-02T08:00:00-03:00', value: 'cancelled' }],
      relationships: [],
    },
    { id: 'o-3', type: 'order', attributes: initial({ status: 'open' }), relationships: [] },
    { id: 'Bestellung-äöü-4', type: 'order', attributes: [], relationships: [] },
    { id: '客户-1', type: CUSTOMER, attributes: initial({ name: 'Zoë Müller & Söhne <GmbH> "Ost"', größe: 'XL' }), relationships: [] },
    { id: '😀-2', type: CUSTOMER, attributes: [], relationships: [] },
    ...items(51).map(
      (id, i): GeneratedObject => ({
        id,
        type: 'item',
        attributes: i < 50 ? initial({ weight: (i + 1) / 4 }) : [],
        relationships: i === 0 ? [{ objectId: 'o-1', qualifier: 'part of' }] : [],
      }),
    ),
  ]
  const rel = (objectId: string, qualifier = ''): Relationship => ({ objectId, qualifier })
  const events: GeneratedEvent[] = [
    {
      id: 'e1',
      type: 'place order',
      time: '2024-03-01T09:00:00+01:00',
      attributes: { channel: 'web', lines: 2 },
      relationships: [rel('o-1', 'order'), rel('客户-1', 'customer'), rel('ghost-1', 'phantom')],
    },
    {
      id: 'e2',
      type: 'place order',
      time: '2024-03-01T09:30:00.123456-05:30',
      attributes: { channel: 'phone', lines: 1 },
      relationships: [rel('o-2'), rel('😀-2', 'customer')],
    },
    { id: 'e3', type: CHECK, time: '2024-03-01 11:00:00', attributes: { prüfer: 'Jürgen' }, relationships: [rel('o-1', 'geprüft')] },
    {
      id: 'e4',
      type: 'pack items',
      time: '2024-03-02T07:00:00Z',
      attributes: { crate: 'A' },
      relationships: [rel('o-1', 'order'), ...items(49).map((id) => rel(id, 'packed'))],
    },
    {
      id: 'e5',
      type: 'pack items',
      time: '2024-03-02T07:30:00Z',
      attributes: { crate: 'B' },
      relationships: [rel('o-2', 'order'), ...items(50).map((id) => rel(id, 'packed'))],
    },
    { id: 'e6', type: 'pay order', time: '2024-03-02T10:00:00+00:00', attributes: { amount: 12.25 }, relationships: [rel('o-1', 'paid')] },
    { id: 'e7', type: 'pay order', time: '2024-03-03T00:00:00', attributes: { amount: 3 }, relationships: [rel('ghost-2')] },
    {
      id: 'e8',
      type: 'place order',
      time: '2024-03-04 12:00:00',
      attributes: { channel: 'app 📱', lines: 1 },
      relationships: [rel('Bestellung-äöü-4', 'order')],
    },
  ]
  return { eventTypes, objectTypes, events, objects }
}

const declarationsJson = (types: TypeDeclaration[]) => types.map((t) => ({ name: t.name, attributes: t.attributes }))

/** OCEL 2.0 JSON with typed values (as logs converted from SQLite carry them). */
function toJson(log: GeneratedLog): string {
  return JSON.stringify(
    {
      eventTypes: declarationsJson(log.eventTypes),
      objectTypes: declarationsJson(log.objectTypes),
      events: log.events.map((e) => ({
        id: e.id,
        type: e.type,
        time: e.time,
        attributes: Object.entries(e.attributes).map(([name, value]) => ({ name, value })),
        relationships: e.relationships,
      })),
      objects: log.objects.map((o) => ({
        id: o.id,
        type: o.type,
        attributes: o.attributes.map((a) => ({ name: a.name, time: a.time ?? '1970-01-01T00:00:00Z', value: a.value })),
        relationships: o.relationships,
      })),
    },
    null,
    2,
  )
}

function xmlEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;')
}

/** OCEL 2.0 XML in the layout of the standard's XSD (values as element text, initial values at `time="0"`). */
function toXml(log: GeneratedLog): string {
  const x = xmlEscape
  const lines = ["<?xml version='1.0' encoding='UTF-8'?>", '<log>']
  const declarations = (container: string, element: string, types: TypeDeclaration[]) => {
    lines.push(`  <${container}>`)
    for (const t of types) {
      lines.push(`    <${element} name="${x(t.name)}">`, '      <attributes>')
      for (const a of t.attributes) lines.push(`        <attribute name="${x(a.name)}" type="${a.type}"/>`)
      lines.push('      </attributes>', `    </${element}>`)
    }
    lines.push(`  </${container}>`)
  }
  const relationships = (rels: Relationship[]) => {
    lines.push('      <objects>')
    for (const r of rels) lines.push(`        <object object-id="${x(r.objectId)}" qualifier="${x(r.qualifier)}"/>`)
    lines.push('      </objects>')
  }
  declarations('object-types', 'object-type', log.objectTypes)
  declarations('event-types', 'event-type', log.eventTypes)
  lines.push('  <objects>')
  for (const o of log.objects) {
    lines.push(`    <object id="${x(o.id)}" type="${x(o.type)}">`, '      <attributes>')
    for (const a of o.attributes) lines.push(`        <attribute name="${x(a.name)}" time="${x(a.time ?? '0')}">${x(String(a.value))}</attribute>`)
    lines.push('      </attributes>')
    relationships(o.relationships)
    lines.push('    </object>')
  }
  lines.push('  </objects>', '  <events>')
  for (const e of log.events) {
    lines.push(`    <event id="${x(e.id)}" type="${x(e.type)}" time="${x(e.time)}">`, '      <attributes>')
    for (const [name, value] of Object.entries(e.attributes)) lines.push(`        <attribute name="${x(name)}">${x(String(value))}</attribute>`)
    lines.push('      </attributes>')
    relationships(e.relationships)
    lines.push('    </event>')
  }
  lines.push('  </events>', '</log>', '')
  return lines.join('\n')
}

const SQL_TYPE: Record<AttributeType, string> = { string: 'TEXT', integer: 'INTEGER', float: 'REAL' }
const q = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * OCEL 2.0 SQLite in the relational layout pm4py and ocpa write: type map tables, one table per
 * type, E2O and O2O tables; an object's initial values in one row without `ocel_changed_field` at
 * a zoneless `1970-01-01 00:00:00`, each later change in a row naming the changed column.
 */
function writeSqlite(log: GeneratedLog, path: string): void {
  const db = new Database(path)
  try {
    db.exec(`
      CREATE TABLE event_map_type (ocel_type TEXT PRIMARY KEY, ocel_type_map TEXT);
      CREATE TABLE object_map_type (ocel_type TEXT PRIMARY KEY, ocel_type_map TEXT);
      CREATE TABLE event (ocel_id TEXT PRIMARY KEY, ocel_type TEXT);
      CREATE TABLE object (ocel_id TEXT PRIMARY KEY, ocel_type TEXT);
      CREATE TABLE event_object (ocel_event_id TEXT, ocel_object_id TEXT, ocel_qualifier TEXT);
      CREATE TABLE object_object (ocel_source_id TEXT, ocel_target_id TEXT, ocel_qualifier TEXT);
    `)
    const columns = (t: TypeDeclaration) => t.attributes.map((a) => `, ${q(a.name)} ${SQL_TYPE[a.type]}`).join('')
    for (const t of log.eventTypes) {
      db.prepare('INSERT INTO event_map_type VALUES (?, ?)').run(t.name, t.map)
      db.exec(`CREATE TABLE ${q(`event_${t.map}`)} (ocel_id TEXT, ocel_time TIMESTAMP${columns(t)})`)
    }
    for (const t of log.objectTypes) {
      db.prepare('INSERT INTO object_map_type VALUES (?, ?)').run(t.name, t.map)
      db.exec(`CREATE TABLE ${q(`object_${t.map}`)} (ocel_id TEXT, ocel_time TIMESTAMP, ocel_changed_field TEXT${columns(t)})`)
    }
    const mapOf = new Map([...log.eventTypes, ...log.objectTypes].map((t) => [t.name, t.map]))
    const insertRow = (table: string, values: Record<string, Value | null>) => {
      const names = Object.keys(values)
      db.prepare(`INSERT INTO ${q(table)} (${names.map(q).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...Object.values(values))
    }
    db.transaction(() => {
      for (const o of log.objects) {
        db.prepare('INSERT INTO object VALUES (?, ?)').run(o.id, o.type)
        const table = `object_${String(mapOf.get(o.type))}`
        const initial = o.attributes.filter((a) => a.time === null)
        if (initial.length > 0) {
          insertRow(table, {
            ocel_id: o.id,
            ocel_time: '1970-01-01 00:00:00',
            ocel_changed_field: null,
            ...Object.fromEntries(initial.map((a) => [a.name, a.value])),
          })
        }
        for (const a of o.attributes) if (a.time !== null) insertRow(table, { ocel_id: o.id, ocel_time: a.time, ocel_changed_field: a.name, [a.name]: a.value })
        for (const r of o.relationships) db.prepare('INSERT INTO object_object VALUES (?, ?, ?)').run(o.id, r.objectId, r.qualifier)
      }
      for (const e of log.events) {
        db.prepare('INSERT INTO event VALUES (?, ?)').run(e.id, e.type)
        insertRow(`event_${String(mapOf.get(e.type))}`, { ocel_id: e.id, ocel_time: e.time, ...e.attributes })
        for (const r of e.relationships) db.prepare('INSERT INTO event_object VALUES (?, ?, ?)').run(e.id, r.objectId, r.qualifier)
      }
    })()
  } finally {
    db.close()
  }
}

/**
 * Writes the generated log (see module comment) into `dir` as `generated.jsonocel`,
 * `generated.xmlocel` and `generated.sqlite`.
 * @returns the three paths.
 */
export function writeGeneratedOcel(dir: string): GeneratedOcelFiles {
  const log = generatedLog()
  const files = { json: join(dir, 'generated.jsonocel'), xml: join(dir, 'generated.xmlocel'), sqlite: join(dir, 'generated.sqlite') }
  writeFileSync(files.json, toJson(log))
  writeFileSync(files.xml, toXml(log))
  writeSqlite(log, files.sqlite)
  return files
}
