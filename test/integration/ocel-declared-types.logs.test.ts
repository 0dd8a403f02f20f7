/**
 * Integration: event and object types that a log declares but no event or object uses
 * (docs/ocel.md#declared-types). Our readers give them, with their attribute declarations, from
 * every form, and our writers write them back in every form (JSON, XML, SQLite): on the generated
 * log (`cancel order`, `warehouse`, each with an attribute) and on every real log in the shared
 * folder (the order-management running example declares `pay order`, `package delivered` and
 * `reorder item`; the logistics log declares `Handling Unit` but defines none). Through the
 * service they are kept: the import sends the declarations first (POST /v1/types, a `TypesDeclared`
 * record), the `declared_types` read model keeps them, and the export writes every declared type
 * with its declared attribute types; on generated declarations (repeated and changed ones merged
 * in log order) too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { buildTypesDeclared } from '../../src/core/records.js'
import { validateTypes } from '../../src/core/validation.js'
import { exportOcel } from '../../src/ocel/export.js'
import { Projector } from '../../src/projector/runner.js'
import type { TypesInput } from '../../src/schemas/api.js'
import { newNotes, type OcelLog } from '../../src/ocel/import/model.js'
import { UNDEFINED_OBJECT_TYPE } from '../../src/ocel/import/plan.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
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

/** Read notes of a log that was not read from a file. */
const parseNotes = () => newNotes('UTC')

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-declared-types-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A SQLite fixture (log and read models, fdatasync skipped) for the tests of one describe block: opened before them, closed after. */
function fixtureOfBlock(prefix: string): () => SqliteFixture {
  let f: SqliteFixture | undefined
  beforeAll(() => {
    f = openSqliteFixture(prefix, { fdatasync: (_fd, callback) => callback(null) })
  })
  afterAll(async () => {
    await f?.log.close()
    f?.close()
  })
  return () => {
    if (f === undefined) throw new Error('the fixture is opened before the block runs')
    return f
  }
}

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

/**
 * The export's declarations of the types `log` declares: each declared type, with its attributes
 * and their types, as the export writes them (logView's form). The export also declares the types
 * that events and objects use without a declaration (objects the log never defines get
 * UNDEFINED_OBJECT_TYPE), checked apart.
 */
function exportedDeclarations(doc: OcelJsonStrict, log: OcelLog) {
  const view = logView({ ...log, eventTypes: doc.eventTypes, objectTypes: doc.objectTypes, events: [], objects: [] })
  const declared = logView(log)
  const named = (list: typeof view.eventTypes, of: typeof declared.eventTypes) => list.filter((t) => of.some((d) => d.name === t.name))
  return { eventTypes: named(view.eventTypes, declared.eventTypes), objectTypes: named(view.objectTypes, declared.objectTypes) }
}

/** The import and export of `log` through the service (loadOcel, exportOcel) gives back its declarations, used or not, and declares nothing else but what its items use. */
async function expectRoundTrip(f: SqliteFixture, log: OcelLog, datasetId: string): Promise<void> {
  await new SqliteKeyStore(f.db).createDataset({ id: datasetId, name: datasetId, created_at: new Date().toISOString() })
  await loadOcel(log, datasetId, f)
  const doc = await exportOcel(new SqliteReadModelQuery(f.rmDb), datasetId)
  const { eventTypes, objectTypes } = logView(log)
  expect(exportedDeclarations(doc, log)).toEqual({ eventTypes, objectTypes })
  const names = (types: readonly { name: string }[]) => types.map((t) => t.name)
  const extra = (types: readonly { name: string }[], declared: readonly { name: string }[], used: Iterable<string>) => {
    const usedSet = new Set(used)
    return names(types).filter((n) => !names(declared).includes(n) && !usedSet.has(n))
  }
  expect([
    extra(
      doc.eventTypes,
      log.eventTypes,
      doc.events.map((e) => e.type),
    ),
    extra(
      doc.objectTypes,
      log.objectTypes,
      doc.objects.map((o) => o.type),
    ),
  ]).toEqual([[], []])
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
    const fixture = fixtureOfBlock('ocelog-declared-types-service-')

    it('are kept: the export declares every type the log declares, used or not, with its declared attribute types', async () => {
      const log = readOcelFile(generated.json, UTC)
      await expectRoundTrip(fixture(), log, 'generated')
      const doc = await exportOcel(new SqliteReadModelQuery(fixture().rmDb), 'generated')
      expect([doc.eventTypes.find((t) => t.name === 'cancel order'), doc.objectTypes.find((t) => t.name === 'warehouse')]).toEqual([
        { name: 'cancel order', attributes: [{ name: 'reason', type: 'string' }] },
        { name: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] },
      ])
      expect(doc.objectTypes.map((t) => t.name)).toContain(UNDEFINED_OBJECT_TYPE)
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

  describe('through the service', () => {
    const fixture = fixtureOfBlock('ocelog-declared-types-real-')

    LOGS.forEach((l, i) => {
      it(`${l.file}: an import and export keep every declared type, used or not, with its declared attribute types`, async () => {
        const log = readOcelFile(join(OCEL_DIR, l.file), UTC)
        await expectRoundTrip(fixture(), log, `real-${String(i)}`)
      }, 300_000)
    })
  })

  for (const l of LOGS) {
    it(`${l.file}: declares ${String(l.unused.eventTypes.length + l.unused.objectTypes.length)} unused type(s), and every form keeps every declaration`, () => {
      const log = readOcelFile(join(OCEL_DIR, l.file), UTC)
      expect(unused(log)).toEqual(l.unused)
      expectDeclarationsKept(log, l.file.replaceAll('/', '-'))
    }, 120_000)
  }
})

