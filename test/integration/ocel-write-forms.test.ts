/** Unit: the OCEL 2.0 XML and SQLite writers, on a small document, read back by our readers. */
import Database from 'better-sqlite3'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readOcelJson } from '../../src/ocel/import/read-json.js'
import { readOcelSqlite } from '../../src/ocel/import/read-sqlite.js'
import { readOcelXml } from '../../src/ocel/import/read-xml.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import { writeOcelForm } from '../../src/ocel/write-forms.js'
import { sqliteValue, writeOcelSqlite } from '../../src/ocel/write-sqlite.js'
import { OcelXmlPieces, toOcelXml } from '../../src/ocel/write-xml.js'
import { ocelFixture } from '../helpers/fixtures.js'
import { itWithXmllint, logView, relaxedXsd, xmllint } from '../helpers/ocel-forms.js'

const UTC = parseTimeZone('UTC')

/** A small log: typed attributes, an attribute history, E2O and O2O with qualifiers, XML's special characters, unicode. */
function smallDoc(): OcelJsonStrict {
  return {
    eventTypes: [
      { name: 'Create Order', attributes: [{ name: 'channel', type: 'string' }] },
      { name: 'Pay <Order> & "ship"', attributes: [{ name: 'paid', type: 'float' }] },
    ],
    objectTypes: [
      {
        name: 'order',
        attributes: [
          { name: 'express', type: 'boolean' },
          { name: 'lines', type: 'integer' },
          { name: 'status', type: 'string' },
        ],
      },
      { name: 'Kunde 客户', attributes: [{ name: 'since', type: 'time' }] },
    ],
    events: [
      {
        id: 'e1',
        type: 'Create Order',
        time: '2024-01-01T10:00:00.000Z',
        attributes: [{ name: 'channel', value: 'web & <app>' }],
        relationships: [
          { objectId: 'o1', qualifier: 'target' },
          { objectId: '客户-1', qualifier: '' },
        ],
      },
      {
        id: 'e2',
        type: 'Pay <Order> & "ship"',
        time: '2024-01-02T08:30:00.123Z',
        attributes: [{ name: 'paid', value: '12.25' }],
        relationships: [{ objectId: 'o1', qualifier: 'paid' }],
      },
    ],
    objects: [
      {
        id: 'o1',
        type: 'order',
        attributes: [
          { name: 'status', time: '2024-01-01T10:00:00.000Z', value: 'open' },
          { name: 'lines', time: '2024-01-01T10:00:00.000Z', value: '2' },
          { name: 'express', time: '2024-01-01T10:00:00.000Z', value: 'true' },
          { name: 'status', time: '2024-01-01T10:00:00.000Z', value: 'checked' },
          { name: 'status', time: '2024-01-02T08:30:00.123Z', value: 'paid' },
          { name: 'express', time: '2024-01-03T00:00:00.000Z', value: 'false' },
        ],
        relationships: [{ objectId: '客户-1', qualifier: 'placed by' }],
      },
      {
        id: '客户-1',
        type: 'Kunde 客户',
        attributes: [{ name: 'since', time: '1970-01-01T00:00:00.000Z', value: '2020-05-01T00:00:00.000Z' }],
        relationships: [],
      },
      { id: 'o2', type: 'order', attributes: [], relationships: [] },
    ],
  }
}

/** A log whose names, ids, qualifiers and values hold tabs, line feeds and carriage returns. */
function whitespaceDoc(): OcelJsonStrict {
  return {
    eventTypes: [{ name: 'Create\nOrder', attributes: [] }],
    objectTypes: [{ name: 'order\ttype', attributes: [{ name: 'note', type: 'string' }] }],
    events: [
      { id: 'e\t1', type: 'Create\nOrder', time: '2024-01-01T10:00:00.000Z', attributes: [], relationships: [{ objectId: 'o\n1', qualifier: 'line\r\nfeed' }] },
    ],
    objects: [
      {
        id: 'o\n1',
        type: 'order\ttype',
        attributes: [{ name: 'note', time: '2024-01-01T10:00:00.000Z', value: 'first\nsecond\rthird\tfourth' }],
        relationships: [],
      },
    ],
  }
}

