/**
 * The PostgreSQL log's positions under concurrency (docs/architecture.md#the-log-on-postgresql):
 * several writers, each on its own pool (as separate API processes are to the server), append
 * 100,000 records while a trigger holds some append transactions open inside their insert and
 * aborts others, and a reader follows the log as a projector does (`position > checkpoint`). The
 * reader must see every acknowledged record exactly once, in dense positions, and no record that
 * was not acknowledged.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { LogUnavailableError } from '../../src/ports/event-log.js'
import type { StoredRecord } from '../../src/schemas/records.js'
import { eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
const WRITERS = 4
const TOTAL = 100_000
const PER_APPEND_MAX = 100

let url = ''
let setupPool: pg.Pool

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'log_race')
  setupPool = openPostgresPool(url)
  await migrate(setupPool)
  // The test's saboteurs, not Ocelog's: about 1 append transaction in 30 sleeps 20 ms inside its
  // insert, after it took the head (a slow commit holding its positions); and any insert of an
  // event named "abort-me" aborts its transaction (the writers send such appends now and then).
  await setupPool.query(`
    CREATE FUNCTION ocelog.test_sleeper() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF random() < 0.033 THEN PERFORM pg_sleep(0.02); END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER test_sleeper AFTER INSERT ON ocelog.records FOR EACH STATEMENT EXECUTE FUNCTION ocelog.test_sleeper();
    CREATE FUNCTION ocelog.test_aborter() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.data LIKE '%"event_type":"abort-me"%' THEN RAISE EXCEPTION 'test aborts this append' USING ERRCODE = 'check_violation'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_aborter BEFORE INSERT ON ocelog.records FOR EACH ROW EXECUTE FUNCTION ocelog.test_aborter();`)
}, 120_000)

afterAll(async () => {
  await setupPool?.end()
})

describe.skipIf(admin === null)('PostgreSQL log under concurrent appends', () => {
  it('shows a follower every acknowledged record once, in dense positions, and nothing else', async () => {
    const pools = Array.from({ length: WRITERS }, () => openPostgresPool(url, { max: 4 }))
    const logs = pools.map((p) => new PostgresEventLog(p, { pollMs: 20 }))
    const readerPool = openPostgresPool(url, { max: 2 })
    const reader = new PostgresEventLog(readerPool, { pollMs: 10 })
    const acknowledged = new Map<string, number>()
    let refused = 0
    let sent = 0

    const seen: StoredRecord[] = []
    const controller = new AbortController()
    const following = (async () => {
      for await (const batch of reader.tail(null, { signal: controller.signal, maxBatch: 5000 })) seen.push(...batch)
    })()

    const writer = async (log: PostgresEventLog, w: number) => {
      const dataset = freshDatasetId()
      while (sent < TOTAL) {
        // Several appends in flight per writer, so the writer's group commits hold several callers.
        const calls = Array.from({ length: 4 }, () => {
          const n = Math.min(1 + Math.floor(Math.random() * PER_APPEND_MAX), Math.max(1, TOTAL - sent))
          sent += n
          const activity = Math.random() < 0.02 ? 'abort-me' : `w${String(w)}`
          const records = Array.from({ length: n }, (_, i) => eventRecord(dataset, activity, [{ type: 'order', id: `o${String(i % 7)}` }]))
          return log.append(dataset, records, []).then(
            (result) => {
              records.forEach((r, i) => {
                if (r.type === 'EventRecorded') acknowledged.set(r.data.event_id, result.positions[i] ?? -1)
              })
            },
            (error: unknown) => {
              if (!(error instanceof LogUnavailableError)) throw error
              refused += n
            },
          )
        })
        await Promise.all(calls)
      }
    }
    await Promise.all(logs.map((log, w) => writer(log, w)))

    const head = (await reader.lastPosition()) ?? 0
    const deadline = Date.now() + 60_000
    while ((seen[seen.length - 1]?.position ?? 0) < head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    controller.abort()
    await following

    // Writes were acknowledged and refused (the saboteur aborted some), and the sum is what was sent.
    expect(acknowledged.size).toBeGreaterThan(TOTAL * 0.5)
    expect(refused).toBeGreaterThan(0)
    expect(acknowledged.size + refused).toBe(sent)
    // Dense positions from 1 to the head, each seen once, in order.
    expect(head).toBe(acknowledged.size)
    expect(seen.map((r) => r.position)).toEqual(Array.from({ length: head }, (_, i) => i + 1))
    // Exactly the acknowledged records, at the positions their appends answered.
    const seenIds = new Map(seen.map((r) => [r.type === 'EventRecorded' ? r.data.event_id : '', r.position]))
    expect(seenIds.size).toBe(acknowledged.size)
    const misplaced = [...acknowledged].filter(([id, position]) => seenIds.get(id) !== position)
    expect(misplaced).toEqual([])

    await Promise.all(logs.map((l) => l.close()))
    await reader.close()
    await Promise.all([...pools, readerPool].map((p) => p.end()))
  }, 300_000)
})
