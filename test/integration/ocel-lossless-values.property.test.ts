/**
 * Property: an OCEL 2.0 log's string attribute values come back exactly through every form, on the
 * whole path of `ocelog import` and `ocelog export` (docs/export.md#lossless). A generated log
 * (fast-check, fixed seed) whose event and object attribute values hold line feeds, carriage
 * returns, CR LF, tabs, leading and trailing spaces, `]]>`, `<&>"'`, text that looks like markup
 * or a character reference, and characters beyond U+FFFF is written in one form (JSON, XML or
 * SQLite, as `writeOcelForm` writes it), read by the importer's reader, planned and recorded
 * through the ingest core into a real SQLite file, projected, exported by the streamed export in
 * all three forms (and JSON indented, `--pretty`), and each export read back by our readers.
 * Every read (the input file and each export) must give the generated values, character for
 * character.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { exportOcelForm } from '../../src/ocel/export-writer.js'
import { OCEL_FORMS, type OcelForm } from '../../src/ocel/forms.js'
import type { OcelLog } from '../../src/ocel/import/model.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import { writeOcelForm } from '../../src/ocel/write-forms.js'
import { Projector } from '../../src/projector/runner.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const SEED = 20_261_205
const RUNS = 20
const UTC = parseTimeZone('UTC')
const EPOCH = '1970-01-01T00:00:00.000Z'
const EXTENSION: Record<OcelForm, string> = { json: 'jsonocel', xml: 'xmlocel', sqlite: 'sqlite' }

/** Pieces that the XML, JSON and SQLite layers each could change: whitespace, markup, references, surrogate pairs. */
const PIECES = [
  '\n',
  '\r',
  '\r\n',
  '\t',
  ' ',
  '   ',
  ']]>',
  '<&>"\'',
  '<![CDATA[',
  '&amp;',
  '&#10;',
  '\u{1F600}',
  '\u{10FFFF}',
  'é',
  '客户',
  '\u00A0',
  '\u2028',
  'line',
  '0',
]
const EDGE = fc.constantFrom('', ' ', '  ', '\t', '\n', '\r\n', '\r')
/** A value: empty, or edge whitespace around pieces or printable text, so that leading and trailing whitespace is common. */
const VALUE = fc.oneof(
  { arbitrary: fc.constant(''), weight: 1 },
  {
    arbitrary: fc
      .tuple(
        EDGE,
        fc.oneof(
          fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }).map((p) => p.join('')),
          fc.string({ unit: 'grapheme', maxLength: 12 }),
        ),
        EDGE,
      )
      .map((parts) => parts.join('')),
    weight: 9,
  },
)

/** A log of 1–4 events of one type and 1–3 objects of one type, every attribute declared `string`. */
const LOG = fc
  .record({
    events: fc.array(fc.record({ a: VALUE, b: VALUE, object: fc.nat(2) }), { minLength: 1, maxLength: 4 }),
    objects: fc.array(fc.record({ label: VALUE, notes: fc.array(VALUE, { minLength: 1, maxLength: 2 }) }), { minLength: 3, maxLength: 3 }),
  })
  .map(
    ({ events, objects }): OcelJsonStrict => ({
      eventTypes: [
        {
          name: 'Note taken',
          attributes: [
            { name: 'a', type: 'string' },
            { name: 'b', type: 'string' },
          ],
        },
      ],
      objectTypes: [
        {
          name: 'ticket',
          attributes: [
            { name: 'label', type: 'string' },
            { name: 'note', type: 'string' },
          ],
        },
      ],
      events: events.map((e, i) => ({
        id: `e${String(i)}`,
        type: 'Note taken',
        time: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
        attributes: [
          { name: 'a', value: e.a },
          { name: 'b', value: e.b },
        ],
        relationships: [{ objectId: `t${String(e.object)}`, qualifier: 'about' }],
      })),
      objects: objects.map((o, i) => ({
        id: `t${String(i)}`,
        type: 'ticket',
        attributes: [
          { name: 'label', time: EPOCH, value: o.label },
          ...o.notes.map((value, n) => ({ name: 'note', time: n === 0 ? EPOCH : new Date(Date.UTC(2024, 0, 2, 0, n)).toISOString(), value })),
        ],
        relationships: [],
      })),
    }),
  )

/** What must come back: each event's (time, type, attributes), each object's (id, type, attribute history), in time and id order. */
interface ValueView {
  events: [string, string, [string, string][]][]
  objects: [string, string, [string, string, string][]][]
}

const byFirst = <T extends readonly string[]>(a: T, b: T) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1)

