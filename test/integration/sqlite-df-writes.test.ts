/**
 * The SQLite write of the directly-follows read model (src/adapters/sqlite/read-models/sqlite-df-writes.ts;
 * docs/process-map.md#the-directly-follows-read-model) on a real read-models.db: one neighbour
 * statement per cluster of an object's new steps, whatever the object's stored history between
 * them, and the rows the same events give applied one by one; the refill of an edge's kept smallest
 * and largest durations, one bounded index read per emptied end. The statements are the prepared
 * ones, counted through a Proxy that passes every call on.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { DfObjectMemory } from '../../src/core/df-object-memory.js'
import { DF_TABLES, type DfStatements, prepareDfStatements, writeDirectlyFollows } from '../../src/adapters/sqlite/read-models/sqlite-df-writes.js'
import { type DurationStats, EXTREMES, summarize } from '../../src/core/duration-stats.js'
import type { DirectlyFollowsEvent } from '../../src/core/read-model-changes.js'

const MIN = 60_000
const T0 = Date.parse('2024-05-01T10:00:00.000Z')

/** An event of dataset `ds1` at `minutes` after T0, of orders `o…` and items `i…`. */
const event = (position: number, activity: string, minutes: number, objects: string[]): DirectlyFollowsEvent => ({
  datasetId: 'ds1',
  position,
  activity,
  time: T0 + minutes * MIN,
  endTime: null,
  objects: objects.map((objectId) => ({ objectId, type: objectId.startsWith('o') ? 'order' : 'item' })),
})

