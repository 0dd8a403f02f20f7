/**
 * A replay changes nothing in the directly-follows read model (docs/process-map.md): applying
 * again, over the SQLite store that holds them, batches of records it already applied (the whole
 * log, a run from its middle, the last batch under the projector's own checkpoint) leaves every
 * `rm_df_*` row and both maps (all time, a window) as they were. The records are the real log's,
 * appended out of time order so that the store holds relinked steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import { wholeBatch } from '../../projections/registry.js'
import { DF_TABLES } from '../../src/adapters/sqlite/read-models/sqlite-df-writes.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { READ_MODELS_PROJECTION, projectionCheckpoint } from '../../src/projector/checkpoints.js'
import { Projector } from '../../src/projector/runner.js'
import type { StoredRecord } from '../../src/schemas/records.js'
import { batchOf, freshDatasetId } from '../contract/fixtures.js'
import { dfRecords, expectMapWithin, generateDfLog, type ReferenceEvent, referenceMap, shuffled } from '../helpers/process-map-reference.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const iso = (ms: number) => new Date(ms).toISOString()

describe('directly-follows read model: replays', () => {
  let fx: SqliteFixture
  let query: SqliteReadModelQuery
  beforeAll(() => {
    fx = openSqliteFixture('ocelog-df-replay-')
    query = new SqliteReadModelQuery(fx.rmDb)
  })
  afterAll(async () => {
    await fx.log.close()
    fx.close()
  })

  /** Every row of every directly-follows table, sorted. */
  const dfRows = () =>
    Object.fromEntries(
      DF_TABLES.map((table) => [table, (fx.rmDb.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[]).map((r) => JSON.stringify(r)).sort()]),
    )

  it('changes no rm_df_* row and no map when batches already applied are applied again', async () => {
    const ds = freshDatasetId()
    const events = generateDfLog(7, 200)
    const random = seededRandom(7)
    const projector = new Projector(fx.log, fx.store)
    const order = shuffled(random, events)
    for (let i = 0; i < order.length; i += 25) {
      await fx.log.append(ds, dfRecords(ds, order.slice(i, i + 25)), [])
      await projector.catchUp()
    }
    const records: StoredRecord[] = await fx.log.readAll(null, 1000)
    expect(records).toHaveLength(200)
    const last = (records[records.length - 1] as StoredRecord).position
    const span = { from: (events[0] as ReferenceEvent).t, to: (events[events.length - 1] as ReferenceEvent).t }
    const window = { from: span.from + Math.floor((span.to - span.from) / 3), to: span.from + Math.floor((2 * (span.to - span.from)) / 3) }
    const maps = async () => ({
      all: await query.processMap(ds, {}),
      window: await query.processMap(ds, { from: iso(window.from), to: iso(window.to) }),
    })

    const rows = dfRows()
    expect(rows.rm_df_steps?.length).toBe(events.reduce((n, e) => n + e.objects.length, 0))
    // Some steps arrived before their predecessors: the store relinked them.
    const steps = (rows.rm_df_steps ?? []).map((r) => JSON.parse(r) as { pos: number; prev_pos: number | null })
    expect(steps.filter((r) => r.prev_pos !== null && r.prev_pos > r.pos).length).toBeGreaterThan(20)
    const before = await maps()
    expectMapWithin(before.all.object_types, referenceMap(events), before.all.median_relative_error)
    expectMapWithin(before.window.object_types, referenceMap(events, window), 0)

    // The whole log again, as a second projector with checkpoints of its own would apply it.
    await fx.store.apply(batchOf('replayer', null, last, records))
    expect(dfRows()).toEqual(rows)
    // A run from the middle of the log, out of time order.
    const middle = records.slice(80, 130)
    await fx.store.apply(batchOf('middle', null, (middle[middle.length - 1] as StoredRecord).position, middle))
    expect(dfRows()).toEqual(rows)
    // The projector's last batch again, from its own checkpoint (a retry after a lost acknowledgement).
    await fx.store.apply(
      wholeBatch(records.slice(-25), last, (projection) => ({ checkpoint: projectionCheckpoint(READ_MODELS_PROJECTION, projection), expected: last })),
    )
    expect(dfRows()).toEqual(rows)
    // One record alone.
    const one = records[150] as StoredRecord
    await fx.store.apply(batchOf('one', null, one.position, [one]))
    expect(dfRows()).toEqual(rows)
    expect(await maps()).toEqual(before)
  })
})
