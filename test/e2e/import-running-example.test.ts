/**
 * e2e: the order-management running example (ocpa, 18,211 events, 10,031 objects, 35,857 E2O,
 * 25,336 O2O) through `ocelog import` into an empty dataset of the built service, then
 * `ocelog export`: the same events, objects, E2O pairs, event times and attributes and final object
 * attribute values with their times, all 25,336 O2O relationships, and the declared types that no
 * event uses (`pay order`, `package delivered`, `reorder item`) come back. Both
 * forms we have of it (derived JSON, SQLite). Prints the measured import time and events/s.
 * Skipped when the shared folder with the real logs is absent; the generated log covers the same
 * path on every clone (import-round-trip.test.ts).
 */
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { startService, type RunningService } from '../helpers/service.js'
import { describeWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'

const DATA = OCEL_DIR

let service: RunningService

beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await service.stop()
})

describeWithSharedOcel('ocelog import of the order-management running example', () => {
  for (const form of ['derived/ocpa__running-example.ocel2.json', 'raw/ocpa__running-example.sqlite']) {
    it(`loads all 18,211 events of ${form} and exports them back`, async () => {
      const path = join(DATA, form)
      const key = await service.createKey({ name: 'running-example' })
      const started = Date.now()
      const summary = await service.importOcel(path, key.key)
      const wallMs = Date.now() - started
      console.info(
        `import ${form}: ${String(summary.sent.events)} events, ${String(summary.sent.object_upserts)} upserts in ${(summary.elapsed_ms / 1000).toFixed(1)} s ` +
          `= ${String(summary.events_per_second)} events/s (${String(summary.requests)} requests; ${(wallMs / 1000).toFixed(1)} s with process start)`,
      )
      // 10,151 attribute upserts, and 18 more for the objects with over 100 O2O relationships.
      expect(summary.sent).toEqual({ events: 18_211, object_upserts: 10_169, objects: 10_031, o2o: 25_336 })
      expect(summary.failed).toEqual({ events: 0, object_upserts: 0, reasons: [] })
      expect(summary.skipped).toEqual({})
      expect([summary.declared.event_types, summary.declared.requests, summary.declared.failed]).toEqual([11, 1, null])

      const doc = await service.exportOcel(key.dataset_id)
      expect(doc.events).toHaveLength(18_211)
      expect(doc.objects).toHaveLength(10_031)
      expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
      const unused = ['pay order', 'package delivered', 'reorder item']
      expect(doc.eventTypes.filter((t) => unused.includes(t.name)).map((t) => t.name)).toEqual(['package delivered', 'pay order', 'reorder item'])
    }, 300_000)
  }
})
