/**
 * Integration: records appended through Ingest to a real SQLite file, projected, exported as OCEL
 * 2.0 JSON and validated against Ocelog's strict OCEL 2.0 schema, and with ajv against the
 * standard's JSON schema (pm4py schema_ocel2.json, from the shared folder: skipped when absent).
 * The generated log goes through the import plan; the official example (shared) directly.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { Compile } from 'typebox/compile'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { Ingest } from '../../src/write/ingest.js'
import type { RecordContext } from '../../src/core/records.js'
import { exportOcel } from '../../src/ocel/export.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { OcelJsonStrict, type OcelJson } from '../../src/ocel/ocel-json.js'
import { describeWithSharedOcel, itWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'

const ajv = new Ajv({ strict: false, allErrors: true })
addFormatsModule.default(ajv)
let standardValidator: ValidateFunction | undefined
/** The standard's JSON schema compiled with ajv, read on first use (only tests with the shared logs call it). */
const validateOcel = (): ValidateFunction =>
  (standardValidator ??= ajv.compile(JSON.parse(readFileSync(join(OCEL_DIR, 'raw/pm4py__schema_ocel2.json'), 'utf8')) as object))
const strictSchema = Compile(OcelJsonStrict)

let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
let log: SqliteEventLog
let store: SqliteReadModelStore
let query: SqliteReadModelQuery
let keys: SqliteKeyStore
let ingest: Ingest

