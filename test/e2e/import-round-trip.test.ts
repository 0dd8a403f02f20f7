/**
 * e2e: `ocelog import` of an OCEL 2.0 log into an empty dataset of the built service, then
 * `ocelog export` of that dataset, gives back the same events per type, objects per type, E2O
 * pairs with qualifiers, event times and attributes, O2O relationships, and object attribute values
 * with their times and final values, modulo what
 * the import summary reported as skipped (test/helpers/ocel-round-trip.ts). The generated log
 * (test/helpers/generated-ocel.ts) in JSON, XML and SQLite runs everywhere; the real small logs, in
 * every form we have, run when the shared folder is there.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import type { ImportSummary } from '../../src/ocel/import/summary.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { startService, type RunningService } from '../helpers/service.js'
import { describeWithSharedOcel, itWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel, type GeneratedOcelFiles } from '../helpers/generated-ocel.js'

const DATA = OCEL_DIR

let service: RunningService
let generatedDir: string
let generated: GeneratedOcelFiles

beforeAll(async () => {
  generatedDir = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
  generated = writeGeneratedOcel(generatedDir)
  service = await startService()
})
afterAll(async () => {
  await service.stop()
  rmSync(generatedDir, { recursive: true, force: true })
})

/** Imports `file` into a new dataset through the CLI; returns the summary (--json) and the dataset id. */
async function importFile(file: string, extra: string[] = []): Promise<{ summary: ImportSummary; datasetId: string }> {
  const key = await service.createKey({ name: 'import' })
  return { summary: await service.importOcel(file, key.key, extra), datasetId: key.dataset_id }
}

const LOGS = [
  { name: 'pm4py ocel20_example (JSON)', file: 'raw/pm4py__ocel20_example.jsonocel', events: 13, o2o: 7 },
  { name: 'ocpa ocel20_example (XML)', file: 'raw/ocpa__ocel20_example.xmlocel', events: 13, o2o: 7 },
  { name: 'ocpa ocel20_example (SQLite)', file: 'raw/ocpa__ocel20_example.sqlite', events: 13, o2o: 7 },
  { name: 'ocelescope pallet-logistics (SQLite)', file: 'raw/ocelescope__pallet-logistics-v0.9.sqlite', events: 14, o2o: 0 },
  { name: 'ocelescope pallet-logistics (JSON)', file: 'derived/ocelescope__pallet-logistics-v0.9.ocel2.json', events: 14, o2o: 0 },
]

/** Skip counts of a summary, by cause. */
const skipCounts = (summary: ImportSummary) => Object.fromEntries(Object.entries(summary.skipped).map(([cause, t]) => [cause, t.count]))

