/**
 * The OCEL 2.0 readers (src/ocel/import/read*.ts) on the generated log (every form), on the real
 * logs of the shared folder (skipped when absent) and on small documents with the quirks of real
 * files. The same log in two forms must read the same.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OcelReadError, type OcelLog, typedValue } from '../../src/ocel/import/model.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { readOcelJson } from '../../src/ocel/import/read-json.js'
import { readOcelXml } from '../../src/ocel/import/read-xml.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { writeOcelSqlite } from '../../src/ocel/write-sqlite.js'
import { toOcelXml } from '../../src/ocel/write-xml.js'
import { describeWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel, type GeneratedOcelFiles } from '../helpers/generated-ocel.js'

const DATA = OCEL_DIR
const utc = parseTimeZone('UTC')
const cet = parseTimeZone('+01:00')
const tmp = mkdtempSync(join(tmpdir(), 'ocelog-read-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

/** The log without reader notes, events and objects sorted by id and relationships by target: for comparing two forms. */
function comparable(log: OcelLog) {
  const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const rels = (r: { objectId: string; qualifier: string | null }[]) =>
    [...r].sort((a, b) => (a.objectId + (a.qualifier ?? '') < b.objectId + (b.qualifier ?? '') ? -1 : 1))
  return {
    events: [...log.events].sort(byId).map((e) => ({ ...e, relationships: rels(e.relationships) })),
    objects: [...log.objects].sort(byId).map((o) => ({
      ...o,
      attributes: [...o.attributes].sort((a, b) => a.time - b.time || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      relationships: rels(o.relationships),
    })),
  }
}

function counts(log: OcelLog) {
  return {
    events: log.events.length,
    objects: log.objects.length,
    eventTypes: log.eventTypes.length,
    objectTypes: log.objectTypes.length,
    e2o: log.events.reduce((n, e) => n + e.relationships.length, 0),
    o2o: log.objects.reduce((n, o) => n + o.relationships.length, 0),
  }
}

/** The declared types, sorted by name: for comparing two forms. */
function declared(log: OcelLog) {
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  return { eventTypes: [...log.eventTypes].sort(byName), objectTypes: [...log.objectTypes].sort(byName) }
}

describe('readOcelFile on the generated log', () => {
  let files: GeneratedOcelFiles
  let json: OcelLog
  beforeAll(() => {
    files = writeGeneratedOcel(tmp)
    json = readOcelFile(files.json, utc)
  })
  const event = (log: OcelLog, id: string) => log.events.find((e) => e.id === id)
  const object = (log: OcelLog, id: string) => log.objects.find((o) => o.id === id)

  it('reads the JSON form with its counts, its declared but unused types and its timestamp notes', () => {
    expect(json.format).toBe('json')
    expect(counts(json)).toEqual({ events: 8, objects: 57, eventTypes: 5, objectTypes: 4, e2o: 110, o2o: 3 })
    expect(json.eventTypes.map((t) => t.name).filter((name) => !json.events.some((e) => e.type === name))).toEqual(['cancel order'])
    expect(json.objectTypes.map((t) => t.name).filter((name) => !json.objects.some((o) => o.type === name))).toEqual(['warehouse'])
    expect(json.notes).toEqual({ timezone: 'UTC', naiveTimestamps: 4, truncatedTimestamps: 1, unreadable: {} })
  })

  it('reads times with Z, with offsets, cut below the millisecond, and without a zone in the given zone', () => {
    const times = (log: OcelLog) => ['e1', 'e2', 'e3', 'e4', 'e6', 'e7', 'e8'].map((id) => event(log, id)?.time)
    const utcTimes = [
      Date.UTC(2024, 2, 1, 8), // 09:00+01:00
      Date.UTC(2024, 2, 1, 15, 0, 0, 123), // 09:30:00.123456-05:30
      Date.UTC(2024, 2, 1, 11), // 2024-03-01 11:00:00, no zone
      Date.UTC(2024, 2, 2, 7), // Z
      Date.UTC(2024, 2, 2, 10), // +00:00
      Date.UTC(2024, 2, 3), // 2024-03-03T00:00:00, no zone
      Date.UTC(2024, 2, 4, 12), // 2024-03-04 12:00:00, no zone
    ]
    expect(times(json)).toEqual(utcTimes)
    const hour = 3_600_000
    expect(times(readOcelFile(files.json, cet))).toEqual(utcTimes.map((t, i) => ([2, 5, 6].includes(i) ? t - hour : t)))
  })

  it('reads unicode type names, ids, attribute names and values, qualifiers, and "" as no qualifier', () => {
    expect(event(json, 'e3')).toEqual({
      id: 'e3',
      type: 'Bestellung prüfen ✓',
      time: Date.UTC(2024, 2, 1, 11),
      attributes: { prüfer: 'Jürgen' },
      relationships: [{ objectId: 'o-1', qualifier: 'geprüft' }],
    })
    expect(event(json, 'e2')?.relationships).toEqual([
      { objectId: 'o-2', qualifier: null },
      { objectId: '😀-2', qualifier: 'customer' },
    ])
    expect(event(json, 'e8')?.attributes).toEqual({ channel: 'app 📱', lines: 1 })
    expect(object(json, '客户-1')).toEqual({
      id: '客户-1',
      type: 'Kunde 客户',
      attributes: [
        { name: 'name', time: 0, value: 'Zoë Müller & Söhne <GmbH> "Ost"' },
        { name: 'größe', time: 0, value: 'XL' },
      ],
      relationships: [],
    })
  })

  it('reads an object attribute history: initial values at the epoch, then each change at its time', () => {
    expect(object(json, 'o-1')?.attributes).toEqual([
      { name: 'status', time: 0, value: 'open' },
      { name: 'total', time: 0, value: 10.5 },
      { name: 'lines', time: 0, value: 2 },
      { name: 'total', time: Date.UTC(2024, 2, 1, 10), value: 12.25 },
      { name: 'status', time: Date.UTC(2024, 2, 2, 10, 30), value: 'paid' },
      { name: 'status', time: Date.UTC(2024, 2, 3, 8), value: 'shipped' },
    ])
  })

  it('keeps references to undefined objects and the event with 51 objects, for the import plan to count', () => {
    expect(event(json, 'e1')?.relationships.map((r) => r.objectId)).toEqual(['o-1', '客户-1', 'ghost-1'])
    expect(event(json, 'e7')?.relationships).toEqual([{ objectId: 'ghost-2', qualifier: null }])
    expect([event(json, 'e4')?.relationships.length, event(json, 'e5')?.relationships.length]).toEqual([50, 51])
    expect(object(json, 'o-1')?.relationships).toEqual([
      { objectId: '客户-1', qualifier: 'placed by' },
      { objectId: 'ghost-order', qualifier: null },
    ])
  })

  it('reads the XML form as the same log: values typed by their declarations, escaped characters restored', () => {
    const xml = readOcelFile(files.xml, utc)
    expect(xml.format).toBe('xml')
    expect(xml.notes).toEqual({ timezone: 'UTC', naiveTimestamps: 4, truncatedTimestamps: 1, unreadable: {} })
    expect(declared(xml)).toEqual(declared(json))
    expect(comparable(xml)).toEqual(comparable(json))
  })

  it('reads the SQLite form as the same log, its zoneless initial rows at the epoch in UTC', () => {
    const sqlite = readOcelFile(files.sqlite, utc)
    expect(sqlite.format).toBe('sqlite')
    expect(sqlite.notes).toEqual({ timezone: 'UTC', naiveTimestamps: 58, truncatedTimestamps: 1, unreadable: {} })
    expect(declared(sqlite)).toEqual(declared(json))
    expect(comparable(sqlite)).toEqual(comparable(json))
  })
})

describeWithSharedOcel('readOcelFile on the pm4py/ocpa ocel20_example', () => {
  let json: OcelLog
  beforeAll(() => {
    json = readOcelFile(join(DATA, 'raw/pm4py__ocel20_example.jsonocel'), utc)
  })

  it('reads the JSON form with the counts of SOURCES.md', () => {
    expect(json.format).toBe('json')
    expect(counts(json)).toEqual({ events: 13, objects: 9, eventTypes: 8, objectTypes: 4, e2o: 20, o2o: 7 })
    expect(json.notes.naiveTimestamps).toBe(0)
  })

  it('reads an event with its time, attributes and qualified E2O', () => {
    expect(json.events[0]).toEqual({
      id: 'e1',
      type: 'Create Purchase Requisition',
      time: Date.UTC(2022, 0, 9, 14, 0, 0),
      attributes: { pr_creator: 'Mike' },
      relationships: [{ objectId: 'PR1', qualifier: 'Regular placement of PR' }],
    })
  })

  it('reads an object attribute history with its times', () => {
    expect(json.objects.find((o) => o.id === 'R3')?.attributes).toEqual([
      { name: 'is_blocked', time: 0, value: 'No' },
      { name: 'is_blocked', time: Date.UTC(2022, 1, 3, 6, 30), value: 'Yes' },
      { name: 'is_blocked', time: Date.UTC(2022, 1, 3, 22, 30), value: 'No' },
    ])
  })

  it('reads the XML form, whose times have no zone and are one hour ahead, as the same log in +01:00', () => {
    const xml = readOcelFile(join(DATA, 'raw/ocpa__ocel20_example.xmlocel'), cet)
    expect(xml.format).toBe('xml')
    expect(xml.notes.naiveTimestamps).toBe(16)
    expect(comparable(xml)).toEqual(comparable(json))
  })

  it('reads the SQLite form the same way in +01:00 (its 1970-01-01 01:00:00 is the epoch)', () => {
    const sqlite = readOcelFile(join(DATA, 'raw/ocpa__ocel20_example.sqlite'), cet)
    expect(sqlite.format).toBe('sqlite')
    expect(comparable(sqlite)).toEqual(comparable(json))
  })

  it('reads naive timestamps in UTC by default, so the XML events are an hour later than the JSON ones', () => {
    const xml = readOcelFile(join(DATA, 'raw/ocpa__ocel20_example.xmlocel'), utc)
    expect((xml.events[0]?.time ?? 0) - (json.events[0]?.time ?? 0)).toBe(3_600_000)
  })
})

describeWithSharedOcel('readOcelFile on the running example and the pallet log', () => {
  let cached: OcelLog | null = null
  const runningSqlite = () => (cached ??= readOcelFile(join(DATA, 'raw/ocpa__running-example.sqlite'), utc))

  it('reads the running example from SQLite exactly as its JSON conversion', () => {
    const sqlite = runningSqlite()
    const json = readOcelFile(join(DATA, 'derived/ocpa__running-example.ocel2.json'), utc)
    expect(counts(sqlite)).toEqual({ events: 18_211, objects: 10_031, eventTypes: 11, objectTypes: 6, e2o: 35_857, o2o: 25_336 })
    expect(sqlite.notes.naiveTimestamps).toBeGreaterThan(28_000)
    expect(comparable(sqlite)).toEqual(comparable(json))
  })

  it('reads item ids stored as INTEGER as the same text ids the E2O rows use', () => {
    const item = runningSqlite().objects.find((o) => o.id === '880001')
    expect(item?.type).toBe('items')
    expect(item?.attributes).toEqual([
      { name: 'weight', time: 3_600_000, value: 0.98 },
      { name: 'price', time: 3_600_000, value: 129.99 },
    ])
  })

  it('reads the price changes of a product as its attribute history (ocel_changed_field)', () => {
    const prices = runningSqlite()
      .objects.find((o) => o.id === 'iPad Pro')
      ?.attributes.filter((a) => a.name === 'price')
    expect(prices?.map((p) => p.value)).toEqual([1099, 1113.51, 1137.25, 1159.23, 1208.36, 1248.47, 1278.47])
  })

  it('reads the pallet log from SQLite exactly as its JSON conversion', () => {
    const sqlite = readOcelFile(join(DATA, 'raw/ocelescope__pallet-logistics-v0.9.sqlite'), utc)
    const json = readOcelFile(join(DATA, 'derived/ocelescope__pallet-logistics-v0.9.ocel2.json'), utc)
    expect(counts(sqlite)).toEqual({ events: 14, objects: 11, eventTypes: 5, objectTypes: 4, e2o: 29, o2o: 0 })
    expect(comparable(sqlite)).toEqual(comparable(json))
  })
})

describe('readOcelJson', () => {
  it('tolerates numbers for ids and qualifiers, missing arrays, naive times and attributes without time', () => {
    const log = readOcelJson(
      JSON.stringify({
        events: [
          {
            id: 7,
            type: 'pay',
            time: '2024-01-01 10:00:00',
            relationships: [
              { objectId: 42, qualifier: 1 },
              { objectId: 'b', qualifier: '' },
            ],
          },
        ],
        objects: [{ id: 42, type: 'order', attributes: [{ name: 'total', value: 9.5 }] }],
      }),
      utc,
    )
    expect(log.events).toEqual([
      {
        id: '7',
        type: 'pay',
        time: Date.UTC(2024, 0, 1, 10),
        attributes: {},
        relationships: [
          { objectId: '42', qualifier: '1' },
          { objectId: 'b', qualifier: null },
        ],
      },
    ])
    expect(log.objects).toEqual([{ id: '42', type: 'order', attributes: [{ name: 'total', time: 0, value: 9.5 }], relationships: [] }])
    expect(log.eventTypes).toEqual([])
    expect(log.notes.naiveTimestamps).toBe(1)
  })

  it('counts events with an unreadable time instead of failing', () => {
    const log = readOcelJson(JSON.stringify({ events: [{ id: 'e1', type: 'x', time: 'soon' }], objects: [] }), utc)
    expect(log.events).toEqual([])
    expect(log.notes.unreadable).toEqual({ event_unreadable_time: { count: 1, examples: ['e1 (soon)'] } })
  })

  it("types text values by their declaration, as the standard's schema writes them (and Ocelog's export), and keeps typed ones", () => {
    const doc = {
      eventTypes: [
        {
          name: 'pay',
          attributes: [
            { name: 'amount', type: 'float' },
            { name: 'lines', type: 'integer' },
            { name: 'paid', type: 'boolean' },
            { name: 'code', type: 'string' },
            { name: 'odd', type: 'integer' },
          ],
        },
      ],
      objectTypes: [{ name: 'order', attributes: [{ name: 'total', type: 'float' }] }],
      events: [
        {
          id: 'e1',
          type: 'pay',
          time: '2024-01-01T00:00:00Z',
          attributes: [
            { name: 'amount', value: '12.50' },
            { name: 'lines', value: '2' },
            { name: 'paid', value: 'true' },
            { name: 'code', value: '007' },
            { name: 'odd', value: 'two' },
            { name: 'undeclared', value: '3' },
          ],
        },
        {
          id: 'e2',
          type: 'pay',
          time: '2024-01-01T00:00:00Z',
          attributes: [
            { name: 'amount', value: 4 },
            { name: 'paid', value: false },
          ],
        },
      ],
      objects: [
        {
          id: 'o1',
          type: 'order',
          attributes: [
            { name: 'total', value: '12.5', time: '2024-01-01T00:00:00Z' },
            { name: 'total', value: null, time: '2024-01-02T00:00:00Z' },
          ],
        },
      ],
    }
    const log = readOcelJson(JSON.stringify(doc), utc)
    // Text that does not read as its declared type, and attributes nothing declares, stay text.
    expect(log.events.map((e) => e.attributes)).toEqual([
      { amount: 12.5, lines: 2, paid: true, code: '007', odd: 'two', undeclared: '3' },
      { amount: 4, paid: false },
    ])
    expect(log.objects[0]?.attributes.map((a) => a.value)).toEqual([12.5, null])
  })

  it('refuses OCEL 1.0 JSON with a message that says so', () => {
    expect(() => readOcelJson(JSON.stringify({ 'ocel:global-log': {}, 'ocel:events': {} }), utc)).toThrow(/OCEL 1\.0/)
  })
})

describe('readOcelXml', () => {
  it('types attribute values by their declaration', () => {
    expect([
      typedValue('42', 'integer'),
      typedValue('4.5', 'float'),
      typedValue('true', 'boolean'),
      typedValue('42', 'string'),
      typedValue('x', 'integer'),
    ]).toEqual([42, 4.5, true, '42', 'x'])
  })

  it('refuses a document without <log>', () => {
    expect(() => readOcelXml('<other/>', utc)).toThrow(OcelReadError)
  })
})

describe('readOcelSqlite', () => {
  it('reads 0 and 1 of a column declared BOOLEAN as false and true, and other columns as SQLite gives them', () => {
    const path = join(tmp, 'booleans.sqlite')
    const db = new Database(path)
    db.exec(`
      CREATE TABLE event (ocel_id TEXT, ocel_type TEXT);
      CREATE TABLE object (ocel_id TEXT, ocel_type TEXT);
      CREATE TABLE event_object (ocel_event_id TEXT, ocel_object_id TEXT, ocel_qualifier TEXT);
      CREATE TABLE event_check (ocel_id TEXT, ocel_time TIMESTAMP, ok BOOLEAN, n INTEGER);
      CREATE TABLE object_order (ocel_id TEXT, ocel_time TIMESTAMP, ocel_changed_field TEXT, express BOOLEAN);
      INSERT INTO event VALUES ('e1', 'check'), ('e2', 'check');
      INSERT INTO object VALUES ('o1', 'order');
      INSERT INTO event_object VALUES ('e1', 'o1', 'q'), ('e2', 'o1', 'q');
      INSERT INTO event_check VALUES ('e1', '2024-01-01T00:00:00Z', 1, 1), ('e2', '2024-01-02T00:00:00Z', 0, 0);
      INSERT INTO object_order VALUES ('o1', '2024-01-01T00:00:00Z', NULL, 1), ('o1', '2024-01-02T00:00:00Z', 'express', 0);
    `)
    db.close()
    const log = readOcelFile(path, utc)
    expect(log.events.map((e) => e.attributes)).toEqual([
      { ok: true, n: 1 },
      { ok: false, n: 0 },
    ])
    expect(log.objects[0]?.attributes.map((a) => a.value)).toEqual([true, false])
  })
})

describe('readOcelFile', () => {
  it('reads the form from the content and refuses an extension that contradicts it', () => {
    const path = join(tmp, 'log.xml')
    writeFileSync(path, '{"events": [], "objects": []}')
    expect(() => readOcelFile(path, utc)).toThrow(/extension \.xml says xml, but the content is json/)
  })

  it('refuses a file that is none of the three forms', () => {
    const path = join(tmp, 'notes.txt')
    writeFileSync(path, 'hello')
    expect(() => readOcelFile(path, utc)).toThrow(/not an OCEL 2\.0 log in JSON, SQLite or XML form/)
  })
})

describe('attributes named like Object.prototype members', () => {
  /** A log whose event and object attributes are named `__proto__` and `constructor`. */
  const doc = {
    eventTypes: [
      {
        name: 'Create',
        attributes: [
          { name: '__proto__', type: 'string' },
          { name: 'constructor', type: 'string' },
        ],
      },
    ],
    objectTypes: [{ name: 'order', attributes: [{ name: '__proto__', type: 'string' }] }],
    events: [
      {
        id: 'e1',
        type: 'Create',
        time: '2024-01-01T00:00:00.000Z',
        attributes: [
          { name: '__proto__', value: 'p' },
          { name: 'constructor', value: 'c' },
        ],
        relationships: [{ objectId: 'o1', qualifier: '' }],
      },
    ],
    objects: [{ id: 'o1', type: 'order', attributes: [{ name: '__proto__', time: '2024-01-01T00:00:00.000Z', value: 'v' }], relationships: [] }],
  }
  const read: [string, () => OcelLog][] = [
    ['JSON', () => readOcelJson(JSON.stringify(doc), utc)],
    ['XML', () => readOcelXml(toOcelXml(doc), utc)],
    [
      'SQLite',
      () => {
        const file = join(tmp, 'proto.sqlite')
        writeOcelSqlite(doc, file)
        return readOcelFile(file, utc)
      },
    ],
  ]

  it.each(read)('keeps them as plain attributes when reading the %s form', (_form, readLog) => {
    const log = readLog()
    const attributes = log.events[0]?.attributes ?? {}
    expect([Object.keys(attributes), Object.getPrototypeOf(attributes) === Object.prototype]).toEqual([['__proto__', 'constructor'], true])
    expect(JSON.stringify(attributes)).toBe('{"__proto__":"p","constructor":"c"}')
    expect(log.objects[0]?.attributes.map((a) => [a.name, a.value])).toEqual([['__proto__', 'v']])
  })

  it('plans them as properties of the event and of the upsert', () => {
    const plan = planImport(readOcelJson(JSON.stringify(doc), utc))
    const items = plan.batches.flatMap((b) => b.items.map((i) => JSON.stringify(i.properties ?? null)))
    expect(items.sort()).toEqual(['{"__proto__":"p","constructor":"c"}', '{"__proto__":"v"}'])
    expect(plan.skipped).toEqual({})
  })
})
