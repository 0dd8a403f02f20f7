/**
 * e2e: `ocelog project` as a real process on a real SQLite file stops its projection on a record
 * it cannot apply (made poison by a trigger that refuses one event type), exits 1 naming the
 * record, and `ocelog status` shows the stop; after the fix, `ocelog project --once` applies it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { Ingest } from '../../src/write/ingest.js'
import type { Status } from '../../src/schemas/projections.js'
import { requireBuild, runCli } from '../helpers/cli.js'
import { testContext } from '../helpers/sqlite.js'
import { PROJECTION_NAMES } from '../../src/core/read-model-changes.js'

let dataDir: string
let poison = 0

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-projector-stop-'))
  const db = openDatabase(dataDir)
  const log = new SqliteEventLog(db)
  await new Ingest(log).recordEvents(
    ['Create Order', 'Poison', 'Ship Order'].map((event) => ({ event, objects: [{ type: 'order', id: 'o1' }] })),
    testContext('ds1'),
  )
  poison = 2
  const rmDb = openReadModelsDatabase(dataDir).db
  rmDb.exec(`CREATE TRIGGER poison BEFORE INSERT ON rm_events WHEN NEW.event_type_id = (SELECT nid FROM rm_names WHERE name = 'Poison')
           BEGIN SELECT RAISE(ABORT, 'poisoned event type'); END`)
  rmDb.close()
  await log.close()
  db.close()
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('ocelog project on a poison record', () => {
  it('stops after its retries and exits 1, naming the projection, the record and the cause', async () => {
    const r = await runCli(dataDir, ['project'])
    expect([r.code, r.stderr.split('\n').filter((l) => l.startsWith('ocelog: '))]).toEqual([
      1,
      [
        `ocelog: projection read-models stopped at the record at position ${String(poison)} of stream dataset-ds1 after 5 attempt(s): poisoned event type. ` +
          'Fix the cause, then start the projector again: it retries that record',
      ],
    ])
  }, 60_000)

  it('shows the stop in `ocelog status`, with the records behind it', async () => {
    const r = await runCli(dataDir, ['status', '--json'])
    const status = JSON.parse(r.stdout) as Status
    expect([status.head, status.projections.map((p) => [p.projection, p.position, p.lag_records, p.stopped?.position, p.stopped?.cause])]).toEqual([
      3,
      ['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'].map((name) => [
        name,
        1,
        2,
        poison,
        'poisoned event type',
      ]),
    ])
    expect((await runCli(dataDir, ['status'])).stdout).toContain(`stopped: events at position ${String(poison)} (dataset-ds1) after 5 attempt(s)`)
  })

  it('applies the record once the cause is fixed', async () => {
    const rmDb = openReadModelsDatabase(dataDir).db
    rmDb.exec('DROP TRIGGER poison')
    rmDb.close()
    expect((await runCli(dataDir, ['project', '--once'])).code).toBe(0)
    const status = JSON.parse((await runCli(dataDir, ['status', '--json'])).stdout) as Status
    expect(status.projections.map((p) => [p.position, p.lag_records, p.stopped])).toEqual(PROJECTION_NAMES.map(() => [3, 0, null]))
  })
})