describe('generated declarations through the service', () => {
  const SEED = 20_261_205
  const KINDS = ['string', 'time', 'integer', 'float', 'boolean'] as const
  /** Names that stress each layer: unicode beyond U+FFFF, what MongoDB or JSON could read as syntax, prototype keys, a shared pool so that types and attributes repeat. */
  const NAME = fc.oneof(
    fc.constantFrom('a', 'b', 'pay order', '客户', '\u{1F600}', '__proto__', 'constructor', '$price', 'a.b', ' spaced ', 'x\ny'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  )
  const DECLARATION = fc.record({
    name: NAME,
    attributes: fc.uniqueArray(fc.record({ name: NAME, type: fc.constantFrom(...KINDS) }), { selector: (a) => a.name, maxLength: 4 }),
  })
  const LIST = fc.uniqueArray(DECLARATION, { selector: (d) => d.name, maxLength: 4 })
  /** Several POST /v1/types bodies, each declaring at least one type. */
  const BODIES = fc.array(
    fc.record({ event_types: LIST, object_types: LIST }).filter((b) => b.event_types.length + b.object_types.length > 0),
    { minLength: 1, maxLength: 4 },
  )

  /** The declarations the bodies make, merged in order (a type's attributes added, a repeated attribute's type the later one), sorted as logView sorts. */
  function merged(bodies: readonly TypesInput[], field: 'event_types' | 'object_types') {
    const types = new Map<string, Map<string, string>>()
    for (const b of bodies) {
      for (const t of b[field] ?? []) {
        const attributes = types.get(t.name) ?? new Map<string, string>()
        for (const a of t.attributes) attributes.set(a.name, a.type)
        types.set(t.name, attributes)
      }
    }
    const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
    return [...types].sort(([a], [b]) => compare(a, b)).map(([name, attributes]) => ({ name, attributes: [...attributes].sort(([a], [b]) => compare(a, b)) }))
  }

  const fixture = fixtureOfBlock('ocelog-declared-types-generated-')

  it('are merged in log order by the read model and all written by the export, with their declared attribute types', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(BODIES, async (bodies) => {
        const datasetId = `generated-${String(run++)}`
        for (const body of bodies) {
          const v = validateTypes(body)
          expect(v.ok).toBe(true)
          if (!v.ok) return
          const ctx = { datasetId, keyId: 'key_gen', requestId: `req_${String(run)}`, receivedAt: new Date().toISOString() }
          await fixture().log.append(datasetId, [buildTypesDeclared(v.value, ctx)], [])
        }
        const f = fixture()
        await new Projector(f.log, f.store).catchUp()
        const doc = await exportOcel(new SqliteReadModelQuery(f.rmDb), datasetId)
        const view = logView({ format: 'json', eventTypes: doc.eventTypes, objectTypes: doc.objectTypes, events: [], objects: [], notes: parseNotes() })
        expect({ eventTypes: view.eventTypes, objectTypes: view.objectTypes }).toEqual({
          eventTypes: merged(bodies, 'event_types'),
          objectTypes: merged(bodies, 'object_types'),
        })
      }),
      { seed: SEED, numRuns: 40 },
    )
  }, 120_000)
})
