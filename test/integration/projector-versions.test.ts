/**
 * One checkpoint and one version per projection (README § Read models), on real SQLite files: when
 * one projection's code version changes, the next projector start clears that projection alone and
 * rebuilds it from the log, while the others keep their checkpoints and resume; sharded projectors
 * rebuild it on every shard.
 */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PROJECTIONS } from '../../projections/registry.js'
import type { ChangeBatch, ProjectionName } from '../../src/core/read-model-changes.js'
import { datasetHash, Projector } from '../../src/projector/runner.js'
import { overriding } from '../helpers/override.js'
import { sqliteRows } from '../helpers/read-model-rows.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'

let fx: SqliteFixture

beforeEach(() => {
  fx = openSqliteFixture('ocelog-versions-')
})
afterEach(() => fx.close())

async function seed(datasetId: string, suffix = ''): Promise<void> {
  const ctx = testContext(datasetId)
  await fx.ingest.upsertObjects([{ type: 'customer', id: `c1${suffix}`, properties: { tier: 'silver' } }], ctx)
  await fx.ingest.recordEvents(
    [
      {
        event: 'Create Order',
        timestamp: '2024-01-01T10:00:00Z',
        objects: [
          { type: 'order', id: `o1${suffix}`, properties: { amount: 10 } },
          { type: 'customer', id: `c1${suffix}` },
        ],
      },
      { event: 'Pay Order', timestamp: '2024-01-02T10:00:00Z', objects: [{ type: 'order', id: `o1${suffix}`, properties: { paid: true } }] },
    ],
    ctx,
  )
  await fx.ingest.upsertObjects(
    [{ type: 'order', id: `o1${suffix}`, properties: { amount: 12 }, relationships: [{ type: 'customer', id: `c1${suffix}`, qualifier: 'placed by' }] }],
    ctx,
  )
}

/** Each checkpoint in the store: [name, position, version]. */
async function checkpoints(): Promise<[string, number | null, number | null][]> {
  return (await fx.store.projections()).map((p) => [p.projection, p.position, p.version])
}

/** Runs `body` with projection `name` at `version` (a build that changed it), then restores it. */
async function withVersion<T>(name: ProjectionName, version: number, body: () => Promise<T>): Promise<T> {
  const projection = PROJECTIONS[name]
  const before = projection.version
  projection.version = version
  try {
    return await body()
  } finally {
    projection.version = before
  }
}

/** The store, recording the projections of each batch applied. */
function recording(): { store: typeof fx.store; batches: string[][]; cleared: [string, readonly string[]][] } {
  const batches: string[][] = []
  const cleared: [string, readonly string[]][] = []
  const applying = overriding(fx.store, 'apply', (batch: ChangeBatch) => {
    batches.push(Object.keys(batch.slices))
    return fx.store.apply(batch)
  })
  const store = overriding(applying, 'clearProjection', (projection: ProjectionName, names: readonly string[]) => {
    cleared.push([projection, names])
    return fx.store.clearProjection(projection, names)
  })
  return { store, batches, cleared }
}

describe('a projection whose version changed', () => {
  it('is cleared and rebuilt alone at the next start; the others keep their checkpoints and resume', async () => {
    await seed('ds1')
    await new Projector(fx.log, fx.store).catchUp()
    const head = (await fx.log.lastPosition()) ?? 0
    const rows = await sqliteRows(fx.rmDb)('ds1')
    expect(await checkpoints()).toEqual(
      (['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'] as const).map((n) => [
        n,
        head,
        PROJECTIONS[n].version,
      ]),
    )
    expect(rows.objects.length).toBeGreaterThan(0)

    // Records appended before the upgrade: the projections that keep their version take only these.
    await seed('ds1', '-2')
    const newHead = (await fx.log.lastPosition()) ?? 0
    const { store, batches, cleared } = recording()
    const warnings: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) })
    await withVersion('objects', 2, () => new Projector(fx.log, store, { logger, maxBatch: 4 }).catchUp())

    expect(cleared).toEqual([['objects', ['objects']]])
    expect(warnings).toEqual(['projection objects: the read models hold version 1 and this build writes version 2; rebuilding objects alone from the log'])
    // Up to the old head only the objects projection folds records; past it, all of them.
    const upToOldHead = batches.slice(0, Math.ceil(head / 4))
    expect(upToOldHead.every((names) => names.length === 1 && names[0] === 'objects')).toBe(true)
    expect(batches[batches.length - 1]).toEqual([
      'event_types',
      'object_types',
      'objects',
      'events',
      'object_relationships',
      'audit_chain',
      'directly_follows',
      'declared_types',
    ])
    expect(await checkpoints()).toEqual([
      ['audit_chain', newHead, 1],
      ['declared_types', newHead, 1],
      ['directly_follows', newHead, PROJECTIONS.directly_follows.version],
      ['event_types', newHead, 1],
      ['events', newHead, 1],
      ['object_relationships', newHead, 1],
      ['object_types', newHead, 1],
      ['objects', newHead, 2],
    ])
    // Its rows are rebuilt equal to what one projector writes from scratch over the whole log.
    const rebuilt = await sqliteRows(fx.rmDb)('ds1')
    await new Projector(fx.log, fx.store).rebuild()
    expect(rebuilt).toEqual(await sqliteRows(fx.rmDb)('ds1'))
    expect(rebuilt.objects).toHaveLength(rows.objects.length * 2)
  })

  it('is not touched when the versions agree', async () => {
    await seed('ds1')
    await new Projector(fx.log, fx.store).catchUp()
    const { store, batches, cleared } = recording()
    expect(await new Projector(fx.log, store).catchUp()).toBe(0)
    expect([cleared, batches]).toEqual([[], []])
  })

  it('is rebuilt on every shard, each taking its own datasets again', async () => {
    const names = ['ds-a', 'ds-b', 'ds-c', 'ds-d', 'ds-e', 'ds-f']
    const datasets = [0, 1].map((i) => names.find((d) => datasetHash(d) % 2 === i) ?? '')
    for (const d of datasets) await seed(d)
    const shard = (index: number, store = fx.store) => new Projector(fx.log, store, { shard: { index, count: 2 } })
    for (const i of [0, 1]) await shard(i).catchUp()
    const head = (await fx.log.lastPosition()) ?? 0
    const before = await Promise.all(datasets.map((d) => sqliteRows(fx.rmDb)(d)))
    const { store, cleared } = recording()
    await withVersion('object_relationships', 3, async () => {
      // The first shard to start clears the projection for both: the other's checkpoint goes too.
      await shard(0, store).catchUp()
      expect((await checkpoints()).filter(([n]) => n.startsWith('object_relationships'))).toEqual([['object_relationships-0-of-2', head, 3]])
      await shard(1, store).catchUp()
    })
    expect(cleared).toEqual([['object_relationships', ['object_relationships-0-of-2', 'object_relationships-1-of-2']]])
    expect((await checkpoints()).filter(([n]) => n.startsWith('object_relationships') || n.startsWith('events'))).toEqual([
      ['events-0-of-2', head, 1],
      ['events-1-of-2', head, 1],
      ['object_relationships-0-of-2', head, 3],
      ['object_relationships-1-of-2', head, 3],
    ])
    expect(await Promise.all(datasets.map((d) => sqliteRows(fx.rmDb)(d)))).toEqual(before)
  })
})
