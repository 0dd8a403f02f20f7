/**
 * PostgreSQL's index of each edge's couples (`rm_df_steps_by_edge`, migration 4,
 * docs/process-map.md#medians-of-the-all-time-map), on the run's real server: a database that
 * version 3 made, with the two indexes ordered by elapsed and waiting time, migrates to the one index
 * in time order, and late events that empty an edge's kept extremes afterwards are refilled from it:
 * the all-time map's min and max equal those of a window over all of it (which reads every couple).
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { Projector } from '../../src/projector/runner.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'

const admin = postgresAdminUrl()
const BASE = Date.parse('2024-05-01T10:00:00.000Z')
const MIN = 60
const at = (minutes: number): string => new Date(BASE + minutes * 60_000).toISOString()
let url = ''
let pool: pg.Pool
let log: PostgresEventLog

beforeAll(async () => {
  if (admin === null) return
  url = await freshPostgresDatabase(admin, 'edge_index')
  pool = openPostgresPool(url, { max: 4 })
}, 60_000)
afterAll(async () => {
  await log?.close()
  await pool?.end()
  if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
})

/** The indexes of ocelog.rm_df_steps, sorted by name. */
async function stepIndexes(): Promise<string[]> {
  const r = await pool.query<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'ocelog' AND tablename = 'rm_df_steps' ORDER BY 1")
  return r.rows.map((x) => x.name)
}

describe.skipIf(admin === null)('PostgreSQL edge index (migration 4)', () => {
  it("migrates version 3's two value-ordered indexes to one in time order, and refills an edge's emptied extremes from it", async () => {
    expect(await migrate(pool, { to: 3 })).toBe(0)
    expect(await stepIndexes()).toEqual(['rm_df_steps_by_edge_elapsed', 'rm_df_steps_by_edge_waiting', 'rm_df_steps_by_time', 'rm_df_steps_pkey'])
    log = new PostgresEventLog(pool, { pollMs: 50 })
    const ds = freshDatasetId()
    const store = new PostgresReadModelStore(pool)
    const load = async (records: NewRecord[], per: number): Promise<void> => {
      for (let i = 0; i < records.length; i += per) await log.append(ds, records.slice(i, i + per), [])
      await new Projector(log, store).catchUp()
    }
    // o1: A every 10 + i minutes (i = 0…99), each ending a minute later: A → A holds 100 elapsed and waiting times (sketched).
    const starts: number[] = [0]
    for (let i = 0; i < 100; i += 1) starts.push((starts[i] as number) + 10 + i)
    await load(
      starts.map((m) => eventRecord(ds, 'A', [{ type: 'order', id: 'o1' }], { timestamp: at(m), endTimestamp: at(m + 1) })),
      20,
    )
    // Migration 4 alone, whatever later migrations add.
    expect(await migrate(pool, { to: 4 })).toBe(3)
    expect(await stepIndexes()).toEqual(['rm_df_steps_by_edge', 'rm_df_steps_by_time', 'rm_df_steps_pkey'])
    // Late B events split all but the 10 middle couples (i = 45…54), in appends of 5: every kept end empties, some more than once.
    const late = starts
      .slice(0, -1)
      .flatMap((m, i) => (i >= 45 && i < 55 ? [] : [eventRecord(ds, 'B', [{ type: 'order', id: 'o1' }], { timestamp: at(m + 3) })]))
    await load(late, 5)
    const query = new PostgresReadModelQuery(pool)
    const loop = async (filter: { from?: string; to?: string }) => {
      const map = await query.processMap(ds, filter)
      const edge = map.object_types[0]?.edges.find((e) => e.source === 'A' && e.target === 'A')
      return [edge?.total, edge?.elapsed.min, edge?.elapsed.max, edge?.waiting?.min, edge?.waiting?.max]
    }
    expect(await loop({})).toEqual([10, 55 * MIN, 64 * MIN, 54 * MIN, 63 * MIN])
    expect(await loop({ from: at(0), to: at(100_000) })).toEqual(await loop({}))
  })
})