const ctx = (datasetId: string): RecordContext => ({ datasetId, keyId: 'k1', requestId: 'r1', receivedAt: new Date().toISOString() })

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-export-'))
  db = openDatabase(dir)
  rmDb = openReadModelsDatabase(dir).db
  log = new SqliteEventLog(db)
  store = new SqliteReadModelStore(rmDb)
  query = new SqliteReadModelQuery(rmDb)
  keys = new SqliteKeyStore(db)
  ingest = new Ingest(log)
  for (const id of ['ds1', 'ds2']) await keys.createDataset({ id, name: id, created_at: new Date().toISOString() })
})
afterEach(async () => {
  await log.close()
  db.close()
  rmDb.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A small order flow in ds1 (with an external id shared by two object types) and one event in ds2. */
async function seed(): Promise<void> {
  await ingest.upsertObjects([{ type: 'customer', id: 'c1', properties: { tier: 'silver', city: 'Oslo' } }], ctx('ds1'))
  await ingest.recordEvents(
    [
      {
        event: 'Create Order',
        timestamp: '2024-01-01T10:00:00Z',
        properties: { channel: 'web', lines: 2 },
        objects: [
          { type: 'order', id: 'o1', qualifier: 'target', properties: { amount: 10 } },
          { type: 'customer', id: 'c1', qualifier: 'payer' },
        ],
      },
      {
        event: 'Pay Order',
        timestamp: '2024-01-02T10:00:00+02:00',
        end_timestamp: '2024-01-02T10:05:00+02:00',
        objects: [
          { type: 'order', id: 'o1', properties: { amount: 12, paid: true } },
          { type: 'customer', id: 'c1' },
        ],
      },
      {
        event: 'Pick Item',
        timestamp: '2024-01-01T12:00:00Z',
        objects: [
          { type: 'item', id: 'o1', qualifier: 'picked' },
          { type: 'order', id: 'o1' },
        ],
      },
    ],
    ctx('ds1'),
  )
  await ingest.upsertObjects([{ type: 'customer', id: 'c1', properties: { tier: 'gold' } }], ctx('ds1'))
  await ingest.recordEvents([{ event: 'Other', objects: [{ type: 'order', id: 'x' }] }], ctx('ds2'))
}

/** The last value of each attribute in an object's history. */
function finalValues(doc: OcelJson, type: string, id: string): Record<string, string> {
  const o = doc.objects.find((x) => x.type === type && x.id === id)
  return Object.fromEntries((o?.attributes ?? []).map((a) => [a.name, a.value]))
}

describe('exportOcel on SQLite read models', () => {
  it("writes a document that passes Ocelog's strict OCEL 2.0 JSON schema", async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect([...strictSchema.Errors(doc)]).toEqual([])
  })

  itWithSharedOcel("writes a document that passes the standard's OCEL 2.0 JSON schema", async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    const validate = validateOcel()
    expect(validate(doc), ajv.errorsText(validate.errors)).toBe(true)
  })

  it("holds the dataset's events, objects and types, and nothing of other datasets", async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect({
      events: doc.events.map((e) => [e.type, e.time]),
      objects: doc.objects.map((o) => [o.type, o.id]),
      eventTypes: doc.eventTypes.map((t) => t.name),
      objectTypes: doc.objectTypes.map((t) => t.name),
    }).toEqual({
      events: [
        ['Create Order', '2024-01-01T10:00:00.000Z'],
        ['Pick Item', '2024-01-01T12:00:00.000Z'],
        ['Pay Order', '2024-01-02T08:00:00.000Z'],
      ],
      objects: [
        ['customer', 'c1'],
        ['item', 'item/o1'],
        ['order', 'order/o1'],
      ],
      eventTypes: ['Create Order', 'Pay Order', 'Pick Item'],
      objectTypes: ['customer', 'item', 'order'],
    })
  })

  it('ends every object history at the merged attribute values of the objects read model', async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect([finalValues(doc, 'customer', 'c1'), finalValues(doc, 'order', 'order/o1'), finalValues(doc, 'item', 'item/o1')]).toEqual([
      { tier: 'gold', city: 'Oslo' },
      { amount: '12', paid: 'true' },
      {},
    ])
  })

  it('writes E2O relationships with the sent qualifier, or "" when none was sent', async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect(doc.events.map((e) => [e.type, e.relationships])).toEqual([
      [
        'Create Order',
        [
          { objectId: 'c1', qualifier: 'payer' },
          { objectId: 'order/o1', qualifier: 'target' },
        ],
      ],
      [
        'Pick Item',
        [
          { objectId: 'item/o1', qualifier: 'picked' },
          { objectId: 'order/o1', qualifier: '' },
        ],
      ],
      [
        'Pay Order',
        [
          { objectId: 'c1', qualifier: '' },
          { objectId: 'order/o1', qualifier: '' },
        ],
      ],
    ])
  })

  it('writes event attributes as strings, with end_timestamp in UTC and typed declarations', async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect([doc.events[0]?.attributes, doc.events[2]?.attributes, doc.eventTypes, doc.objectTypes]).toEqual([
      [
        { name: 'channel', value: 'web' },
        { name: 'lines', value: '2' },
      ],
      [{ name: 'end_timestamp', value: '2024-01-02T08:05:00.000Z' }],
      [
        {
          name: 'Create Order',
          attributes: [
            { name: 'channel', type: 'string' },
            { name: 'lines', type: 'integer' },
          ],
        },
        { name: 'Pay Order', attributes: [{ name: 'end_timestamp', type: 'time' }] },
        { name: 'Pick Item', attributes: [] },
      ],
      [
        {
          name: 'customer',
          attributes: [
            { name: 'city', type: 'string' },
            { name: 'tier', type: 'string' },
          ],
        },
        { name: 'item', attributes: [] },
        {
          name: 'order',
          attributes: [
            { name: 'amount', type: 'integer' },
            { name: 'paid', type: 'boolean' },
          ],
        },
      ],
    ])
  })

  it('gives an identical document after a rebuild of the read models', async () => {
    await seed()
    const projector = new Projector(log, store)
    await projector.catchUp()
    const before = await exportOcel(query, 'ds1')
    await projector.rebuild()
    expect(await exportOcel(query, 'ds1')).toEqual(before)
  })

  it('gives numbers and booleans back as such after an export and an import: the values are text, typed by their declarations', async () => {
    await seed()
    await new Projector(log, store).catchUp()
    const file = join(dir, 'ds1.json')
    writeFileSync(file, JSON.stringify(await exportOcel(query, 'ds1')))
    for (const batch of planImport(readOcelFile(file, parseTimeZone('UTC'))).batches) {
      const { failures } = batch.kind === 'events' ? await ingest.recordEvents(batch.items, ctx('ds2')) : await ingest.upsertObjects(batch.items, ctx('ds2'))
      expect(failures).toEqual([])
    }
    await new Projector(log, store).catchUp()
    // The export names order o1 `order/o1`, since an item has the id o1 too (exportedIds).
    const properties = async (dataset: string, orderId: string) => {
      const page = await query.events(dataset, { limit: 100 })
      const events = page.events.filter((e) => e.event_type !== 'Other').map((e) => [e.event_type, e.properties])
      const order = await query.object(dataset, 'order', orderId, 10)
      const customer = await query.object(dataset, 'customer', 'c1', 10)
      return { events, order: order?.object.attributes, customer: customer?.object.attributes }
    }
    const original = await properties('ds1', 'o1')
    expect(original.events).toContainEqual(['Create Order', { channel: 'web', lines: 2 }])
    expect(original.order).toEqual({ amount: 12, paid: true })
    expect(original.customer).toEqual({ tier: 'gold', city: 'Oslo' })
    expect(await properties('ds2', 'order/o1')).toEqual(original)
  })

  it('writes an event of year 0050, which the API accepts, so that the import reads it back as year 0050', async () => {
    const old = { event: 'Found Order', timestamp: '0050-06-01T12:00:00+01:00', objects: [{ type: 'order', id: 'roman' }] }
    expect((await ingest.recordEvents([old], ctx('ds1'))).failures).toEqual([])
    await new Projector(log, store).catchUp()
    const doc = await exportOcel(query, 'ds1')
    expect(doc.events.map((e) => e.time)).toEqual(['0050-06-01T11:00:00.000Z'])
    // The exported document, read by the importer and sent to another dataset, gives the same instant.
    const file = join(dir, 'year-50.json')
    writeFileSync(file, JSON.stringify(doc))
    for (const batch of planImport(readOcelFile(file, parseTimeZone('UTC'))).batches) {
      const { failures } = batch.kind === 'events' ? await ingest.recordEvents(batch.items, ctx('ds2')) : await ingest.upsertObjects(batch.items, ctx('ds2'))
      expect(failures).toEqual([])
    }
    await new Projector(log, store).catchUp()
    expect((await exportOcel(query, 'ds2')).events.map((e) => [e.type, e.time])).toEqual([['Found Order', '0050-06-01T11:00:00.000Z']])
  })
})

