/**
 * The SQLite window map reads a window's steps in chunks along their key (dataset, time,
 * position, object) and groups them in one pass (src/adapters/sqlite/read-models/sqlite-df-query.ts): an
 * event's steps are counted together, so a chunk that ends inside an event must not change the
 * map. A seeded log (generateDfLog; every fourth event at the time of the one before it, so that
 * positions break ties of time) is projected once, and the window maps read in chunks of 1 to
 * 1,000 steps must all equal the map computed from the definitions
 * (docs/process-map.md#definitions), for closed and open windows and some object types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sqliteProcessMap } from '../../src/adapters/sqlite/read-models/sqlite-df-query.js'
import { Projector } from '../../src/projector/runner.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { dfRecords, expectMapWithin, generateDfLog, type ReferenceEvent, referenceMap } from '../helpers/process-map-reference.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const EVENTS = 400
const CHUNKS = [1, 2, 3, 7, 64, 1000]

describe('SQLite window map read in chunks', () => {
  let fx: SqliteFixture
  beforeAll(() => {
    fx = openSqliteFixture('ocelog-window-chunks-')
  })
  afterAll(async () => {
    await fx.log.close()
    fx.close()
  })

  it(`gives the map of the definitions whatever the chunk (${CHUNKS.join(', ')} steps)`, async () => {
    const events = generateDfLog(7, EVENTS).map((e, i, all): ReferenceEvent => {
      const before = all[i - 1]
      if (i % 4 !== 3 || before === undefined) return e
      return { ...e, t: before.t, te: e.te === null ? null : Math.max(e.te, before.t) }
    })
    const ds = freshDatasetId()
    await fx.log.append(ds, dfRecords(ds, events), [])
    await new Projector(fx.log, fx.store).catchUp()
    const did = (fx.rmDb.prepare('SELECT did FROM rm_datasets WHERE dataset_id = ?').get(ds) as { did: number }).did
    const first = (events[0] as ReferenceEvent).t
    const span = (events[events.length - 1] as ReferenceEvent).t - first
    const windows = [
      { from: first + Math.floor(span / 4), to: first + Math.floor((3 * span) / 4) },
      { from: first + Math.floor(span / 2) },
      { to: first + Math.floor(span / 2) },
    ]
    const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())
    let edges = 0
    for (const w of windows) {
      const filter = { ...(w.from === undefined ? {} : { from: iso(w.from) }), ...(w.to === undefined ? {} : { to: iso(w.to) }) }
      const expected = referenceMap(events, w)
      edges += expected.flatMap((m) => m.edges).length
      for (const chunkSteps of CHUNKS) {
        const map = sqliteProcessMap(fx.rmDb, did, filter, chunkSteps)
        expect(map.median_relative_error).toBe(0)
        expectMapWithin(map.object_types, expected, 0)
        const some = sqliteProcessMap(fx.rmDb, did, { ...filter, objectTypes: ['item', 'package'] }, chunkSteps)
        expectMapWithin(
          some.object_types,
          expected.filter((m) => m.object_type === 'item' || m.object_type === 'package'),
          0,
        )
      }
    }
    // The log exercises what it should: edges in every window, shared couples, times tied.
    expect(edges).toBeGreaterThan(30)
    expect(events.filter((e, i) => i > 0 && e.t === (events[i - 1] as ReferenceEvent).t).length).toBe(EVENTS / 4)
  }, 60_000)
})
