/**
 * Integration: event and object types that a log declares but no event or object uses
 * (docs/ocel.md#declared-types). Our readers give them, with their attribute declarations, from
 * every form, and our writers write them back in every form (JSON, XML, SQLite): on the generated
 * log (`cancel order`, `warehouse`, each with an attribute) and on every real log in the shared
 * folder (the order-management running example declares `pay order`, `package delivered` and
 * `reorder item`; the logistics log declares `Handling Unit` but defines none). Through the
 * service they are not kept: the API records events and objects, and no record carries a type
 * alone, so an import and export gives the types the dataset's events and objects use.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteKeyStore } from '../../src/adapters/sqlite/sqlite-key-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/sqlite-read-model-query.js'
import { exportOcel } from '../../src/ocel/export.js'
import type { OcelLog } from '../../src/ocel/import/model.js'
import { UNDEFINED_OBJECT_TYPE } from '../../src/ocel/import/plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { writeOcelSqlite } from '../../src/ocel/write-sqlite.js'
import { toOcelXml } from '../../src/ocel/write-xml.js'
import { describeWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'
import { loadOcel } from '../helpers/load-ocel.js'
import { logView, toOcelDocument } from '../helpers/ocel-forms.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const UTC = parseTimeZone('UTC')

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-declared-types-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The declared types of `log` that none of its events (event types) or objects (object types) uses, by name. */
function unused(log: OcelLog): { eventTypes: string[]; objectTypes: string[] } {
  const events = new Set(log.events.map((e) => e.type))
  const objects = new Set(log.objects.map((o) => o.type))
  return {
    eventTypes: log.eventTypes.map((t) => t.name).filter((n) => !events.has(n)),
    objectTypes: log.objectTypes.map((t) => t.name).filter((n) => !objects.has(n)),
  }
}

/**
 * The declarations (names, attribute names and types) of `log` written by our writers in each form
 * and read back by our readers. Written without the log's events and objects: the declarations
 * are what is checked, and the forms' items are checked elsewhere (ocel-export-forms.logs.test.ts).
 */
function declarationsThroughForms(log: OcelLog, name: string): Record<'json' | 'xml' | 'sqlite', unknown> {
  const doc = toOcelDocument({ ...log, events: [], objects: [] })
  const files = { json: join(dir, `${name}.jsonocel`), xml: join(dir, `${name}.xmlocel`), sqlite: join(dir, `${name}.sqlite`) }
  writeFileSync(files.json, JSON.stringify(doc))
  writeFileSync(files.xml, toOcelXml(doc))
  writeOcelSqlite(doc, files.sqlite)
  const declarations = (path: string) => {
    const view = logView(readOcelFile(path, UTC))
    return { eventTypes: view.eventTypes, objectTypes: view.objectTypes }
  }
  return { json: declarations(files.json), xml: declarations(files.xml), sqlite: declarations(files.sqlite) }
}

/** Each form gives back the declarations of `log` exactly. */
function expectDeclarationsKept(log: OcelLog, name: string): void {
  const { eventTypes, objectTypes } = logView(log)
  const expected = { eventTypes, objectTypes }
  expect(declarationsThroughForms(log, name)).toEqual({ json: expected, xml: expected, sqlite: expected })
}

describe('declared types of the generated log', () => {
  let generated: { json: string; xml: string; sqlite: string }
  beforeAll(() => {
    generated = writeGeneratedOcel(dir)
  })

  it.each(['json', 'xml', 'sqlite'] as const)('are read from %s, unused ones with their attribute declarations', (form) => {
    const log = readOcelFile(generated[form], UTC)
    expect(unused(log)).toEqual({ eventTypes: ['cancel order'], objectTypes: ['warehouse'] })
    const view = logView(log)
    expect([view.eventTypes.find((t) => t.name === 'cancel order'), view.objectTypes.find((t) => t.name === 'warehouse')]).toEqual([
      { name: 'cancel order', attributes: [['reason', 'string']] },
      { name: 'warehouse', attributes: [['capacity', 'integer']] },
    ])
    expectDeclarationsKept(log, `generated-from-${form}`)
  })

  describe('through the service', () => {
    let f: SqliteFixture
    beforeAll(() => {
      f = openSqliteFixture('ocelog-declared-types-service-', { fdatasync: (_fd, callback) => callback(null) })
    })
    afterAll(async () => {
      await f.log.close()
      f.close()
    })

    it('are not kept: the export declares the types its events and objects use, since no API record carries a type alone', async () => {
      const log = readOcelFile(generated.json, UTC)
      await new SqliteKeyStore(f.db).createDataset({ id: 'generated', name: 'generated', created_at: new Date().toISOString() })
      await loadOcel(log, 'generated', f)
      const doc = await exportOcel(new SqliteReadModelQuery(f.rmDb), 'generated')
      const names = (types: readonly { name: string }[]) => types.map((t) => t.name).sort()
      expect([names(doc.eventTypes), names(doc.objectTypes)]).toEqual([
        [...new Set(doc.events.map((e) => e.type))].sort(),
        [...new Set(doc.objects.map((o) => o.type))].sort(),
      ])
      expect([names(doc.eventTypes).includes('cancel order'), names(doc.objectTypes).includes('warehouse')]).toEqual([false, false])
      expect(names(doc.objectTypes)).toContain(UNDEFINED_OBJECT_TYPE)
    })
  })
})

describeWithSharedOcel('declared types of the real logs', () => {
  const LOGS: { file: string; unused: ReturnType<typeof unused> }[] = [
    { file: 'raw/pm4py__ocel20_example.jsonocel', unused: { eventTypes: [], objectTypes: [] } },
    { file: 'raw/ocpa__ocel20_example.xmlocel', unused: { eventTypes: [], objectTypes: [] } },
    { file: 'raw/ocpa__ocel20_example.sqlite', unused: { eventTypes: [], objectTypes: [] } },
    { file: 'raw/ocelescope__pallet-logistics-v0.9.sqlite', unused: { eventTypes: [], objectTypes: [] } },
    { file: 'derived/ocelescope__pallet-logistics-v0.9.ocel2.json', unused: { eventTypes: [], objectTypes: [] } },
    { file: 'raw/ocpa__logistics.sqlite', unused: { eventTypes: [], objectTypes: ['Handling Unit'] } },
    { file: 'derived/ocpa__logistics.ocel2.json', unused: { eventTypes: [], objectTypes: ['Handling Unit'] } },
    { file: 'raw/ocpa__running-example.sqlite', unused: { eventTypes: ['pay order', 'package delivered', 'reorder item'], objectTypes: [] } },
    { file: 'derived/ocpa__running-example.ocel2.json', unused: { eventTypes: ['pay order', 'package delivered', 'reorder item'], objectTypes: [] } },
  ]

  for (const l of LOGS) {
    it(`${l.file}: declares ${String(l.unused.eventTypes.length + l.unused.objectTypes.length)} unused type(s), and every form keeps every declaration`, () => {
      const log = readOcelFile(join(OCEL_DIR, l.file), UTC)
      expect(unused(log)).toEqual(l.unused)
      expectDeclarationsKept(log, l.file.replaceAll('/', '-'))
    }, 120_000)
  }
})
