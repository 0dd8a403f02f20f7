/**
 * e2e: `ocelog import` can be run again (README § Exactly once): each item's idempotency key derives
 * from the log, so a second run of the same file records nothing new and reports what was already
 * recorded, and an import killed with SIGKILL midway is finished by running it again, with every
 * item recorded once. The built service and CLI run as real processes.
 */
import Database from 'better-sqlite3'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { CLI } from '../helpers/cli.js'
import { describeWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel, type GeneratedOcelFiles } from '../helpers/generated-ocel.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import { startService, type RunningService } from '../helpers/service.js'

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

/**
 * The dataset's record count once it has stopped changing: requests a killed client had already sent are
 * still answered, and committed, by the service after the client is gone. Polls every 100 ms until five
 * reads in a row agree.
 */
async function settledRecordsOf(datasetId: string): Promise<number> {
  let last = recordsOf(datasetId)
  for (let same = 0; same < 5; ) {
    await new Promise((r) => setTimeout(r, 100))
    const n = recordsOf(datasetId)
    same = n === last ? same + 1 : 0
    last = n
  }
  return last
}

/** Records of the dataset's stream in the service's log file (read-only; the log is the source of truth). */
function recordsOf(datasetId: string): number {
  const db = new Database(join(service.dataDir, 'ocelog.db'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM records WHERE dataset_id = ?').get(datasetId) as { n: number }).n
  } finally {
    db.close()
  }
}

describe('ocelog import run again', () => {
  it('records nothing new the second time, reports every item as already recorded, and exports the same log', async () => {
    const key = await service.createKey({ name: 'rerun' })
    const first = await service.importOcel(generated.json, key.key)
    const recorded = recordsOf(key.dataset_id)
    const exportedOnce = exportedView(await service.exportOcel(key.dataset_id))
    const second = await service.importOcel(generated.json, key.key)
    expect(first.already_recorded).toEqual({ events: 0, object_upserts: 0 })
    expect(second.already_recorded).toEqual({ events: first.sent.events, object_upserts: first.sent.object_upserts })
    expect([second.sent, second.failed.events + second.failed.object_upserts]).toEqual([first.sent, 0])
    // One record more than the items: the log's declarations (one POST /v1/types), also recorded once.
    expect([first.declared.already_recorded, second.declared]).toEqual([0, { ...first.declared, already_recorded: 1 }])
    expect([recorded, recordsOf(key.dataset_id)]).toEqual([first.sent.events + first.sent.object_upserts + first.declared.requests, recorded])
    expect(exportedView(await service.exportOcel(key.dataset_id))).toEqual(exportedOnce)
  }, 60_000)

  it('off a terminal, writes a line when each phase starts and one with its totals when it ends', async () => {
    const key = await service.createKey({ name: 'progress-lines' })
    const r = await service.cli(['import', generated.json, '--url', service.url, '--key', key.key])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stderr.split('\n').filter((l) => /^(reading|planning|sending): /.test(l))
    const phases = lines.map((l) => l.slice(0, l.indexOf(':')))
    // Each phase starts, may report every 10 s, and ends, in this order.
    expect(phases.filter((p, i) => p !== phases[i - 1])).toEqual(['reading', 'planning', 'sending'])
    const endOf = (phase: string) => lines.filter((l) => l.startsWith(`${phase}: `)).at(-1) ?? ''
    // A file under 10 MB is counted in KB while it is read.
    const kb = Math.ceil(statSync(generated.json).size / 1024)
    expect(kb).toBeGreaterThan(1)
    expect(lines[0]).toMatch(new RegExp(`^reading: 0/${String(kb)} KB \\(0%\\), 0 events, 0 objects, `))
    // The file holds 8 events and 57 objects; one event is skipped, and the objects' values make 61 upserts.
    expect(endOf('reading')).toMatch(new RegExp(`^reading: ${String(kb)}/${String(kb)} KB \\(100%\\), 8 events, 57 objects, \\d+ KB/s, 0 retries, 0 failed$`))
    const planned = /^planning: 65\/65 items \(100%\), 8 events, 57 objects, \d+ items\/s, (\d+) items sent, 0 retries, 0 failed$/.exec(endOf('planning'))
    expect(planned, endOf('planning')).not.toBeNull()
    // Items are sent while planning goes on: the sending phase starts from those answered by then.
    const sentWhilePlanning = Number(planned?.[1])
    expect(sentWhilePlanning).toBeLessThanOrEqual(68)
    expect(lines.find((l) => l.startsWith('sending: '))).toMatch(new RegExp(`^sending: ${String(sentWhilePlanning)}/68 items `))
    expect(endOf('sending')).toMatch(/^sending: 68\/68 items \(100%\), 7 events, 61 objects, \d+ events\/s, 0 retries, 0 failed$/)
  }, 60_000)

  it('prints "already recorded" in the summary for a person', async () => {
    const key = await service.createKey({ name: 'rerun-text' })
    await service.importOcel(generated.json, key.key)
    const r = await service.cli(['import', generated.json, '--url', service.url, '--key', key.key])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/already recorded: 68 \(7 events, 61 object upserts\)/)
  }, 60_000)
})

describeWithSharedOcel('ocelog import killed midway', () => {
  it('is finished by running it again: every event and upsert of the logistics log recorded once, and the export is the log', async () => {
    const path = join(OCEL_DIR, 'raw/ocpa__logistics.sqlite')
    const key = await service.createKey({ name: 'killed' })
    // A killed import keeps its staging file for inspection: in a folder of the test's own, removed below.
    const stagingDir = mkdtempSync(join(tmpdir(), 'ocelog-killed-import-'))
    onTestFinished(() => rmSync(stagingDir, { recursive: true, force: true }))
    const child = spawn(process.execPath, [CLI, 'import', path, '--url', service.url, '--key', key.key, '--json', '--staging-dir', stagingDir], {
      stdio: 'ignore',
    })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    // Kill it once part of the log is recorded, but not all of it.
    for (let n = 0; n < 2000; n = recordsOf(key.dataset_id)) await new Promise((r) => setTimeout(r, 50))
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(readdirSync(stagingDir).filter((f) => f.startsWith('ocelog-import-'))).toHaveLength(1)
    const before = await settledRecordsOf(key.dataset_id)
    const summary = await service.importOcel(path, key.key)
    // The declarations (one request, recorded before any item) count as a record of the log.
    const total = summary.sent.events + summary.sent.object_upserts + summary.declared.requests
    expect(summary.failed.events + summary.failed.object_upserts).toBe(0)
    expect(summary.sent.events).toBe(8727)
    expect(before).toBeLessThan(total)
    expect([summary.declared.already_recorded, summary.already_recorded.events + summary.already_recorded.object_upserts]).toEqual([1, before - 1])
    expect(recordsOf(key.dataset_id)).toBe(total)
    const doc = await service.exportOcel(key.dataset_id)
    expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
  }, 180_000)
})