describe("exportOcel of the generated log sent through the API core in the import plan's order", () => {
  /** Reads the generated JSON form, sends its import plan batch by batch, projects and exports. */
  async function send() {
    const tmp = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
    const source = readOcelFile(writeGeneratedOcel(tmp).json, parseTimeZone('UTC'))
    rmSync(tmp, { recursive: true, force: true })
    for (const batch of planImport(source).batches) {
      const { failures } = batch.kind === 'events' ? await ingest.recordEvents(batch.items, ctx('ds1')) : await ingest.upsertObjects(batch.items, ctx('ds1'))
      expect(failures).toEqual([])
    }
    await new Projector(log, store).catchUp()
    return { source, doc: await exportOcel(query, 'ds1') }
  }

  it('gives back every event, O2O relationship, attribute value with its time and final value, modulo the counted skips', async () => {
    const { source, doc } = await send()
    expect(diffViews(expectedView(source), exportedView(doc))).toEqual([])
    // 8 events but the one with 51 objects; 57 objects and the 3 it references (2 by E2O, 1 by O2O) but never defines.
    expect([doc.events.length, doc.objects.length]).toEqual([7, 60])
    expect(doc.objects.find((o) => o.id === 'o-1')?.relationships).toEqual([
      { objectId: 'ghost-order', qualifier: '' },
      { objectId: '客户-1', qualifier: 'placed by' },
    ])
  })

  it('keeps unicode, offsets converted to UTC, qualifiers and the latest attribute values', async () => {
    const { doc } = await send()
    expect(doc.events.find((e) => e.type === 'Bestellung prüfen ✓')).toMatchObject({
      time: '2024-03-01T11:00:00.000Z',
      attributes: [{ name: 'prüfer', value: 'Jürgen' }],
      relationships: [{ objectId: 'o-1', qualifier: 'geprüft' }],
    })
    expect(doc.events.map((e) => e.time).slice(0, 2)).toEqual(['2024-03-01T08:00:00.000Z', '2024-03-01T11:00:00.000Z'])
    expect([finalValues(doc, 'order', 'o-1'), finalValues(doc, 'Kunde 客户', '客户-1')]).toEqual([
      { status: 'shipped', total: '12.25', lines: '2' },
      { name: 'Zoë Müller & Söhne <GmbH> "Ost"', größe: 'XL' },
    ])
    expect(doc.events.find((e) => e.relationships.length === 50)?.relationships.filter((r) => r.qualifier === 'packed')).toHaveLength(49)
  })

  it("passes Ocelog's strict OCEL 2.0 JSON schema", async () => {
    const { doc } = await send()
    expect([...strictSchema.Errors(doc)]).toEqual([])
  })
})