/** The view our JSON reader gives of `doc`: what every other form must give back. */
const jsonView = (doc: OcelJsonStrict) => logView(readOcelJson(JSON.stringify(doc), UTC))

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-forms-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('toOcelXml', () => {
  it('writes a document our XML reader reads back to the same log as its JSON form', () => {
    const doc = smallDoc()
    expect(logView(readOcelXml(toOcelXml(doc), UTC))).toEqual(jsonView(doc))
  })

  it('writes the elements the XSD requires: empty <attributes/> and <objects/>, and the type of each referenced object', () => {
    const xml = toOcelXml({
      eventTypes: [{ name: 'E', attributes: [] }],
      objectTypes: [{ name: 'o', attributes: [] }],
      events: [{ id: 'e1', type: 'E', time: '2024-01-01T00:00:00.000Z', attributes: [], relationships: [{ objectId: 'x', qualifier: 'q' }] }],
      objects: [{ id: 'x', type: 'o', attributes: [], relationships: [] }],
    })
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<log>',
        '  <object-types>',
        '    <object-type name="o">',
        '      <attributes/>',
        '    </object-type>',
        '  </object-types>',
        '  <event-types>',
        '    <event-type name="E">',
        '      <attributes/>',
        '    </event-type>',
        '  </event-types>',
        '  <objects>',
        '    <object id="x" type="o">',
        '      <attributes/>',
        '    </object>',
        '  </objects>',
        '  <events>',
        '    <event id="e1" type="E" time="2024-01-01T00:00:00.000Z">',
        '      <attributes/>',
        '      <objects>',
        '        <object object-id="x" qualifier="q" type="o"/>',
        '      </objects>',
        '    </event>',
        '  </events>',
        '</log>',
        '',
      ].join('\n'),
    )
  })

  it('escapes XML special characters in names and values', () => {
    const xml = toOcelXml(smallDoc())
    expect(xml).toContain('<event-type name="Pay &lt;Order&gt; &amp; &quot;ship&quot;">')
    expect(xml).toContain('<attribute name="channel">web &amp; &lt;app&gt;</attribute>')
  })

  it('keeps tabs, line feeds and carriage returns in names, ids, qualifiers and values (as character references)', () => {
    const doc = whitespaceDoc()
    const xml = toOcelXml(doc)
    expect(xml).toContain('<object id="o&#10;1" type="order&#9;type">')
    expect(xml).toContain('<object object-id="o&#10;1" qualifier="line&#13;&#10;feed" type="order&#9;type"/>')
    expect(xml).toContain('<attribute name="note" time="2024-01-01T10:00:00.000Z">first\nsecond&#13;third\tfourth</attribute>')
    expect(logView(readOcelXml(xml, UTC))).toEqual(jsonView(doc))
  })

  it('writes multi-line values with no indentation inside the text, also piece by piece as the streamed export does', () => {
    const doc = whitespaceDoc()
    const value = '  line1\n    line2\r\n\tend  '
    doc.events[0]?.attributes.push({ name: 'memo', value })
    doc.eventTypes[0]?.attributes.push({ name: 'memo', type: 'string' })
    const xml = toOcelXml(doc)
    expect(xml).toContain('<attribute name="memo">  line1\n    line2&#13;\n\tend  </attribute>')
    const pieces = new OcelXmlPieces()
    const [event] = doc.events
    const [object] = doc.objects
    if (event === undefined || object === undefined) throw new Error('whitespaceDoc has an event and an object')
    const streamed = [
      pieces.head(doc.eventTypes, doc.objectTypes),
      pieces.open('objects', false),
      pieces.object(object, []),
      pieces.close('objects'),
      pieces.open('events', false),
      pieces.event(event, ['order\ttype']),
      pieces.close('events'),
      pieces.end(),
    ].join('')
    expect(streamed).toBe(xml)
    const read = readOcelXml(streamed, UTC)
    expect(read.events[0]?.attributes.memo).toBe(value)
    expect(logView(read)).toEqual(jsonView(doc))
  })

  it('refuses a value XML 1.0 cannot carry, naming the character and the forms that can', () => {
    const doc = whitespaceDoc()
    const [object] = doc.objects
    if (object?.attributes[0] !== undefined) object.attributes[0].value = 'bell\u0007rings'
    expect(() => toOcelXml(doc)).toThrow('OCEL XML: the value "bell\\u0007rings" holds U+0007, a character XML 1.0 cannot carry')
    expect(() => toOcelXml({ ...whitespaceDoc(), eventTypes: [{ name: 'E\uFFFF', attributes: [] }] })).toThrow(/U\+FFFF.*--format json or --format sqlite/)
  })

  it('reads character references as pm4py (lxml) writes them', () => {
    const xml = [
      '<log><object-types><object-type name="order"><attributes><attribute name="note" type="string"/></attributes></object-type></object-types>',
      '<event-types><event-type name="Create&#10;Order"><attributes/></event-type></event-types>',
      '<objects><object id="o&#x41;" type="order"><attributes><attribute name="note" time="2024-01-01T00:00:00Z">caf&#233;&#13;&#10;&amp;#38;</attribute></attributes></object></objects>',
      '<events><event id="e1" type="Create&#10;Order" time="2024-01-01T00:00:00Z"><attributes/><objects><object object-id="o&#x41;" qualifier="a&#9;b" type="order"/></objects></event></events></log>',
    ].join('')
    const log = readOcelXml(xml, UTC)
    expect(log.objects.map((o) => [o.id, o.attributes.map((a) => a.value)])).toEqual([['oA', ['café\r\n&#38;']]])
    expect(log.events.map((e) => [e.type, e.relationships])).toEqual([['Create\nOrder', [{ objectId: 'oA', qualifier: 'a\tb' }]]])
  })

  itWithXmllint('lets a conforming XML parser (libxml2) read back the line feeds, tabs and carriage returns', () => {
    const file = join(dir, 'whitespace.xmlocel')
    writeFileSync(file, toOcelXml(whitespaceDoc()))
    // xmllint ends what it prints with one line feed of its own.
    const xpath = (expression: string) => execFileSync('xmllint', ['--xpath', expression, file], { encoding: 'utf8' }).replace(/\n$/, '')
    expect(xpath('string(/log/objects/object[1]/@id)')).toBe('o\n1')
    expect(xpath('string(/log/events/event[1]/objects/object[1]/@qualifier)')).toBe('line\r\nfeed')
    expect(xpath('string(/log/objects/object[1]/attributes/attribute[1])')).toBe('first\nsecond\rthird\tfourth')
  })

  itWithXmllint(
    'validates against the standard XSD with xmllint',
    () => {
      const file = join(dir, 'small.xmlocel')
      writeFileSync(file, toOcelXml(smallDoc()))
      expect(xmllint(ocelFixture('raw/pm4py__ocel2-validation.xsd'), file)).toEqual({ valid: true, output: `${file} validates\n` })
    },
    true,
  )

  itWithXmllint(
    'writes an empty log as an XML file that validates and reads back empty',
    () => {
      const file = join(dir, 'empty.xmlocel')
      writeFileSync(file, toOcelXml({ eventTypes: [], objectTypes: [], events: [], objects: [] }))
      expect(xmllint(ocelFixture('raw/pm4py__ocel2-validation.xsd'), file)).toEqual({ valid: true, output: `${file} validates\n` })
      expect(logView(readOcelXml(readFileSync(file, 'utf8'), UTC))).toEqual({ eventTypes: [], objectTypes: [], events: [], objects: [] })
    },
    true,
  )

  itWithXmllint(
    'writes a log whose types share an attribute name in a form that passes the XSD without its two attribute keyrefs',
    () => {
      const doc = smallDoc()
      doc.objectTypes[1]?.attributes.push({ name: 'status', type: 'string' })
      doc.objects[1]?.attributes.push({ name: 'status', time: '2024-01-01T00:00:00.000Z', value: 'vip' })
      const file = join(dir, 'shared-names.xmlocel')
      writeFileSync(file, toOcelXml(doc))
      const xsd = ocelFixture('raw/pm4py__ocel2-validation.xsd')
      expect(xmllint(xsd, file).output).toContain('More than one match found')
      expect(xmllint(relaxedXsd(xsd, join(dir, 'relaxed.xsd')), file)).toEqual({ valid: true, output: `${file} validates\n` })
      expect(logView(readOcelXml(readFileSync(file, 'utf8'), UTC))).toEqual(jsonView(doc))
    },
    true,
  )
})