describe('ocelog import then ocelog export of the generated log', () => {
  const FORMS = [
    { form: 'json', naive: 4 },
    { form: 'xml', naive: 4 },
    // Its 54 initial attribute rows carry a zoneless 1970-01-01 00:00:00.
    { form: 'sqlite', naive: 58 },
  ] as const

  for (const { form, naive } of FORMS) {
    it(`gives back the ${form} form, reporting what it skipped`, async () => {
      const path = generated[form]
      const { summary, datasetId } = await importFile(path)
      expect(summary.format).toBe(form)
      expect(summary.log).toEqual({
        events: 8,
        objects: 57,
        event_types: { declared: 5, used: 4 },
        object_types: { declared: 4, used: 3 },
        e2o: 110,
        o2o: 3,
        object_attribute_values: 63,
      })
      expect(summary.declared).toEqual({ event_types: 5, object_types: 4, requests: 1, already_recorded: 0, left_out: [], failed: null })
      expect(summary.sent).toEqual({ events: 7, object_upserts: 61, objects: 57, o2o: 3 })
      expect(summary.undefined_objects).toEqual({ type: 'ocelog:undefined', objects: 3, events: 2 })
      expect(summary.failed).toEqual({ events: 0, object_upserts: 0, reasons: [] })
      expect(summary.aborted).toBeNull()
      expect(skipCounts(summary)).toEqual({ event_over_50_objects: 1 })
      expect(summary.skipped.event_over_50_objects?.examples).toEqual(['e5 (51 objects)'])
      expect(summary.timezone).toEqual({ zone: 'UTC', naive_timestamps: naive, truncated_to_ms: 1 })

      const doc = await service.exportOcel(datasetId)
      expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
      expect([doc.events.length, doc.objects.length]).toEqual([7, 60])
      // The types the log declares and no event or object uses, with their declared attributes (docs/ocel.md#declared-types).
      expect([doc.eventTypes.find((t) => t.name === 'cancel order'), doc.objectTypes.find((t) => t.name === 'warehouse')]).toEqual([
        { name: 'cancel order', attributes: [{ name: 'reason', type: 'string' }] },
        { name: 'warehouse', attributes: [{ name: 'capacity', type: 'integer' }] },
      ])
      expect(doc.events.find((e) => e.relationships.some((r) => r.objectId === '😀-2'))?.time).toBe('2024-03-01T15:00:00.123Z')
      expect(doc.objects.find((o) => o.id === '客户-1')?.attributes.map((a) => [a.name, a.value])).toEqual([
        ['name', 'Zoë Müller & Söhne <GmbH> "Ost"'],
        ['größe', 'XL'],
      ])
    })
  }

  it('gives objects the log never defines the type of --unknown-object-type', async () => {
    const { summary, datasetId } = await importFile(generated.json, ['--unknown-object-type', 'Geist 👻'])
    expect(summary.undefined_objects).toEqual({ type: 'Geist 👻', objects: 3, events: 2 })
    const doc = await service.exportOcel(datasetId)
    expect(diffViews(expectedView(readOcelFile(generated.json, parseTimeZone('UTC')), 'Geist 👻'), exportedView(doc))).toEqual([])
    expect(doc.objects.filter((o) => o.type === 'Geist 👻').map((o) => o.id)).toEqual(['ghost-1', 'ghost-2', 'ghost-order'])
  })

  it('refuses an --unknown-object-type the API would refuse, before sending anything', async () => {
    const r = await service.cli(['import', generated.json, '--url', service.url, '--key', 'k', '--unknown-object-type', 'x'.repeat(101)])
    expect([r.code, r.stderr]).toEqual([1, 'ocelog: --unknown-object-type: must be an object type name of 1 to 100 characters (got 101)\n'])
  })

  it('reads its zoneless timestamps in the zone of --timezone, and the others as written', async () => {
    const { summary, datasetId } = await importFile(generated.xml, ['--timezone', '+01:00'])
    expect(summary.timezone).toEqual({ zone: '+01:00', naive_timestamps: 4, truncated_to_ms: 1 })
    const doc = await service.exportOcel(datasetId)
    expect(diffViews(expectedView(readOcelFile(generated.xml, parseTimeZone('+01:00'))), exportedView(doc))).toEqual([])
    const timeOf = (type: string) => doc.events.find((e) => e.type === type)?.time
    // 2024-03-01 11:00:00 (no zone) in +01:00; 2024-03-02T10:00:00+00:00 as written.
    expect([timeOf('Bestellung prüfen ✓'), timeOf('pay order')]).toEqual(['2024-03-01T10:00:00.000Z', '2024-03-02T10:00:00.000Z'])
  })
})

