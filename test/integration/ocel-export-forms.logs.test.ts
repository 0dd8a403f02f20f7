/**
 * Integration: a log imported (the import plan's batches through the ingest core into a real SQLite
 * file, projected), exported, and written in the three OCEL 2.0 forms, is read back by our readers
 * to the same log from each form: events, E2O with qualifiers, objects, attribute values with their
 * times, declared types. The XML form is validated with xmllint against pm4py's XSD (or, for a log
 * whose types share an attribute name, against the XSD without its two attribute keyrefs, which
 * libxml2 cannot evaluate then). The generated log runs everywhere; the real logs need the shared
 * folder, and the XSD checks need it and xmllint.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { Ingest } from '../../src/write/ingest.js'
import { exportOcel } from '../../src/ocel/export.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { readOcelJson } from '../../src/ocel/import/read-json.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import { writeOcelSqlite } from '../../src/ocel/write-sqlite.js'
import { toOcelXml } from '../../src/ocel/write-xml.js'
import { describeWithSharedOcel, OCEL_DIR, SHARED_OCEL_PRESENT } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'
import { logView, relaxedXsd, sharesAttributeNames, toOcelDocument, XMLLINT_PRESENT, XMLLINT_SKIP_REASON, xmllint } from '../helpers/ocel-forms.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'

const UTC = parseTimeZone('UTC')

let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
let log: SqliteEventLog
let store: SqliteReadModelStore
let ingest: Ingest
let datasets = 0

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-export-forms-'))
  db = openDatabase(dir)
  rmDb = openReadModelsDatabase(dir).db
  log = new SqliteEventLog(db)
  store = new SqliteReadModelStore(rmDb)
  ingest = new Ingest(log)
})
afterAll(async () => {
  await log.close()
  db.close()
  rmDb.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Imports the log at `path` into a new dataset in the import plan's order, projects it, and exports it. */
async function importAndExport(path: string): Promise<OcelJsonStrict> {
  datasets += 1
  const datasetId = `ds${String(datasets)}`
  await new SqliteKeyStore(db).createDataset({ id: datasetId, name: datasetId, created_at: new Date().toISOString() })
  const source = readOcelFile(path, UTC)
  const ctx = { datasetId, keyId: 'k1', requestId: 'r1', receivedAt: new Date().toISOString() }
  for (const batch of planImport(source).batches) {
    const { failures } = batch.kind === 'events' ? await ingest.recordEvents(batch.items, ctx) : await ingest.upsertObjects(batch.items, ctx)
    expect(failures).toEqual([])
  }
  await new Projector(log, store).catchUp()
  const doc = await exportOcel(new SqliteReadModelQuery(rmDb), datasetId)
  expect(diffViews(expectedView(source), exportedView(doc))).toEqual([])
  return doc
}

/** Writes `doc` as XML and SQLite and checks that each reads back to the log of the JSON form; validates the XML when it can. */
function checkForms(name: string, doc: OcelJsonStrict): void {
  const json = logView(readOcelJson(JSON.stringify(doc), UTC))
  const xml = join(dir, `${name}.xmlocel`)
  writeFileSync(xml, toOcelXml(doc))
  expect(logView(readOcelFile(xml, UTC))).toEqual(json)
  const sqlite = join(dir, `${name}.sqlite`)
  writeOcelSqlite(doc, sqlite)
  expect(logView(readOcelFile(sqlite, UTC))).toEqual(json)

  if (!SHARED_OCEL_PRESENT || !XMLLINT_PRESENT) {
    console.info(`skip: XSD check of ${name}: ${XMLLINT_PRESENT ? 'the XSD is in the shared folder, which is absent' : XMLLINT_SKIP_REASON}`)
    return
  }
  const xsd = join(OCEL_DIR, 'raw/pm4py__ocel2-validation.xsd')
  if (sharesAttributeNames(doc)) {
    console.info(`${name}: two types share an attribute name; validating against the XSD without its attribute keyrefs`)
    expect(xmllint(xsd, xml).output).toContain('More than one match found')
    expect(xmllint(relaxedXsd(xsd, join(dir, 'relaxed.xsd')), xml)).toEqual({ valid: true, output: `${xml} validates\n` })
  } else {
    expect(xmllint(xsd, xml)).toEqual({ valid: true, output: `${xml} validates\n` })
  }
}

