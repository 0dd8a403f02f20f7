/**
 * e2e: `ocelog project` as a real process on a real SQLite file stops the runner of a record it
 * cannot apply (made poison by a trigger that refuses one event type: the `entities` runner's) and
 * says so, while the other runner (`process`, in a thread of its own) applies the whole log; on
 * SIGTERM it exits 1 naming the runner and the record, and `ocelog status` shows the stop; after the
 * fix, `ocelog project --once` applies it.
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
import { requireBuild, runCli, spawnCli } from '../helpers/cli.js'
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
  it('stops that runner after its retries, keeps the other going, and exits 1 on SIGTERM naming the runner, the record and the cause', async () => {
    const { child, lines, stderr, exited } = spawnCli(dataDir, ['project'])
    const stoppedLine = 'projector worker entities: stopped on a record it cannot apply; the other runners go on'
    const processAt = async () =>
      (JSON.parse((await runCli(dataDir, ['status', '--json'])).stdout) as Status).projections.find((p) => p.projection === 'directly_follows')?.position
    try {
      const deadline = Date.now() + 30_000
      while (!(lines().some((l) => l.msg === stoppedLine) && (await processAt()) === 3) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      // The stop, logged by the entities worker (its lines carry `runner`) and by the process for it; the process runner is at the head.
      expect(
        lines()
          .filter((l) => l.msg.includes('stopped'))
          .map((l) => [l.runner, l.msg]),
      ).toEqual([
        [
          'entities',
          `projection read-models/entities stopped at the record at position ${String(poison)} of stream dataset-ds1 after 5 attempt(s): poisoned event type`,
        ],
        ['entities', stoppedLine],
      ])
      expect(await processAt()).toBe(3)
      expect(child.exitCode).toBeNull()
    } finally {
      child.kill('SIGTERM')
    }
    expect([
      await exited,
      stderr()
        .split('\n')
        .filter((l) => l.startsWith('ocelog: ')),
    ]).toEqual([
      1,
      [
        `ocelog: runner entities: projection read-models/entities stopped at the record at position ${String(poison)} of stream dataset-ds1 after 5 attempt(s): poisoned event type. ` +
          'Fix the cause, then start the projector again: it retries that record',
      ],
    ])
  }, 60_000)

  it('shows the stop in `ocelog status`, with the records behind it', async () => {
    const r = await runCli(dataDir, ['status', '--json'])
    const status = JSON.parse(r.stdout) as Status
    expect([status.head, status.projections.map((p) => [p.projection, p.position, p.lag_records, p.stopped?.position, p.stopped?.cause])]).toEqual([
      3,
      ['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'].map((name) =>
        name === 'directly_follows' ? [name, 3, 0, undefined, undefined] : [name, 1, 2, poison, 'poisoned event type'],
      ),
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

  it('exits 1 by itself once every runner has stopped, naming each', async () => {
    const db = openDatabase(dataDir)
    const log = new SqliteEventLog(db)
    await new Ingest(log).recordEvents([{ event: 'Poison', objects: [{ type: 'order', id: 'o1' }] }], testContext('ds1'))
    await log.close()
    db.close()
    const rmDb = openReadModelsDatabase(dataDir).db
    rmDb.exec(`CREATE TRIGGER poison BEFORE INSERT ON rm_events BEGIN SELECT RAISE(ABORT, 'poisoned event'); END;
               CREATE TRIGGER process.poison BEFORE INSERT ON rm_df_steps BEGIN SELECT RAISE(ABORT, 'poisoned step'); END`)
    rmDb.close()
    const project = spawnCli(dataDir, ['project'])
    const code = await project.exited
    expect(
      project
        .lines()
        .filter((l) => l.msg.startsWith('projector worker '))
        .map((l) => l.msg)
        .sort(),
    ).toEqual([
      'projector worker entities: started; it polls the log for new records',
      'projector worker entities: stopped on a record it cannot apply; the other runners go on',
      'projector worker process: started; it polls the log for new records',
      'projector worker process: stopped on a record it cannot apply; the other runners go on',
    ])
    const [message] = project
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('ocelog: '))
    expect([code, message?.split('; ').sort()]).toEqual([
      1,
      [
        'ocelog: runner entities: projection read-models/entities stopped at the record at position 4 of stream dataset-ds1 after 5 attempt(s): poisoned event',
        'runner process: projection read-models/process stopped at the record at position 4 of stream dataset-ds1 after 5 attempt(s): poisoned step. Fix the cause, then start the projector again: it retries that record',
      ].sort(),
    ])
  }, 60_000)
})