describeWithSharedOcel('ocelog import then ocelog export of the real logs', () => {
  for (const log of LOGS) {
    it(`gives back the ${log.name} log`, async () => {
      const path = join(DATA, log.file)
      const { summary, datasetId } = await importFile(path)
      expect(summary.dataset_id).toBe(datasetId)
      expect(summary.failed).toEqual({ events: 0, object_upserts: 0, reasons: [] })
      expect(summary.aborted).toBeNull()
      expect(summary.sent.events).toBe(log.events)
      expect(summary.sent.o2o).toBe(log.o2o)
      const doc = await service.exportOcel(datasetId)
      expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
    })
  }

  it('reads the XML form with --timezone +01:00 as the same log as the JSON form', async () => {
    const { summary, datasetId } = await importFile(join(DATA, 'raw/ocpa__ocel20_example.xmlocel'), ['--timezone', '+01:00'])
    expect(summary.timezone).toEqual({ zone: '+01:00', naive_timestamps: 16, truncated_to_ms: 0 })
    const json = readOcelFile(join(DATA, 'raw/pm4py__ocel20_example.jsonocel'), parseTimeZone('UTC'))
    expect(diffViews(expectedView(json), exportedView(await service.exportOcel(datasetId)))).toEqual([])
  })

  it('imports all 8,727 events of the ocpa logistics log, its undefined Handling Units with the placeholder type', async () => {
    const path = join(DATA, 'raw/ocpa__logistics.sqlite')
    const { summary, datasetId } = await importFile(path)
    expect(summary.failed.events + summary.failed.object_upserts).toBe(0)
    expect(summary.sent.events).toBe(8727)
    expect(summary.undefined_objects).toEqual({ type: 'ocelog:undefined', objects: 2540, events: 5080 })
    expect(skipCounts(summary)).toEqual({})
    expect(summary.sent.o2o).toBe(3960)
    expect(summary.timezone.naive_timestamps).toBeGreaterThan(11_000)
    const doc = await service.exportOcel(datasetId)
    expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
  }, 120_000)
})

describe('ocelog import', () => {
  it('prints a summary for a person without --json', async () => {
    const key = await service.createKey()
    const r = await service.cli(['import', generated.sqlite, '--url', service.url, '--key', key.key])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`(OCEL 2.0 SQLite) into dataset ${key.dataset_id}`)
    expect(r.stdout).toContain('log         8 events (4 of 5 declared types used), 57 objects (3 of 4 types), 110 E2O, 3 O2O, 63 object attribute values')
    expect(r.stdout).toMatch(/sent {8}7 events, 61 object upserts \(57 objects, 3 O2O\)/)
    expect(r.stdout).toContain(
      'undefined   3 objects the log references but never defines, sent as type "ocelog:undefined" (--unknown-object-type), named by 2 events',
    )
    expect(r.stdout).toContain('1 events with more than 50 objects (the API rejects them) (e.g. e5 (51 objects))')
    expect(r.stdout).toContain('58 without a time zone, read as UTC (--timezone); 1 cut to milliseconds')
    expect(r.stdout).toMatch(/throughput {2}7 events in \d+\.\d s = [\d,]+ events\/s/)
  })

  itWithSharedOcel('prints a summary for a person without --json (ocpa ocel20_example)', async () => {
    const key = await service.createKey()
    const r = await service.cli(['import', join(DATA, 'raw/ocpa__ocel20_example.sqlite'), '--url', service.url, '--key', key.key])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`(OCEL 2.0 SQLite) into dataset ${key.dataset_id}`)
    expect(r.stdout).toMatch(/sent {8}13 events, 12 object upserts \(9 objects, 7 O2O\)/)
    expect(r.stdout).toContain('22 without a time zone, read as UTC (--timezone)')
    expect(r.stdout).toMatch(/throughput {2}13 events in \d+\.\d s = [\d,]+ events\/s/)
  })

  it('refuses a key the service does not accept, before sending anything', async () => {
    const r = await service.cli(['import', generated.json, '--url', service.url, '--key', 'ocl_0000000000000000_nope'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`cannot import into ${service.url}: GET /v1/health: 401`)
  })

  it('refuses a file that does not exist', async () => {
    const r = await service.cli(['import', join(generatedDir, 'nope.jsonocel'), '--url', service.url, '--key', 'k'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('nope.jsonocel: no such file')
  })

  it('refuses an unknown time zone, naming it', async () => {
    const r = await service.cli(['import', generated.json, '--url', service.url, '--key', 'k', '--timezone', 'Mars/Olympus'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('--timezone: time zone "Mars/Olympus"')
  })
})
