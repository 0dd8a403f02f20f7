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
})
