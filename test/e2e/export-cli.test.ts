/** e2e: `ocelog export` as a real process (the built CLI) on a real SQLite file. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCli, runCliReaderLeaves } from '../helpers/cli.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { Ingest } from '../../src/write/ingest.js'
import { readOcelJson } from '../../src/ocel/import/read-json.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { logView } from '../helpers/ocel-forms.js'

let dataDir: string
let datasetId: string

function ocelog(args: string[]) {
  return runCli(dataDir, args)
}

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-export-cli-'))
  const created = JSON.parse((await ocelog(['keys', 'create', '--name', 'export', '--json'])).stdout) as { dataset_id: string; key_id: string }
  datasetId = created.dataset_id
  // Appended to the log only: nothing has projected these records when `export` starts.
  const db = openDatabase(dataDir)
  const log = new SqliteEventLog(db)
  const ctx = { datasetId, keyId: created.key_id, requestId: 'req-1', receivedAt: new Date().toISOString() }
  await new Ingest(log).recordEvents(
    [
      { event: 'Create Order', timestamp: '2024-01-01T10:00:00Z', objects: [{ type: 'order', id: 'o1', qualifier: 'target', properties: { amount: 10 } }] },
      {
        event: 'Ship Order',
        timestamp: '2024-01-02T10:00:00Z',
        objects: [
          { type: 'order', id: 'o1' },
          { type: 'parcel', id: 'p1' },
        ],
      },
    ],
    ctx,
  )
  await log.close()
  db.close()
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('ocelog export', () => {
  it('projects the log first and writes every record to --out, with a summary on stderr', async () => {
    const out = join(dataDir, 'export.json')
    const { code, stderr } = await ocelog(['export', '--dataset', datasetId, '--out', out])
    expect(code).toBe(0)
    expect(stderr).toBe(`exported dataset ${datasetId}: 2 events, 2 objects, 2 event types, 2 object types, 3 E2O and 0 O2O relationships to ${out}\n`)
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { events: { type: string; relationships: unknown[] }[] }
    expect(doc.events.map((e) => [e.type, e.relationships])).toEqual([
      ['Create Order', [{ objectId: 'o1', qualifier: 'target' }]],
      [
        'Ship Order',
        [
          { objectId: 'o1', qualifier: '' },
          { objectId: 'p1', qualifier: '' },
        ],
      ],
    ])
  })

  it('stops quietly with status 141 when the reader of stdout leaves (`ocelog export | head`): no stack trace, and no summary claiming the export', async () => {
    expect(await runCliReaderLeaves(dataDir, ['export', '--dataset', datasetId])).toEqual({ code: 141, stderr: '' })
  })

  it('writes the same document to stdout without --out', async () => {
    const out = join(dataDir, 'again.json')
    expect((await ocelog(['export', '--dataset', datasetId, '--out', out])).code).toBe(0)
    const { code, stdout } = await ocelog(['export', '--dataset', datasetId])
    expect([code, stdout]).toEqual([0, readFileSync(out, 'utf8')])
  })

  for (const form of ['xml', 'sqlite'] as const) {
    it(`writes the --format ${form} form of the same log as the JSON export to --out`, async () => {
      const json = join(dataDir, `${form}-twin.json`)
      const out = join(dataDir, `export.${form === 'xml' ? 'xmlocel' : 'sqlite'}`)
      expect((await ocelog(['export', '--dataset', datasetId, '--out', json])).code).toBe(0)
      const { code, stderr } = await ocelog(['export', '--dataset', datasetId, '--format', form, '--out', out])
      expect([code, stderr]).toEqual([
        0,
        `exported dataset ${datasetId}: 2 events, 2 objects, 2 event types, 2 object types, 3 E2O and 0 O2O relationships to ${out}\n`,
      ])
      const utc = parseTimeZone('UTC')
      const read = readOcelFile(out, utc)
      expect([read.format, logView(read)]).toEqual([form, logView(readOcelJson(readFileSync(json, 'utf8'), utc))])
    })
  }

  it('writes the XML form to stdout without --out', async () => {
    const { code, stdout } = await ocelog(['export', '--dataset', datasetId, '--format', 'xml'])
    expect(code).toBe(0)
    expect(stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<log>\n')).toBe(true)
    expect(stdout).toContain('<object object-id="o1" qualifier="target" type="order"/>')
  })

  it('refuses --format sqlite without --out, since it writes a binary file', async () => {
    const { code, stdout, stderr } = await ocelog(['export', '--dataset', datasetId, '--format', 'sqlite'])
    expect([code, stdout, stderr]).toEqual([1, '', 'ocelog: --format sqlite writes a binary file: give it with --out FILE\n'])
  })

  it('refuses a --format it does not know, naming the forms', async () => {
    const { code, stderr } = await ocelog(['export', '--dataset', datasetId, '--format', 'csv'])
    expect([code, stderr]).toEqual([1, 'ocelog: --format csv: must be one of json, xml, sqlite\n'])
  })

  it('refuses a dataset that does not exist, naming it', async () => {
    const { code, stderr } = await ocelog(['export', '--dataset', 'missing'])
    expect([code, stderr]).toEqual([1, 'ocelog: dataset "missing" does not exist (see: ocelog datasets list)\n'])
  })
})
