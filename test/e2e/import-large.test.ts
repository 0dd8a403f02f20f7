/**
 * e2e: `ocelog import` of a generated log of 200,010 events (bench/large-ocel.ts, 40,002 orders,
 * 122,006 objects, 480,024 E2O, 120,006 O2O; about 65 MB of JSON) into the built service, with
 * memory bounded (README § Importing OCEL 2.0 logs, docs/import.md): the importer's peak RSS
 * (process.resourceUsage().maxRSS, printed by the child on exit) stays under 300 MB; the dataset
 * exported back equals the source on events, E2O, O2O and attribute history; the staging file is
 * gone; a second run records nothing. The service runs with a rate limit out of the way. Slow (two
 * imports of 200k events): about 2 to 3 minutes on a quiet 2-core machine.
 */
import Database from 'better-sqlite3'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LargeOcelCounts, writeLargeOcelJson } from '../../bench/large-ocel.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import type { ImportSummary } from '../../src/ocel/import/summary.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { CLI } from '../helpers/cli.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import { startService, type RunningService } from '../helpers/service.js'

const ORDERS = 40_002
const RSS_CEILING_KB = 300 * 1024
const HOOK = join(process.cwd(), 'test/helpers/report-max-rss.mjs')

let service: RunningService
let dir: string
let file: string
let counts: LargeOcelCounts

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-large-'))
  file = join(dir, 'large.json')
  counts = writeLargeOcelJson(file, ORDERS)
  service = await startService({ env: { OCELOG_RATE_LIMIT_PER_MINUTE: '100000000' } })
}, 60_000)
afterAll(async () => {
  await service.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs `ocelog import --json` as a child with the max-RSS hook: its summary and peak RSS (kB). */
async function importLarge(key: string, stagingDir: string): Promise<{ summary: ImportSummary; maxRssKb: number; code: number | null }> {
  const child = spawn(process.execPath, ['--import', HOOK, CLI, 'import', file, '--url', service.url, '--key', key, '--json', '--staging-dir', stagingDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OCELOG_DATA_DIR: service.dataDir },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
  })
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const rss = /max-rss-kb (\d+)/.exec(stderr)
  if (code !== 0 || rss === null) throw new Error(`ocelog import exited ${String(code)}: ${stderr}`)
  return { summary: JSON.parse(stdout) as ImportSummary, maxRssKb: Number(rss[1]), code }
}

function recordsOf(datasetId: string): number {
  const db = new Database(join(service.dataDir, 'ocelog.db'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM records WHERE dataset_id = ?').get(datasetId) as { n: number }).n
  } finally {
    db.close()
  }
}

describe('ocelog import of a generated 200,010-event log', () => {
  it('keeps the importer under 300 MB, gives back the log, leaves no staging file, and records nothing the second time', async () => {
    expect(counts).toMatchObject({ events: 200_010, objects: 122_006, e2o: 480_024, o2o: 120_006, objectAttributeValues: 126_007 })
    const key = await service.createKey({ name: 'large' })
    const staging = join(dir, 'staging')
    mkdirSync(staging)

    const first = await importLarge(key.key, staging)
    console.info(
      `import of ${String(counts.events)} events: ${(first.summary.elapsed_ms / 1000).toFixed(1)} s = ${String(first.summary.events_per_second)} events/s, ` +
        `importer peak RSS ${String(Math.round(first.maxRssKb / 1024))} MB, ${String(first.summary.batches)} batches`,
    )
    expect(first.summary.sent).toEqual({ events: 200_010, object_upserts: 126_007, objects: 122_006, o2o: 120_006 })
    expect(first.summary.failed).toEqual({ events: 0, object_upserts: 0, reasons: [] })
    expect(first.maxRssKb).toBeLessThan(RSS_CEILING_KB)
    expect(readdirSync(staging)).toEqual([])

    const doc = await service.exportOcel(key.dataset_id)
    expect(doc.events).toHaveLength(200_010)
    expect(diffViews(expectedView(readOcelFile(file, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])

    const records = recordsOf(key.dataset_id)
    const second = await importLarge(key.key, staging)
    expect(second.summary.already_recorded).toEqual({ events: 200_010, object_upserts: 126_007 })
    expect(second.summary.failed.events + second.summary.failed.object_upserts).toBe(0)
    expect(recordsOf(key.dataset_id)).toBe(records)
    expect(second.maxRssKb).toBeLessThan(RSS_CEILING_KB)
  }, 900_000)
})
