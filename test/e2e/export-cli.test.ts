/** e2e: `ocelog export` as a real process (the built CLI) on a real SQLite file. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCli } from '../helpers/cli.js'
import { openDatabase } from '../../src/adapters/sqlite/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/sqlite-event-log.js'
import { Ingest } from '../../src/core/ingest.js'

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
    expect(stderr).toBe(`exported dataset ${datasetId}: 2 events, 2 objects, 2 event types, 2 object types, 3 E2O relationships to ${out}\n`)
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

  it('writes the same document to stdout without --out', async () => {
    const out = join(dataDir, 'again.json')
    expect((await ocelog(['export', '--dataset', datasetId, '--out', out])).code).toBe(0)
    const { code, stdout } = await ocelog(['export', '--dataset', datasetId])
    expect([code, stdout]).toEqual([0, readFileSync(out, 'utf8')])
  })

  it('refuses a dataset that does not exist, naming it', async () => {
    const { code, stderr } = await ocelog(['export', '--dataset', 'missing'])
    expect([code, stderr]).toEqual([1, 'ocelog: dataset "missing" does not exist (see: ocelog datasets list)\n'])
  })
})
