/**
 * Projection runners (docs/architecture.md#projection-runners-and-leases) on real SQLite files:
 * each runner applies its own projections with their own checkpoints and stops, so one runner
 * stopped on a record leaves the other going, and a rebuild of one runner leaves the other's
 * checkpoints alone. A poison record is made by a trigger that refuses one event type in
 * `rm_events`, which only the `entities` runner writes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ProjectionStoppedError } from '../../src/core/errors.js'
import { PROJECTION_NAMES } from '../../src/core/read-model-changes.js'
import { Projector } from '../../src/projector/runner.js'
import { leaseName, RUNNER_NAMES, runnerProjections } from '../../src/projector/runners.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'
import { ridOf } from '../../src/adapters/sqlite/read-models/read-models-database.js'

let fx: SqliteFixture
beforeEach(() => {
  fx = openSqliteFixture('ocelog-runners-', { pollMs: 10 })
})
afterEach(() => fx.close())

async function events(datasetId: string, ...names: string[]): Promise<void> {
  await fx.ingest.recordEvents(
    names.map((event, i) => ({ event, timestamp: `2024-01-01T10:00:0${String(i)}Z`, objects: [{ type: 'order', id: 'o1' }] })),
    testContext(datasetId),
  )
}

const noWait = async () => {}

/** Each checkpoint's position, by name. */
async function checkpoints(): Promise<Record<string, number | null>> {
  return Object.fromEntries((await fx.store.projections()).map((p) => [p.projection, p.position]))
}

