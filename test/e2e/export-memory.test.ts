/**
 * e2e: `ocelog export` of a generated dataset of 200,000 events (bench/export-dataset.ts, written
 * through the ingest core and projected) keeps the exporter's peak RSS (VmHWM of the child process)
 * under EXPORT_RSS_CEILING in each form, and the document holds every event, E2O and O2O
 * relationship and every object attribute value. Slow (about a minute on a quiet machine, most of
 * it making the dataset); no timed assertion: speed is for `npm run bench`.
 */
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JSONParser } from '@streamparser/json'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ExportDatasetCounts, measureExport, writeExportDataset } from '../../bench/export-dataset.js'
import { CLI, requireBuild } from '../helpers/cli.js'

const EVENTS = 200_000
/** The exporter's peak RSS target, for any dataset size (docs/performance.md#targets). */
const EXPORT_RSS_CEILING = 300 * 2 ** 20

let dir: string
let counts: ExportDatasetCounts

beforeAll(async () => {
  requireBuild()
  dir = mkdtempSync(join(tmpdir(), 'ocelog-export-memory-'))
  counts = await writeExportDataset(join(dir, 'data'), 'big', EVENTS)
}, 300_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Counts of a JSON export, read as a stream (the test process does not hold the document either). */
async function jsonCounts(path: string): Promise<{ events: number; e2o: number; objects: number; o2o: number; objectAttributes: number }> {
  const parser = new JSONParser({ paths: ['$.events.*', '$.objects.*'], keepStack: false })
  const c = { events: 0, e2o: 0, objects: 0, o2o: 0, objectAttributes: 0 }
  parser.onValue = ({ value, stack }) => {
    const item = value as { relationships: unknown[]; attributes: unknown[] }
    if (stack[1]?.key === 'events') {
      c.events += 1
      c.e2o += item.relationships.length
    } else {
      c.objects += 1
      c.o2o += item.relationships.length
      c.objectAttributes += item.attributes.length
    }
  }
  for await (const chunk of createReadStream(path)) parser.write(chunk as Buffer)
  // The parser ends by itself after the root value.
  if (!parser.isEnded) parser.end()
  return c
}

describe(`ocelog export of ${String(EVENTS)} generated events`, () => {
  it.each(['json', 'xml', 'sqlite'] as const)(
    'writes the %s form with a peak RSS under 300 MB, every event, E2O and O2O in it',
    async (form) => {
      const out = join(dir, `export.${form}`)
      const run = await measureExport(CLI, join(dir, 'data'), 'big', form, out)
      expect(run.code, run.stderr).toBe(0)
      console.info(`export ${form} of ${String(EVENTS)} events: peak RSS ${String(Math.round(run.peakRssBytes / 2 ** 20))} MB`)
      expect(run.peakRssBytes).toBeGreaterThan(0)
      expect(run.peakRssBytes).toBeLessThan(EXPORT_RSS_CEILING)
      expect(run.stderr).toContain(
        `exported dataset big: ${String(counts.events)} events, ${String(counts.objects)} objects, 4 event types, 3 object types, ${String(counts.e2o)} E2O and ${String(counts.o2o)} O2O relationships`,
      )
      if (form === 'json') {
        expect(await jsonCounts(out)).toEqual({
          events: counts.events,
          e2o: counts.e2o,
          objects: counts.objects,
          o2o: counts.o2o,
          objectAttributes: counts.objectAttributes,
        })
      } else if (form === 'sqlite') {
        const db = new Database(out, { readonly: true })
        const n = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
        expect([n('event'), n('event_object'), n('object'), n('object_object')]).toEqual([counts.events, counts.e2o, counts.objects, counts.o2o])
        db.close()
      } else {
        const text = readFileSync(out, 'utf8')
        const count = (pattern: RegExp) => text.match(pattern)?.length ?? 0
        expect([count(/<event id=/g), count(/<object object-id=/g), count(/<object id=/g)]).toEqual([counts.events, counts.e2o + counts.o2o, counts.objects])
      }
    },
    300_000,
  )
})
