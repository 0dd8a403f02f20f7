/**
 * The CLI's catch-up on the embedded default (src/projector/catch-up.ts: `ocelog export`, `ocelog mcp`)
 * while another projector (a running `serve`'s worker) applies the same records: it reaches the
 * head of the log without failing on the moved checkpoint.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { catchUpReadModels } from '../../src/projector/catch-up.js'
import { Projector } from '../../src/projector/runner.js'
import { overriding } from '../helpers/override.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'

let fx: SqliteFixture
beforeEach(() => {
  fx = openSqliteFixture('ocelog-catch-up-', { pollMs: 5 })
})
afterEach(() => fx.close())

describe('catchUpReadModels beside a running projector', () => {
  it('reaches the head of the log when another projector moves the checkpoint before each of its applies', async () => {
    for (let b = 0; b < 20; b++) {
      const items = Array.from({ length: 100 }, (_, i) => ({ event: 'Tick', objects: [{ type: 'sensor', id: `s${String(b)}-${String(i)}` }] }))
      await fx.ingest.recordEvents(items, testContext('ds1'))
    }
    const head = (await fx.log.lastPosition()) ?? 0
    // The other projector: before each apply of the CLI's, it applies the next 50 records itself,
    // 15 times in a row (more than the 10 retries the CLI once allowed), then stops.
    let limit = 0
    const stepped = overriding(fx.log, 'readAll', async (after, max) => (await fx.log.readAll(after, max)).filter((r) => r.position <= limit))
    const other = new Projector(stepped, fx.store)
    let steals = 0
    const racing = overriding(fx.store, 'apply', async (...args) => {
      if (steals < 15) {
        steals += 1
        limit = ((await fx.store.checkpoint('events')) ?? 0) + 50
        await other.catchUp()
      }
      return fx.store.apply(...args)
    })
    const reached = await catchUpReadModels({ log: fx.log, readModels: racing })
    expect([reached, await fx.store.checkpoint('events'), steals]).toEqual([head, head, 15])
  }, 30_000)
})
