/**
 * PostgresReadModelQuery answers as SqliteReadModelQuery on a real OCEL 2.0 log (ocpa's logistics
 * log: about 8,700 events, 970 objects): one SQLite log, imported the way `ocelog import` does,
 * projected by the real Projector into SQLite's read models and into PostgreSQL's (on the run's
 * server, test/helpers/postgres-global-setup.ts); then every read of the port, with and without a
 * window, is asked of both and must be equal. Skipped, with the reason printed, without the shared
 * logs or a server.
 */
import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/sqlite-read-model-query.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import type { ReadModelQuery } from '../../src/ports/read-model-query.js'
import { Projector } from '../../src/projector/runner.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { loadOcel } from '../helpers/load-ocel.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const admin = postgresAdminUrl()
const LOGISTICS = 'derived/ocpa__logistics.ocel2.json'

describeWithSharedOcel('PostgreSQL read models answer as SQLite’s on a real log', () => {
  let fx: SqliteFixture
  let url = ''
  let pool: pg.Pool
  let sqlite: SqliteReadModelQuery
  let postgres: PostgresReadModelQuery
  const ds = freshDatasetId()

  beforeAll(async () => {
    if (admin === null) return
    fx = openSqliteFixture('ocelog-pg-agreement-')
    await loadOcel(readOcelFile(ocelFixture(LOGISTICS), parseTimeZone('UTC')), ds, { log: fx.log, store: fx.store })
    url = await freshPostgresDatabase(admin, 'agreement')
    pool = openPostgresPool(url, { max: 4 })
    await migrate(pool)
    await new Projector(fx.log, new PostgresReadModelStore(pool)).catchUp()
    sqlite = new SqliteReadModelQuery(fx.rmDb)
    postgres = new PostgresReadModelQuery(pool)
  }, 300_000)
  afterAll(async () => {
    await fx?.log.close()
    fx?.close()
    await pool?.end()
    if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
  })

  /** Asks both adapters `read` and expects equal answers; gives SQLite's. */
  async function same<T>(read: (q: ReadModelQuery) => Promise<T>): Promise<T> {
    const expected = await read(sqlite)
    expect(await read(postgres)).toEqual(expected)
    return expected
  }

  it.skipIf(admin === null)('for every read, all time and in a window', { timeout: 300_000 }, async () => {
    expect(await postgres.asOf()).toBe(await sqlite.asOf())
    const summary = await same((q) => q.summary(ds))
    expect(summary.events).toBeGreaterThan(8000)
    const types = (await same((q) => q.objectTypes(ds))).map((t) => t.name)
    await same((q) => q.eventTypes(ds))
    const first = Date.parse(summary.first_event_time ?? '')
    const span = Date.parse(summary.last_event_time ?? '') - first
    const window = { from: new Date(first + span / 3).toISOString(), to: new Date(first + (2 * span) / 3).toISOString() }
    for (const w of [{}, window]) {
      const map = await same((q) => q.processMap(ds, w))
      expect(map.object_types.length).toBe(types.length)
      await same((q) => q.processMap(ds, { ...w, objectTypes: types.slice(0, 2) }))
      await same((q) => q.performance(ds, { ...w, slowest: 5 }))
      await same((q) => q.typeRelations(ds, w))
      for (const objectType of types) {
        let page = await same((q) => q.variants(ds, { ...w, objectType, limit: 25 }))
        for (let n = 0; n < 3 && page.next !== null; n++) {
          const after = page.next
          page = await same((q) => q.variants(ds, { ...w, objectType, limit: 25, after }))
        }
      }
      let events = await same((q) => q.events(ds, { ...w, limit: 200 }))
      for (let n = 0; n < 3 && events.next !== null; n++) {
        const after = events.next
        events = await same((q) => q.events(ds, { ...w, limit: 200, after, count: false }))
      }
    }
    for (const type of types) {
      const [object] = (await same((q) => q.events(ds, { objectType: type, limit: 1 }))).events[0]?.objects.filter((o) => o.type === type) ?? []
      if (object === undefined) continue
      await same((q) => q.events(ds, { objectType: type, objectId: object.id, limit: 50 }))
      await same((q) => q.object(ds, type, object.id, 20))
    }
    let histories = await same((q) => q.objectHistories(ds, { limit: 300 }))
    let objects = histories.objects.length
    while (histories.next !== null) {
      const after = histories.next
      histories = await same((q) => q.objectHistories(ds, { limit: 300, after }))
      objects += histories.objects.length
    }
    expect(objects).toBe(summary.objects)
    const shared = await same((q) => q.sharedObjectIds(ds))
    await same((q) => q.objectsWithIds(ds, shared.slice(0, 20)))
    const chain = await same((q) => q.auditChain(ds, null, 500))
    expect(chain.length).toBe(500)
    await same((q) => q.auditChainAt(ds, null))
  })
})
