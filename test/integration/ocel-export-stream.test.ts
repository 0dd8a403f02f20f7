/**
 * Integration: the streamed export (src/ocel/export-writer.ts) over a real SQLite read-model file
 * writes, in each form, exactly what the whole-document writers write for the same dataset: JSON
 * (compact and indented) byte for byte as JSON.stringify, XML byte for byte as toOcelXml, SQLite with
 * the same rows as writeOcelSqlite. And the document is the one the whole-rows mapping (toOcelJson)
 * makes, also where several object types share ids (written `type/id`, merged into the object order);
 * and on SQLite it reads one snapshot of the read models while a projector applies more.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { compareUtf8, exportOcel, type ExportRows, streamOcel, toOcelJson } from '../../src/ocel/export.js'
import { exportOcelForm } from '../../src/ocel/export-writer.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { writeOcelSqlite } from '../../src/ocel/write-sqlite.js'
import { toOcelXml } from '../../src/ocel/write-xml.js'
import type { ReadModelQuery } from '../../src/ports/read-model-query.js'
import { Projector } from '../../src/projector/runner.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let f: SqliteFixture
let query: SqliteReadModelQuery
let out: string

const ctx = (datasetId: string) => ({ datasetId, keyId: 'k1', requestId: 'r1', receivedAt: '2024-06-01T00:00:00.000Z' })

beforeAll(async () => {
  f = openSqliteFixture('ocelog-export-stream-')
  out = mkdtempSync(join(tmpdir(), 'ocelog-export-stream-out-'))
  const keys = new SqliteKeyStore(f.db)
  for (const id of ['generated', 'shared', 'empty']) await keys.createDataset({ id, name: id, created_at: '2024-06-01T00:00:00.000Z' })

  const files = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
  for (const batch of planImport(readOcelFile(writeGeneratedOcel(files).json, parseTimeZone('UTC'))).batches) {
    const { failures } =
      batch.kind === 'events' ? await f.ingest.recordEvents(batch.items, ctx('generated')) : await f.ingest.upsertObjects(batch.items, ctx('generated'))
    expect(failures).toEqual([])
  }
  rmSync(files, { recursive: true, force: true })

  // Ids that several object types use (written type/id), one `type/id` that is itself an object's id
  // (written as Ocelog's object_id), text beyond U+FFFF and in U+E000–U+FFFF, end times, O2O.
  const events = await f.ingest.recordEvents(
    [
      {
        event: 'Create',
        timestamp: '2024-05-01T10:00:00Z',
        end_timestamp: '2024-05-01T10:05:00Z',
        properties: { n: 1, price: 2.5, ok: true, note: null, tags: ['a'] },
        objects: [
          { type: 'order', id: '1', qualifier: 'creates' },
          { type: 'item', id: '1' },
          { type: 'customer', id: 'order/1' },
          { type: 'item', id: '\u{1F600}' },
          { type: 'item', id: '\uFF21' },
        ],
      },
      { event: 'Create', timestamp: '2024-05-01T11:00:00Z', properties: { n: 2.25, end_timestamp: 'x' }, objects: [{ type: 'order', id: '3' }] },
      {
        event: 'Ship',
        timestamp: '2024-05-01T09:00:00Z',
        objects: [
          { type: 'customer', id: '3', qualifier: 'to' },
          { type: 'item', id: 'zz' },
        ],
      },
    ],
    ctx('shared'),
  )
  expect(events.failures).toEqual([])
  const upserts = await f.ingest.upsertObjects(
    [
      {
        type: 'order',
        id: '1',
        timestamp: '2024-05-01T10:00:00Z',
        properties: { status: 'open', total: 3 },
        relationships: [
          { type: 'item', id: '1', qualifier: 'has' },
          { type: 'customer', id: 'order/1' },
        ],
      },
      { type: 'order', id: '1', timestamp: '2024-05-02T10:00:00Z', properties: { status: 'paid', total: 3.5 } },
      { type: 'item', id: 'zz', properties: { weight: 1 }, relationships: [{ type: 'order', id: '3' }] },
    ],
    ctx('shared'),
  )
  expect(upserts.failures).toEqual([])
  await new Projector(f.log, f.store).catchUp()
  query = new SqliteReadModelQuery(f.rmDb)
})
afterAll(async () => {
  await f.log.close()
  f.close()
  rmSync(out, { recursive: true, force: true })
})

/** Every read-model row of the dataset, read whole, as the export read them before it streamed. */
async function wholeRows(q: ReadModelQuery, datasetId: string): Promise<ExportRows> {
  const rows: { [K in Exclude<keyof ExportRows, 'declared'>]: ExportRows[K][number][] } = {
    eventTypes: await q.eventTypes(datasetId),
    objectTypes: await q.objectTypes(datasetId),
    objects: [],
    objectChanges: [],
    events: [],
    eventObjects: [],
    objectRelationships: [],
  }
  for (let page = await q.events(datasetId, { limit: 1000 }); ; page = await q.events(datasetId, { limit: 1000, after: page.next })) {
    for (const e of page.events) {
      rows.events.push(e)
      for (const l of e.objects) rows.eventObjects.push({ event_id: e.event_id, object_id: l.object_id, qualifier: l.qualifier })
    }
    if (page.next === null) break
  }
  for (let page = await q.objectHistories(datasetId, { limit: 1000 }); ; page = await q.objectHistories(datasetId, { limit: 1000, after: page.next })) {
    for (const o of page.objects) {
      rows.objects.push({ object_id: o.object_id, type: o.type, external_id: o.id })
      for (const c of o.changes) rows.objectChanges.push({ object_id: o.object_id, ...c })
      for (const r of o.relationships) rows.objectRelationships.push({ object_id: o.object_id, target_object_id: r.object_id, qualifier: r.qualifier })
    }
    if (page.next === null) break
  }
  return { ...rows, declared: await q.declaredTypes(datasetId) }
}

