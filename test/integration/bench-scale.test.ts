/**
 * The bench at scale (`npm run bench:scale`) measures what it says: its generator (bench/generate.ts)
 * has the promised shape, and its loader (bench/load-generated.ts) and a projector catch-up put every
 * generated event, object, E2O and O2O relationship into the read models, on a real SQLite file.
 * Correctness of the bench at a small N, not speed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { END_TIMESTAMP_SHARE, generatedWindow, generateItems, OBJECT_TYPES, OUT_OF_ORDER_SHARE } from '../../bench/generate.js'
import { type LoadResult, loadGenerated } from '../../bench/load-generated.js'
import { Projector } from '../../src/projector/runner.js'
import { sqliteRows, type ReadModelRows } from '../helpers/read-model-rows.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const EVENTS = 5000
const SEED = 7
const DATASET = 'scale-test'

/** What the generator sent, tallied from its items alone. */
interface Tally {
  upserts: number
  objects: Set<string>
  e2o: number
  o2o: Set<string>
  withEnd: number
  /** Events whose timestamp is earlier than one sent before them. */
  late: number
  objectsPerEvent: number[]
}

function tally(events: number, seed: number): Tally {
  const t: Tally = { upserts: 0, objects: new Set(), e2o: 0, o2o: new Set(), withEnd: 0, late: 0, objectsPerEvent: [] }
  let latest = Number.NEGATIVE_INFINITY
  for (const g of generateItems({ events, seed })) {
    if (g.kind === 'object') {
      t.upserts += 1
      t.objects.add(`${g.item.type}/${g.item.id}`)
      for (const r of g.item.relationships ?? []) {
        t.objects.add(`${r.type}/${r.id}`)
        t.o2o.add(`${g.item.type}/${g.item.id}→${r.type}/${r.id}:${r.qualifier ?? ''}`)
      }
      continue
    }
    const e = g.item
    for (const o of e.objects) t.objects.add(`${o.type}/${o.id}`)
    t.e2o += e.objects.length
    t.objectsPerEvent.push(e.objects.length)
    if (e.end_timestamp !== undefined) t.withEnd += 1
    const time = Date.parse(e.timestamp ?? '')
    if (time < latest) t.late += 1
    latest = Math.max(latest, time)
  }
  return t
}

let fx: SqliteFixture
let sent: Tally
let loaded: LoadResult
let rows: ReadModelRows

beforeAll(async () => {
  fx = openSqliteFixture('ocelog-bench-scale-')
  sent = tally(EVENTS, SEED)
  loaded = await loadGenerated(fx.log, DATASET, generateItems({ events: EVENTS, seed: SEED }), { chunkItems: 1000 })
  await new Projector(fx.log, fx.store).catchUp()
  rows = await sqliteRows(fx.rmDb)(DATASET)
}, 120_000)
afterAll(() => fx.close())

describe('the generated dataset', () => {
  it('has the promised shape: five object types, 1 to 50 objects per event, most with 2 to 4, ~30% with end_timestamp, ~5% late', () => {
    const types = new Set([...sent.objects].map((o) => o.split('/')[0]))
    expect([...types].sort()).toEqual([...OBJECT_TYPES].sort())
    expect(Math.min(...sent.objectsPerEvent)).toBe(1)
    expect(Math.max(...sent.objectsPerEvent)).toBeLessThanOrEqual(50)
    expect(sent.objectsPerEvent.filter((n) => n >= 2 && n <= 4).length / EVENTS).toBeGreaterThan(0.7)
    expect(Math.abs(sent.withEnd / EVENTS - END_TIMESTAMP_SHARE)).toBeLessThan(0.03)
    expect(Math.abs(sent.late / EVENTS - OUT_OF_ORDER_SHARE)).toBeLessThan(0.01)
    expect(sent.o2o.size).toBeGreaterThan(0)
  })

  it('is the same for the same seed and differs for another', () => {
    const first = (seed: number) => JSON.stringify([...generateItems({ events: 50, seed })])
    expect(first(SEED)).toBe(first(SEED))
    expect(first(SEED + 1)).not.toBe(first(SEED))
  })

  it('gives a window with the count of events inside it', () => {
    const w = generatedWindow({ events: EVENTS, seed: SEED }, 0.45, 0.1)
    const inside = rows.events.filter((e) => e.timestamp >= w.from && e.timestamp < w.to).length
    expect(w.events).toBe(inside)
    expect(Math.abs(w.events / EVENTS - 0.1)).toBeLessThan(0.02)
  })
})

describe('loading and projecting it', () => {
  it('appends every event and object upsert as one record each', () => {
    expect([loaded.events, loaded.objectUpserts, loaded.records]).toEqual([EVENTS, sent.upserts, EVENTS + sent.upserts])
  })

  it('puts every event, object, E2O and O2O relationship into the read models', () => {
    expect(rows.events.length).toBe(EVENTS)
    expect(rows.objects.length).toBe(sent.objects.size)
    expect(rows.eventObjects.length).toBe(sent.e2o)
    expect(rows.objectRelationships.length).toBe(sent.o2o.size)
    expect(rows.objectTypes.map((t) => t.name).sort()).toEqual([...OBJECT_TYPES].sort())
    expect(rows.events.filter((e) => e.end_timestamp !== null).length).toBe(sent.withEnd)
  })

  it('keeps the late arrivals: in log order, as many events as sent are earlier than one before them', () => {
    const byPosition = [...rows.events].sort((a, b) => a.position - b.position)
    let latest = ''
    let late = 0
    for (const e of byPosition) {
      if (e.timestamp < latest) late += 1
      if (e.timestamp > latest) latest = e.timestamp
    }
    expect(late).toBe(sent.late)
  })
})