describe('projection runners', () => {
  it('split every projection between them, each exactly once, and name their leases by shard', () => {
    const all = RUNNER_NAMES.flatMap(runnerProjections)
    expect([...all].sort()).toEqual([...PROJECTION_NAMES].sort())
    expect(runnerProjections('process')).toEqual(['directly_follows'])
    expect([leaseName('entities'), leaseName('process', { index: 1, count: 3 }), leaseName('process', { index: 0, count: 1 })]).toEqual([
      'entities',
      'process-1-of-3',
      'process',
    ])
  })

  it('stop apart: the entities runner stops on a poison record while the process runner applies the whole log', async () => {
    fx.rmDb.exec(`CREATE TRIGGER poison BEFORE INSERT ON rm_events WHEN NEW.event_type_id = (SELECT nid FROM rm_names WHERE name = 'Poison')
             BEGIN SELECT RAISE(ABORT, 'poisoned event type'); END`)
    await events('ds1', 'Create Order', 'Poison', 'Ship Order')
    const entities = new Projector(fx.log, fx.store, { runner: 'entities', sleep: noWait, settleMs: 0 })
    const process = new Projector(fx.log, fx.store, { runner: 'process', settleMs: 0 })
    const abort = new AbortController()
    const processRun = process.run(abort.signal)
    const stopped = await entities.run(abort.signal)
    await process.catchUp()
    abort.abort()
    await processRun

    expect(stopped).toBeInstanceOf(ProjectionStoppedError)
    expect([stopped?.stop.projection, stopped?.stop.position, stopped?.stop.cause]).toEqual(['read-models/entities', 2, 'poisoned event type'])
    const states = await fx.store.projections()
    // The process runner's checkpoint is at the head, not stopped; every entities projection stopped before the poison record.
    expect(states.map((p) => [p.projection, p.position, p.stopped?.position ?? null])).toEqual([
      ['audit_chain', 1, 2],
      ['declared_types', 1, 2],
      ['directly_follows', 3, null],
      ['event_types', 1, 2],
      ['events', 1, 2],
      ['object_relationships', 1, 2],
      ['object_types', 1, 2],
      ['objects', 1, 2],
    ])
  })

  it("rebuild apart: a rebuild of the process runner leaves the entities runner's checkpoints and rows alone", async () => {
    await events('ds1', 'Create Order', 'Pick', 'Ship Order')
    await new Projector(fx.log, fx.store, { runner: 'entities', settleMs: 0 }).catchUp()
    const process = new Projector(fx.log, fx.store, { runner: 'process', settleMs: 0 })
    expect(await process.catchUp()).toBe(3)
    const before = await fx.store.projections()
    const entityStates = before.filter((p) => p.projection !== 'directly_follows')
    expect(entityStates.map((p) => p.position)).toEqual([3, 3, 3, 3, 3, 3, 3])

    expect(await new Projector(fx.log, fx.store, { runner: 'process', settleMs: 0 }).rebuild()).toBe(3)
    const after = await fx.store.projections()
    // The entities runner's checkpoints are the same rows, not re-applied (their updated_at did not move).
    expect(after.filter((p) => p.projection !== 'directly_follows')).toEqual(entityStates)
    expect(await checkpoints()).toMatchObject({ directly_follows: 3, events: 3 })
    const steps = fx.rmDb.prepare('SELECT count(*) AS n FROM rm_df_steps').get() as { n: number }
    expect(steps.n).toBe(3)
  })

  it('write a file each, with the row ids of the log in both, whatever their runs: the readers join the files on them', async () => {
    await fx.ingest.upsertObjects(
      [
        {
          type: 'customer',
          id: 'c1',
          relationships: [
            { type: 'order', id: 'o9', qualifier: 'placed' },
            { type: 'order', id: 'o1' },
          ],
        },
      ],
      testContext('ds2'),
    )
    await events('ds1', 'Create Order', 'Pick', 'Ship Order')
    await fx.ingest.recordEvents(
      [
        {
          event: 'Bill',
          timestamp: '2024-01-01T11:00:00Z',
          objects: [
            { type: 'order', id: 'o1' },
            { type: 'invoice', id: 'i1' },
          ],
        },
      ],
      testContext('ds2'),
    )
    // Runs of one record and of the whole log: identities are made in other transactions in each file.
    await new Projector(fx.log, fx.store, { runner: 'entities', settleMs: 0, maxBatch: 1 }).catchUp()
    await new Projector(fx.log, fx.store, { runner: 'process', settleMs: 0 }).catchUp()
    const identities = (schema: string) => ({
      datasets: fx.rmDb.prepare(`SELECT did, dataset_id FROM ${schema}.rm_datasets ORDER BY did`).all(),
      objects: fx.rmDb.prepare(`SELECT rid, did, type, external_id, first_position FROM ${schema}.rm_objects ORDER BY rid`).all(),
    })
    const entities = identities('main')
    expect(identities('process')).toEqual(entities)
    // A dataset's row id is its first record's position; an object's is that record's position × 128 + its index in the record.
    expect(entities.datasets).toEqual([
      { did: 1, dataset_id: 'ds2' },
      { did: 2, dataset_id: 'ds1' },
    ])
    expect(entities.objects).toEqual([
      { rid: 128, did: 1, type: 'customer', external_id: 'c1', first_position: 1 },
      { rid: 129, did: 1, type: 'order', external_id: 'o9', first_position: 1 },
      { rid: 130, did: 1, type: 'order', external_id: 'o1', first_position: 1 },
      { rid: 256, did: 2, type: 'order', external_id: 'o1', first_position: 2 },
      { rid: 641, did: 1, type: 'invoice', external_id: 'i1', first_position: 5 },
    ])
    // Each runner's read models are in its own file only.
    const tableIn = (schema: string, table: string) => fx.rmDb.prepare(`SELECT count(*) FROM ${schema}.sqlite_schema WHERE name = ?`).pluck().get(table)
    expect([tableIn('main', 'rm_df_steps'), tableIn('process', 'rm_df_steps'), tableIn('main', 'rm_events'), tableIn('process', 'rm_events')]).toEqual([
      0, 1, 1, 0,
    ])
    expect(() => ridOf(1, 128)).toThrow(RangeError)
  })
})