describeWithSharedOcel('exportOcel of the official OCEL 2.0 example sent through the API core', () => {
  let source: OcelJson
  beforeEach(() => {
    source = JSON.parse(readFileSync(join(OCEL_DIR, 'raw/pm4py__ocel20_example.jsonocel'), 'utf8')) as OcelJson
  })

  /** Sends every object (its attribute history as upserts, in time order) and every event. */
  async function send(): Promise<OcelJsonStrict> {
    const typeOf = new Map(source.objects.map((o) => [o.id, o.type]))
    for (const o of source.objects) {
      const history = [...(o.attributes ?? [])].sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
      const items = history.length === 0 ? [{ type: o.type, id: o.id }] : history.map((a) => ({ type: o.type, id: o.id, properties: { [a.name]: a.value } }))
      for (const item of items) await ingest.upsertObjects([item], ctx('ds1'))
    }
    const events = source.events.map((e) => ({
      event: e.type,
      timestamp: e.time,
      properties: Object.fromEntries((e.attributes ?? []).map((a) => [a.name, a.value])),
      objects: (e.relationships ?? []).map((r) => ({ type: typeOf.get(r.objectId) ?? 'unknown', id: r.objectId, qualifier: r.qualifier })),
    }))
    const { failures } = await ingest.recordEvents(events, ctx('ds1'))
    expect(failures).toEqual([])
    await new Projector(log, store).catchUp()
    return exportOcel(query, 'ds1')
  }

  const byObjectThenQualifier = (a: { objectId: string; qualifier: string }, b: { objectId: string; qualifier: string }) =>
    a.objectId === b.objectId ? (a.qualifier < b.qualifier ? -1 : 1) : a.objectId < b.objectId ? -1 : 1

  it('keeps every event: type, time, attributes and E2O relationships', async () => {
    const doc = await send()
    const normalise = (e: OcelJson['events'][number]) => ({
      type: e.type,
      time: new Date(e.time).toISOString(),
      attributes: e.attributes ?? [],
      relationships: [...(e.relationships ?? [])].sort(byObjectThenQualifier),
    })
    expect(doc.events.map(normalise)).toEqual(source.events.map(normalise))
  })

  it('keeps every object with its latest attribute values', async () => {
    const doc = await send()
    const latest = (o: OcelJson['objects'][number]) => {
      const values: Record<string, string> = {}
      for (const a of [...(o.attributes ?? [])].sort((x, y) => Date.parse(x.time) - Date.parse(y.time))) values[a.name] = a.value
      return [o.type, o.id, values]
    }
    const exported = doc.objects.map((o) => [o.type, o.id, finalValues(doc, o.type, o.id)])
    expect(exported).toEqual(source.objects.map(latest).sort((a, b) => (String(a[0]) + a[1] < String(b[0]) + b[1] ? -1 : 1)))
  })

  it('passes the OCEL 2.0 JSON schema', async () => {
    const doc = await send()
    const validate = validateOcel()
    expect(validate(doc), ajv.errorsText(validate.errors)).toBe(true)
  })
})
