/**
 * The export's lag warning reads every projector checkpoint, shards included (datasetLag), on a
 * real SQLite file: a dataset kept by shard i of n is as current as that shard's checkpoint, not
 * as the unsharded `read-models` one or another shard's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { datasetCheckpoint, keepsDataset, parseCheckpointName, projectionCheckpoint } from '../../src/projector/checkpoints.js'
import { wholeBatch } from '../../projections/registry.js'
import { datasetHash, Projector } from '../../src/projector/runner.js'
import type { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import type { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import type { Ingest } from '../../src/write/ingest.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'
import { datasetLag, readStatus } from '../../src/projector/status.js'

let fx: SqliteFixture
let log: SqliteEventLog
let store: SqliteReadModelStore
let ingest: Ingest

beforeEach(() => {
  fx = openSqliteFixture('ocelog-lag-')
  ;({ log, store, ingest } = fx)
})
afterEach(() => fx.close())

const DATASETS = ['ds-a', 'ds-b', 'ds-c', 'ds-d', 'ds-e', 'ds-f']
/** A dataset of shard 0 of 2 and one of shard 1. */
const ON_0 = DATASETS.find((d) => datasetHash(d) % 2 === 0) ?? ''
const ON_1 = DATASETS.find((d) => datasetHash(d) % 2 === 1) ?? ''

async function append(datasetId: string, n: number): Promise<void> {
  await ingest.upsertObjects(
    Array.from({ length: n }, (_, i) => ({ type: 'order', id: `o${String(i)}` })),
    testContext(datasetId),
  )
}

/** Moves checkpoint `name` (one checkpoint, the events projection's slice) to `to` (its first apply) with an empty batch. */
async function checkpointAt(name: string, to: number): Promise<void> {
  const batch = wholeBatch([], to, () => ({ checkpoint: name, expected: null }))
  await store.apply({ ...batch, slices: { events: batch.slices.events } })
}

/** Moves every projection's checkpoint of projector `name` (with its shard's suffix, if any) to `to` with an empty batch. */
async function projectorAt(name: string, to: number): Promise<void> {
  const { base, shard } = parseCheckpointName(name)
  await store.apply(wholeBatch([], to, (projection) => ({ checkpoint: projectionCheckpoint(base, projection, shard), expected: null })))
}

describe('datasetLag', () => {
  it('counts nothing behind when the shard that keeps the dataset is at the head, with no unsharded checkpoint', async () => {
    await append(ON_0, 3)
    await new Projector(log, store, { shard: { index: 0, count: 2 } }).catchUp()
    expect(await datasetLag(log, store, ON_0)).toEqual({ checkpoint: 3, behind: 0, lastPosition: null })
  })

  it('counts the records after the keeping shard’s checkpoint, though another shard and a stale unsharded one exist', async () => {
    await append(ON_0, 2)
    await append(ON_1, 2)
    await append(ON_0, 3)
    await projectorAt('read-models', 1)
    await projectorAt('read-models-0-of-2', 2)
    await projectorAt('read-models-1-of-2', 7)
    expect(await datasetLag(log, store, ON_0)).toEqual({ checkpoint: 2, behind: 3, lastPosition: 7 })
    expect(await datasetLag(log, store, ON_1)).toEqual({ checkpoint: 7, behind: 0, lastPosition: null })
  })

  it('ignores checkpoints of other projectors', async () => {
    await append(ON_0, 2)
    await projectorAt('read-models-audit', 2)
    expect(await datasetLag(log, store, ON_0)).toEqual({ checkpoint: null, behind: 2, lastPosition: 2 })
  })

  it('takes the lowest of the projections: a projection rebuilding alone holds the dataset back', async () => {
    await append(ON_0, 4)
    await projectorAt('read-models', 4)
    await store.clearProjection('events', ['events'])
    expect(await datasetLag(log, store, ON_0)).toEqual({ checkpoint: null, behind: 4, lastPosition: 4 })
    await checkpointAt('events', 3)
    expect(await datasetLag(log, store, ON_0)).toEqual({ checkpoint: 3, behind: 1, lastPosition: 4 })
  })
})

describe('checkpoint names', () => {
  it('parses the names Projector gives its shards', () => {
    const p = new Projector(log, store, { shard: { index: 1, count: 3 } })
    expect(parseCheckpointName(p.name)).toEqual({ base: 'read-models', shard: { index: 1, count: 3 } })
    expect(parseCheckpointName(new Projector(log, store).name)).toEqual({ base: 'read-models' })
  })

  it('says which checkpoints keep a dataset', () => {
    expect([keepsDataset('read-models', 'read-models', ON_0), keepsDataset('read-models-0-of-2', 'read-models', ON_0)]).toEqual([true, true])
    expect([keepsDataset('read-models-1-of-2', 'read-models', ON_0), keepsDataset('other-0-of-1', 'read-models', ON_0)]).toEqual([false, false])
  })

  it('takes the highest checkpoint among those that keep a dataset', () => {
    const at = (projection: string, position: number | null) => ({ projection, position, version: 1, updated_at: null, stopped: null })
    const all = (name: string, position: number | null) => {
      const { base, shard } = parseCheckpointName(name)
      return (['event_types', 'object_types', 'objects', 'events', 'object_relationships', 'audit_chain', 'directly_follows', 'declared_types'] as const).map(
        (p) => at(projectionCheckpoint(base, p, shard), position),
      )
    }
    expect(datasetCheckpoint([...all('read-models', 9), ...all('read-models-0-of-2', 4), ...all('read-models-1-of-2', 12)], ON_0)).toBe(9)
    expect(datasetCheckpoint(all('read-models-0-of-2', null), ON_0)).toBeNull()
    // The lowest over the projections: one behind holds the dataset back.
    expect(datasetCheckpoint([...all('read-models', 9).slice(1), at('event_types', 5)], ON_0)).toBe(5)
  })
})

describe('readStatus', () => {
  it('gives the head and each checkpoint with the records after it, and shows an expected projection without one', async () => {
    await append(ON_0, 5)
    await checkpointAt('other-0-of-2', 2)
    const status = await readStatus(log, store, ['read-models'])
    expect([status.head, status.projections.map((p) => [p.projection, p.position, p.lag_records, p.stopped])]).toEqual([
      5,
      [
        ['other-0-of-2', 2, 3, null],
        ['read-models', null, 5, null],
      ],
    ])
  })

  it('does not add an expected projection whose shards are in the store', async () => {
    await append(ON_0, 1)
    await checkpointAt('read-models-0-of-2', 1)
    expect((await readStatus(log, store, ['read-models'])).projections.map((p) => p.projection)).toEqual(['read-models-0-of-2'])
  })

  it('shows a head of null and no lag on an empty log', async () => {
    expect(await readStatus(log, store, ['read-models'])).toEqual({
      head: null,
      projections: [
        { projection: 'read-models', position: null, version: null, updated_at: null, stopped: null, lag_records: 0, lag_records_exact: true, lag_seconds: 0 },
      ],
    })
  })
})