describe('the OCEL 2.0 forms of the exported generated log', () => {
  it('read back to the same log as the JSON export, in XML and in SQLite', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
    const doc = await importAndExport(writeGeneratedOcel(tmp).json)
    rmSync(tmp, { recursive: true, force: true })
    expect([doc.events.length, doc.objects.length]).toEqual([7, 60])
    checkForms('generated', doc)
  })
})

/**
 * Every shared log from every input form: the files it is published in, and the forms it is not
 * published in written by our own writers from the published file (`toOcelDocument`). Each import
 * gives back the whole log (events, E2O, O2O, attribute values with their times), and each export
 * reads back the same in JSON, XML and SQLite.
 */
describeWithSharedOcel('the OCEL 2.0 forms of the exported real logs, from every input form', () => {
  type Form = 'json' | 'xml' | 'sqlite'
  const LOGS: { name: string; files: Partial<Record<Form, string>>; events: number; o2o: number }[] = [
    {
      name: 'ocel20-example',
      files: { json: 'raw/pm4py__ocel20_example.jsonocel', xml: 'raw/ocpa__ocel20_example.xmlocel', sqlite: 'raw/ocpa__ocel20_example.sqlite' },
      events: 13,
      o2o: 7,
    },
    {
      name: 'ocelescope-pallet-logistics',
      files: { json: 'derived/ocelescope__pallet-logistics-v0.9.ocel2.json', sqlite: 'raw/ocelescope__pallet-logistics-v0.9.sqlite' },
      events: 14,
      o2o: 0,
    },
    { name: 'ocpa-logistics', files: { json: 'derived/ocpa__logistics.ocel2.json', sqlite: 'raw/ocpa__logistics.sqlite' }, events: 8727, o2o: 3960 },
    {
      name: 'ocpa-running-example',
      files: { json: 'derived/ocpa__running-example.ocel2.json', sqlite: 'raw/ocpa__running-example.sqlite' },
      events: 18_211,
      o2o: 25_336,
    },
  ]

  /** The file of `log` in `form`: the published one, or one our writers make from the log's first published form. */
  function inputFile(log: (typeof LOGS)[number], form: Form): { path: string; made: boolean } {
    const published = log.files[form]
    if (published !== undefined) return { path: join(OCEL_DIR, published), made: false }
    const source = Object.values(log.files)[0]
    if (source === undefined) throw new Error(`${log.name}: no published form`)
    const doc = toOcelDocument(readOcelFile(join(OCEL_DIR, source), UTC))
    const path = join(dir, `${log.name}-input.${form === 'xml' ? 'xmlocel' : form}`)
    if (form === 'xml') writeFileSync(path, toOcelXml(doc))
    else if (form === 'sqlite') writeOcelSqlite(doc, path)
    else writeFileSync(path, JSON.stringify(doc))
    return { path, made: true }
  }

  for (const l of LOGS) {
    for (const form of ['json', 'xml', 'sqlite'] as const) {
      it(`${l.name} from ${form}: all ${String(l.events)} events and ${String(l.o2o)} O2O back, and the same log in JSON, XML and SQLite`, async () => {
        const input = inputFile(l, form)
        if (input.made) console.info(`${l.name}: no published ${form} form; imported the ${form} our writers made of it`)
        const doc = await importAndExport(input.path)
        expect(doc.events).toHaveLength(l.events)
        expect(doc.objects.reduce((n, o) => n + (o.relationships?.length ?? 0), 0)).toBe(l.o2o)
        checkForms(`${l.name}-${form}`, doc)
      }, 600_000)
    }
  }
})