/** Every table of a SQLite file with its rows, sorted. */
function tables(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true })
  const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name)
  const dump = Object.fromEntries(names.map((n) => [n, (db.prepare(`SELECT * FROM "${n}"`).all() as unknown[]).map((r) => JSON.stringify(r)).sort()]))
  const schema = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
  db.close()
  return { ...dump, schema }
}

describe.each(['generated', 'shared', 'empty'])('the streamed export of the %s dataset', (datasetId) => {
  it('is the document the whole-rows mapping makes', async () => {
    const doc = await exportOcel(query, datasetId)
    expect(doc).toEqual(toOcelJson(await wholeRows(query, datasetId)))
    if (datasetId === 'shared') {
      // order 1 and item 1 share an id: order/1 and item/1; but order/1 is a customer's id, so both of those are written as Ocelog's object_id.
      const uuid = (type: string) => doc.objects.find((o) => o.type === type && /^[0-9a-f-]{36}$/.test(o.id))?.id ?? `no object_id of a ${type}`
      expect(doc.objects.map((o) => `${o.type} ${o.id}`)).toEqual(
        [
          `customer ${uuid('customer')}`,
          'customer customer/3',
          'item item/1',
          'item zz',
          'item \uFF21',
          'item \u{1F600}',
          `order ${uuid('order')}`,
          'order order/3',
        ].sort((a, b) => compareUtf8(a, b)),
      )
      expect(doc.events.find((e) => e.type === 'Ship')?.relationships).toEqual([
        { objectId: 'customer/3', qualifier: 'to' },
        { objectId: 'zz', qualifier: '' },
      ])
    }
  })

  it('writes JSON, indented JSON, XML and SQLite as the whole-document writers do, and leaves no scratch file', async () => {
    const doc = await exportOcel(query, datasetId)
    const file = (name: string) => join(out, `${datasetId}-${name}`)
    const summary = await exportOcelForm(query, datasetId, 'json', file('doc.json'))
    expect(readFileSync(file('doc.json'), 'utf8')).toBe(`${JSON.stringify(doc)}\n`)
    expect(summary).toEqual({
      events: doc.events.length,
      objects: doc.objects.length,
      eventTypes: doc.eventTypes.length,
      objectTypes: doc.objectTypes.length,
      relationships: doc.events.reduce((n, e) => n + e.relationships.length, 0),
      objectRelationships: doc.objects.reduce((n, o) => n + o.relationships.length, 0),
    })
    await exportOcelForm(query, datasetId, 'json', file('pretty.json'), { pretty: true })
    expect(readFileSync(file('pretty.json'), 'utf8')).toBe(`${JSON.stringify(doc, null, 2)}\n`)
    await exportOcelForm(query, datasetId, 'xml', file('doc.xml'))
    expect(readFileSync(file('doc.xml'), 'utf8')).toBe(toOcelXml(doc))
    await exportOcelForm(query, datasetId, 'sqlite', file('doc.sqlite'))
    writeOcelSqlite(doc, file('whole.sqlite'))
    expect(tables(file('doc.sqlite'))).toEqual(tables(file('whole.sqlite')))

    const stdout = new PassThrough()
    const chunks: Buffer[] = []
    stdout.on('data', (c: Buffer) => chunks.push(c))
    await exportOcelForm(query, datasetId, 'xml', undefined, { stdout })
    expect(Buffer.concat(chunks).toString('utf8')).toBe(toOcelXml(doc))
    expect(readdirSync(out).filter((n) => n.startsWith('.') || n.includes('.partial-'))).toEqual([])
  })
})

describe('the streamed export on SQLite', () => {
  it('reads one snapshot of the read models: what a projector applies while it runs is not in the document', async () => {
    const before = await exportOcel(query, 'shared')
    const asOf = await query.asOf()
    const writer = openReadModelsDatabase(f.dir).db
    let applied = false
    try {
      const doc = await query.consistentRead(async () => {
        expect(await query.asOf()).toBe(asOf)
        const events: string[] = []
        const objects: string[] = []
        await streamOcel(query, 'shared', {
          event: async (e) => {
            events.push(e.id)
            if (applied) return
            applied = true
            // Another connection (a projector elsewhere) records and applies a new event mid-export.
            const { failures } = await f.ingest.recordEvents(
              [{ event: 'Late', timestamp: '2024-05-03T08:00:00Z', objects: [{ type: 'order', id: 'late' }] }],
              ctx('shared'),
            )
            expect(failures).toEqual([])
            await new Projector(f.log, new SqliteReadModelStore(writer)).catchUp()
          },
          object: (o) => void objects.push(o.id),
        })
        expect(await query.asOf()).toBe(asOf)
        return { events, objects }
      })
      expect(doc).toEqual({ events: before.events.map((e) => e.id), objects: before.objects.map((o) => o.id) })
      expect(await query.asOf()).toBeGreaterThan(asOf)
      expect((await exportOcel(query, 'shared')).events.map((e) => e.type)).toContain('Late')
    } finally {
      writer.close()
    }
  })
})