function docView(doc: OcelJsonStrict): ValueView {
  return {
    events: doc.events
      .map((e): ValueView['events'][number] => [e.time, e.type, e.attributes.map((a): [string, string] => [a.name, a.value]).sort(byFirst)])
      .sort((x, y) => (x[0] < y[0] ? -1 : 1)),
    objects: doc.objects
      .map((o): ValueView['objects'][number] => [o.id, o.type, o.attributes.map((a): [string, string, string] => [a.time, a.name, a.value]).sort(byFirst)])
      .sort((x, y) => (x[0] < y[0] ? -1 : 1)),
  }
}

/** The view of a log as our readers give it; a value that is not text (typed by a reader) shows as its JSON, so that it differs. */
function logValues(log: OcelLog): ValueView {
  const text = (v: unknown) => (typeof v === 'string' ? v : `not text: ${JSON.stringify(v)}`)
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    events: log.events
      .map((e): ValueView['events'][number] => [
        iso(e.time),
        e.type,
        Object.entries(e.attributes)
          .map(([n, v]): [string, string] => [n, text(v)])
          .sort(byFirst),
      ])
      .sort((x, y) => (x[0] < y[0] ? -1 : 1)),
    objects: log.objects
      .map((o): ValueView['objects'][number] => [
        o.id,
        o.type,
        o.attributes.map((a): [string, string, string] => [iso(a.time), a.name, text(a.value)]).sort(byFirst),
      ])
      .sort((x, y) => (x[0] < y[0] ? -1 : 1)),
  }
}

/** What the generated values must have held, over all runs, for the test to have tried each case. */
const CASES: Record<string, (value: string) => boolean> = {
  'line feed': (v) => v.includes('\n'),
  'carriage return': (v) => v.includes('\r'),
  tab: (v) => v.includes('\t'),
  'leading space': (v) => v.startsWith(' '),
  'trailing space': (v) => v.endsWith(' '),
  ']]>': (v) => v.includes(']]>'),
  '<&>"\'': (v) => v.includes('<&>"\''),
  'beyond U+FFFF': (v) => /[\u{10000}-\u{10FFFF}]/u.test(v),
  empty: (v) => v === '',
}

describe('string attribute values through import and export in JSON, XML and SQLite', () => {
  let f: SqliteFixture
  let query: SqliteReadModelQuery
  let files: string
  let runs = 0
  const tried = new Set<string>()
  beforeAll(() => {
    f = openSqliteFixture('ocelog-lossless-values-', { fdatasync: (_fd, callback) => callback(null) })
    query = new SqliteReadModelQuery(f.rmDb)
    files = mkdtempSync(join(tmpdir(), 'ocelog-lossless-files-'))
  })
  afterAll(async () => {
    await f.log.close()
    f.close()
    rmSync(files, { recursive: true, force: true })
  })

  it(`come back exactly from every form, imported from every form (${String(RUNS)} generated logs)`, async () => {
    await fc.assert(
      fc.asyncProperty(LOG, fc.constantFrom(...OCEL_FORMS), async (doc, inputForm) => {
        runs += 1
        const datasetId = `lossless${String(runs)}`
        const expected = docView(doc)
        for (const value of [...doc.events.flatMap((e) => e.attributes), ...doc.objects.flatMap((o) => o.attributes)].map((a) => a.value)) {
          for (const [name, holds] of Object.entries(CASES)) if (holds(value)) tried.add(name)
        }
        const input = join(files, `${datasetId}-input.${EXTENSION[inputForm]}`)
        writeOcelForm(doc, inputForm, input)
        const source = readOcelFile(input, UTC)
        expect(logValues(source), `the ${inputForm} input read back`).toEqual(expected)

        await new SqliteKeyStore(f.db).createDataset({ id: datasetId, name: datasetId, created_at: new Date().toISOString() })
        const ctx = { datasetId, keyId: 'k1', requestId: `r${String(runs)}`, receivedAt: new Date().toISOString() }
        for (const batch of planImport(source).batches) {
          const { failures } = batch.kind === 'events' ? await f.ingest.recordEvents(batch.items, ctx) : await f.ingest.upsertObjects(batch.items, ctx)
          expect(failures).toEqual([])
        }
        await new Projector(f.log, f.store).catchUp()

        const exports = [...OCEL_FORMS.map((form) => ({ form, pretty: false })), { form: 'json' as const, pretty: true }]
        for (const { form, pretty } of exports) {
          const out = join(files, `${datasetId}-export${pretty ? '-pretty' : ''}.${EXTENSION[form]}`)
          await exportOcelForm(query, datasetId, form, out, { pretty })
          // Exported event ids are Ocelog's; the view compares events by time, type and values.
          expect(logValues(readOcelFile(out, UTC)), `imported from ${inputForm}, exported as ${form}${pretty ? ' --pretty' : ''}`).toEqual(expected)
        }
      }),
      { seed: SEED, numRuns: RUNS },
    )
    expect([runs, [...tried].sort()]).toEqual([RUNS, Object.keys(CASES).sort()])
  }, 120_000)
})