describe('writeOcelSqlite', () => {
  it('writes a file our SQLite reader reads back to the same log as its JSON form', () => {
    const doc = smallDoc()
    const file = join(dir, 'small.sqlite')
    writeOcelSqlite(doc, file)
    expect(logView(readOcelSqlite(file, UTC))).toEqual(jsonView(doc))
  })

  it('lays out the standard tables, with map tables naming the per-type tables and typed attribute columns', () => {
    const file = join(dir, 'small.sqlite')
    writeOcelSqlite(smallDoc(), file)
    const db = new Database(file, { readonly: true })
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
    const columns = (table: string) =>
      db
        .prepare<[], { name: string; type: string }>(`PRAGMA table_info("${table}")`)
        .all()
        .map((c) => `${c.name} ${c.type}`)
    expect(tables.map((t) => t.name)).toEqual([
      'event',
      'event_CreateOrder',
      'event_PayOrdership',
      'event_map_type',
      'event_object',
      'object',
      'object_Kunde',
      'object_map_type',
      'object_object',
      'object_order',
    ])
    expect(db.prepare('SELECT * FROM object_map_type ORDER BY ocel_type').all()).toEqual([
      { ocel_type: 'Kunde 客户', ocel_type_map: 'Kunde' },
      { ocel_type: 'order', ocel_type_map: 'order' },
    ])
    expect(columns('object_order')).toEqual([
      'ocel_id TEXT',
      'ocel_time TIMESTAMP',
      'ocel_changed_field TEXT',
      'express BOOLEAN',
      'lines INTEGER',
      'status TEXT',
    ])
    expect(columns('event_PayOrdership')).toEqual(['ocel_id TEXT', 'ocel_time TIMESTAMP', 'paid REAL'])
    expect(db.prepare('SELECT * FROM event_object ORDER BY rowid').all()).toEqual([
      { ocel_event_id: 'e1', ocel_object_id: 'o1', ocel_qualifier: 'target' },
      { ocel_event_id: 'e1', ocel_object_id: '客户-1', ocel_qualifier: '' },
      { ocel_event_id: 'e2', ocel_object_id: 'o1', ocel_qualifier: 'paid' },
    ])
    expect(db.prepare('SELECT * FROM object_object').all()).toEqual([{ ocel_source_id: 'o1', ocel_target_id: '客户-1', ocel_qualifier: 'placed by' }])
    db.close()
  })

  it('writes the values at an object first time as one row, and every later value as a change naming its column', () => {
    const file = join(dir, 'small.sqlite')
    writeOcelSqlite(smallDoc(), file)
    const db = new Database(file, { readonly: true })
    expect(db.prepare('SELECT * FROM object_order ORDER BY rowid').all()).toEqual([
      { ocel_id: 'o1', ocel_time: '2024-01-01T10:00:00.000Z', ocel_changed_field: null, express: 1, lines: 2, status: 'open' },
      { ocel_id: 'o1', ocel_time: '2024-01-01T10:00:00.000Z', ocel_changed_field: 'status', express: null, lines: null, status: 'checked' },
      { ocel_id: 'o1', ocel_time: '2024-01-02T08:30:00.123Z', ocel_changed_field: 'status', express: null, lines: null, status: 'paid' },
      { ocel_id: 'o1', ocel_time: '2024-01-03T00:00:00.000Z', ocel_changed_field: 'express', express: 0, lines: null, status: null },
    ])
    db.close()
  })

  it('writes an empty log as the standard tables without rows', () => {
    const file = join(dir, 'empty.sqlite')
    writeOcelSqlite({ eventTypes: [], objectTypes: [], events: [], objects: [] }, file)
    expect(logView(readOcelSqlite(file, UTC))).toEqual({ eventTypes: [], objectTypes: [], events: [], objects: [] })
  })

  it('replaces an existing file with the complete new one', () => {
    const file = join(dir, 'out.sqlite')
    writeFileSync(file, 'old')
    writeOcelSqlite(smallDoc(), file)
    expect(readOcelSqlite(file, UTC).events.map((e) => e.id)).toEqual(['e1', 'e2'])
    expect(readdirSync(dir)).toEqual(['out.sqlite'])
  })

  it('refuses an attribute named like a reserved column, leaving the old file and no partial file', () => {
    const file = join(dir, 'out.sqlite')
    writeFileSync(file, 'old')
    const doc = smallDoc()
    doc.eventTypes[0]?.attributes.push({ name: 'ocel_time', type: 'string' })
    expect(() => writeOcelSqlite(doc, file)).toThrow(
      'OCEL SQLite: event type "Create Order" has an attribute named "ocel_time", a column the standard reserves',
    )
    expect([readdirSync(dir), readFileSync(file, 'utf8')]).toEqual([['out.sqlite'], 'old'])
  })

  it('gives types whose names have no letters or digits left unique table names', () => {
    const file = join(dir, 'out.sqlite')
    const doc: OcelJsonStrict = {
      eventTypes: [
        { name: '客户', attributes: [] },
        { name: '✓', attributes: [] },
        { name: 'A B', attributes: [] },
        { name: 'ab', attributes: [] },
      ],
      objectTypes: [{ name: 'o', attributes: [] }],
      events: [],
      objects: [],
    }
    writeOcelSqlite(doc, file)
    const db = new Database(file, { readonly: true })
    expect(db.prepare('SELECT ocel_type_map FROM event_map_type ORDER BY rowid').all()).toEqual([
      { ocel_type_map: 'type1' },
      { ocel_type_map: 'type2' },
      { ocel_type_map: 'AB' },
      { ocel_type_map: 'ab2' },
    ])
    db.close()
    expect(logView(readOcelSqlite(file, UTC)).eventTypes.map((t) => t.name)).toEqual(['A B', 'ab', '✓', '客户'])
  })
})

describe('sqliteValue', () => {
  it('stores values that read as their declared type typed, and anything else as the text it is', () => {
    expect([
      sqliteValue('42', 'integer'),
      sqliteValue('4.5', 'integer'),
      sqliteValue('12.25', 'float'),
      sqliteValue('', 'float'),
      sqliteValue('true', 'boolean'),
      sqliteValue('false', 'boolean'),
      sqliteValue('yes', 'boolean'),
      sqliteValue('007', 'string'),
    ]).toEqual([42, '4.5', 12.25, '', 1, 0, 'yes', '007'])
  })
})

describe('writeOcelForm', () => {
  it('refuses to write SQLite without a file', () => {
    expect(() => writeOcelForm(smallDoc(), 'sqlite', undefined)).toThrow('--format sqlite writes a binary file: give it with --out FILE')
  })

  it('writes the XML form to a file, atomically', () => {
    const file = join(dir, 'out.xmlocel')
    writeOcelForm(smallDoc(), 'xml', file)
    expect([readdirSync(dir), readFileSync(file, 'utf8')]).toEqual([['out.xmlocel'], toOcelXml(smallDoc())])
    expect(existsSync(`${file}.partial-${String(process.pid)}`)).toBe(false)
  })
})