const dirs: string[] = []
const dbs: SqliteDatabase[] = []
afterAll(() => {
  for (const db of dbs) db.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * A fresh read-models.db with the directly-follows statements, `neighbours` counted; `write` applies a
 * run in one transaction. With `memory`, the write keeps a DfObjectMemory between runs, as the store does.
 */
function openStore(options: { memory?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-df-writes-'))
  dirs.push(dir)
  const { db } = openReadModelsDatabase(dir)
  dbs.push(db)
  const prepared = prepareDfStatements(db)
  const reads = { neighbours: 0 }
  const neighbours = new Proxy(prepared.neighbours, {
    get(target, key, receiver) {
      if (key === 'all') reads.neighbours += 1
      const v: unknown = Reflect.get(target, key, receiver)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
  // Refill reads: statements run and rows handed out.
  const refills = { reads: 0, rows: 0 }
  const countRows = (statement: DfStatements['edgeValues']['durations']['lo']) =>
    new Proxy(statement, {
      get(target, key, receiver) {
        const v: unknown = Reflect.get(target, key, receiver)
        if (key !== 'all' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v
        return (...args: Parameters<typeof target.all>) => {
          const out = target.all(...args)
          refills.reads += 1
          refills.rows += out.length
          return out
        }
      },
    })
  const edgeValues: DfStatements['edgeValues'] = {
    durations: { lo: countRows(prepared.edgeValues.durations.lo), hi: countRows(prepared.edgeValues.durations.hi) },
    waiting: { lo: countRows(prepared.edgeValues.waiting.lo), hi: countRows(prepared.edgeValues.waiting.hi) },
  }
  const st: DfStatements = { ...prepared, neighbours, edgeValues }
  const rids = new Map<string, number>()
  const ridOf = (o: string) => {
    let rid = rids.get(o)
    if (rid === undefined) {
      rid = rids.size + 1
      rids.set(o, rid)
    }
    return rid
  }
  const memory = options.memory === true ? new DfObjectMemory() : undefined
  const write = db.transaction((events: readonly DirectlyFollowsEvent[]) =>
    // Row ids past those made so far are made by this run: such objects have no stored step.
    writeDirectlyFollows(st, events, () => 1, ridOf, memory === undefined ? undefined : { memory, firstNewRid: rids.size + 1 }),
  )
  const rows = () =>
    Object.fromEntries(DF_TABLES.map((t) => [t, (db.prepare(`SELECT * FROM ${t}`).all() as Record<string, unknown>[]).map((r) => JSON.stringify(r)).sort()]))
  const aggregate = (a: string, b: string): { durations: string; waiting: string } | undefined =>
    db
      .prepare(
        `SELECT durations, waiting FROM rm_df_aggregates WHERE a = (SELECT id FROM rm_df_names WHERE name = ?) AND b = (SELECT id FROM rm_df_names WHERE name = ?)`,
      )
      .get(a, b) as { durations: string; waiting: string } | undefined
  return { reads, refills, write, rows, aggregate, db, st }
}

describe('the directly-follows write on SQLite', () => {
  it("reads one neighbour statement per cluster of an object's new steps, never its history between them", () => {
    // o1 has 300 steps (minutes 0 to 299, i1 on every tenth), written in runs of 50.
    const history = Array.from({ length: 300 }, (_, i) => event(i + 1, ['A', 'B', 'C'][i % 3] as string, i, i % 10 === 0 ? ['o1', 'i1'] : ['o1']))
    // One run: two late steps of o1 with no stored step between them (one cluster), one late step past stored ones, one appended.
    const run = [event(301, 'L', 100.2, ['o1']), event(302, 'L', 100.7, ['o1']), event(303, 'M', 200.5, ['o1']), event(304, 'Z', 400, ['o1', 'i1'])]
    const store = openStore()
    for (let i = 0; i < history.length; i += 50) store.write(history.slice(i, i + 50))
    // A run of appends: one read per object.
    expect(store.reads.neighbours).toBe(6 * 2)
    store.reads.neighbours = 0
    store.write(run)
    // o1: 100.2 (with 100.7), 200.5, 400: three clusters; i1: one.
    expect(store.reads.neighbours).toBe(4)
    const oneByOne = openStore()
    for (const e of [...history, ...run]) oneByOne.write([e])
    expect(store.rows()).toEqual(oneByOne.rows())
  })

  it("refills an edge's emptied kept ends with one read of the edge each, at most EXTREMES values, and gives its exact min and max", () => {
    // o1: A every 10 + i minutes (i = 0…99), each ending a minute later: A → A holds 100 elapsed and waiting times (sketched).
    const starts: number[] = [0]
    for (let i = 0; i < 100; i += 1) starts.push((starts[i] as number) + 10 + i)
    const early = starts.map((m, i) => ({ ...event(i + 1, 'A', m, ['o1']), endTime: T0 + (m + 1) * MIN }))
    // Late B events split all but the 10 middle couples (i = 45…54), in runs of 5.
    const late = starts.slice(0, -1).flatMap((m, i) => (i >= 45 && i < 55 ? [] : [event(200 + i, 'B', m + 3, ['o1'])]))
    const store = openStore()
    store.write(early)
    expect(store.refills.reads).toBe(0)
    for (let i = 0; i < late.length; i += 5) store.write(late.slice(i, i + 5))
    // 90 removals from each statistic: each end empties at most once per EXTREMES removals of its kept values.
    expect(store.refills.reads).toBeGreaterThan(0)
    expect(store.refills.reads).toBeLessThanOrEqual(2 * 2 * Math.ceil(90 / EXTREMES))
    expect(store.refills.rows).toBeLessThanOrEqual(store.refills.reads * EXTREMES)
    const loop = store.aggregate('A', 'A')
    const durations = summarize(JSON.parse(loop?.durations ?? '{}') as DurationStats)
    const waiting = summarize(JSON.parse(loop?.waiting ?? '{}') as DurationStats)
    expect([durations?.count, durations?.min, durations?.max, waiting?.min, waiting?.max]).toEqual([10, 55 * MIN, 64 * MIN, 54 * MIN, 63 * MIN])
    // Each refill statement is one search of the edge's range of its index, whose sorter keeps what the limit takes.
    for (const stats of ['durations', 'waiting'] as const) {
      for (const end of ['lo', 'hi'] as const) {
        const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${store.st.edgeValues[stats][end].source}`).all(1, 1, 2, 2, EXTREMES) as { detail: string }[]
        expect(plan.map((r) => r.detail)).toEqual([
          'SEARCH rm_df_steps USING COVERING INDEX rm_df_steps_by_edge (did=? AND ot=? AND prev_act=? AND act=?)',
          'USE TEMP B-TREE FOR ORDER BY',
        ])
      }
    }
  })

  it('changes no row when the run is applied again, reading once per replayed step', () => {
    const events = [event(1, 'A', 0, ['o1', 'i1']), event(2, 'B', 1, ['o1']), event(3, 'C', 2, ['o1', 'i1'])]
    const store = openStore()
    store.write(events)
    const rows = store.rows()
    store.reads.neighbours = 0
    store.write(events)
    expect(store.rows()).toEqual(rows)
    // Each replayed step of an object is the succ of the one before it: a cluster of its own.
    expect(store.reads.neighbours).toBe(5)
  })

  it("with the memory, reads nothing for appends or for late steps inside an object's remembered tail, and writes the same rows", () => {
    const history = Array.from({ length: 300 }, (_, i) => event(i + 1, ['A', 'B', 'C'][i % 3] as string, i, i % 10 === 0 ? ['o1', 'i1'] : ['o1']))
    const store = openStore({ memory: true })
    for (let i = 0; i < history.length; i += 50) store.write(history.slice(i, i + 50))
    // New objects (not read, and not remembered yet), then one read of each in the second run, then appends after the remembered last steps.
    expect(store.reads.neighbours).toBe(2)
    // Late by one step of o1 (inside its last four), and an append.
    store.write([event(301, 'L', 298.5, ['o1']), event(302, 'Z', 400, ['o1', 'i1'])])
    expect(store.reads.neighbours).toBe(2)
    // Far back in o1's trace: one read.
    store.write([event(303, 'M', 100.5, ['o1'])])
    expect(store.reads.neighbours).toBe(3)
    // A replay of steps the memory holds: no read, no change.
    const rows = store.rows()
    store.write([event(302, 'Z', 400, ['o1', 'i1'])])
    expect(store.reads.neighbours).toBe(3)
    expect(store.rows()).toEqual(rows)
    const oneByOne = openStore()
    for (const e of [...history, event(301, 'L', 298.5, ['o1']), event(302, 'Z', 400, ['o1', 'i1']), event(303, 'M', 100.5, ['o1'])]) oneByOne.write([e])
    expect(rows).toEqual(oneByOne.rows())
  })

  it('writes the same rows with the memory as without it, for events in random orders and runs', () => {
    const random = seededRandom(27)
    const objects = ['o1', 'o2', 'o3', 'i1', 'i2', 'i3', 'i4', 'i5']
    // Distinct times (minutes), drawn in random order: many steps arrive before their predecessors.
    const minutes = Array.from({ length: 400 }, (_, i) => i).sort(() => random() - 0.5)
    const events = minutes.map((m, i) => {
      const own = objects.filter(() => random() < 0.3)
      return event(i + 1, ['A', 'B', 'C', 'D'][Math.floor(random() * 4)] as string, m, own.length === 0 ? ['o1'] : own)
    })
    const remembering = openStore({ memory: true })
    const reading = openStore()
    for (let i = 0; i < events.length; ) {
      const run = events.slice(i, i + 1 + Math.floor(random() * 12))
      i += run.length
      remembering.write(run)
      reading.write(run)
    }
    expect(remembering.rows()).toEqual(reading.rows())
    // The memory answered some of the reads (appends, new objects, steps inside a tail), and never added one.
    expect(remembering.reads.neighbours).toBeLessThan(reading.reads.neighbours)
  })
})
