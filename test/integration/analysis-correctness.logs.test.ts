/**
 * The analysis reads (performance, variants, type relations) of every shared OCEL 2.0 log, after
 * import, and of a generated log, equal an independent computation from the source, written here
 * from the definitions (docs/analysis.md) without calling the service's code.
 *
 * - Shared logs: read through the importer's reader (its parsing is tested on its own), with the
 *   import's documented rules applied here (objects the log never defines typed `ocelog:undefined`,
 *   a repeated (object, qualifier) sent once, events with no object or more than 50 left out). Events
 *   with equal times get log positions in file order, so (time, file order) is (timestamp, position).
 * - The generated log: end_timestamps (some after the next event), arrivals out of time order, equal
 *   timestamps, and several objects of one type per event; positions are those the log returned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import type { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { Projector } from '../../src/projector/runner.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { eventRecord, freshDatasetId, upsertRecord } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { loadOcel } from '../helpers/load-ocel.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const LOGS = [
  'derived/ocelescope__pallet-logistics-v0.9.ocel2.json',
  'derived/ocpa__logistics.ocel2.json',
  'derived/ocpa__running-example.ocel2.json',
  'raw/pm4py__ocel20_example.jsonocel',
  'raw/ocpa__ocel20_example.xmlocel',
  'raw/ocpa__ocel20_example.sqlite',
]

const UNDEFINED_TYPE = 'ocelog:undefined'
const MAX_OBJECTS = 50

/** A log as the definitions see it: events with their order rank, and O2O by types. */
interface Source {
  events: { id: string; type: string; t: number; end: number | null; rank: number; links: { oid: string; ot: string; q: string | null }[] }[]
  o2o: { source: string; q: string | null; target: string }[]
}

/** Milliseconds to seconds rounded to the ms, as the answers give them. */
const sec = (ms: number) => Math.round(ms) / 1000

function statsOf(ms: number[]) {
  if (ms.length === 0) return null
  const v = [...ms].sort((a, b) => a - b)
  const n = v.length
  const median = n % 2 === 1 ? (v[(n - 1) / 2] ?? 0) : ((v[n / 2 - 1] ?? 0) + (v[n / 2] ?? 0)) / 2
  const sum = v.reduce((a, b) => a + b, 0)
  return { count: n, mean: sec(sum / n), median: sec(median), min: sec(v[0] ?? 0), max: sec(v[n - 1] ?? 0), sum: sec(sum) }
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Per object: its distinct events in (t, rank) order. */
function traces(src: Source, types?: Set<string>) {
  const out = new Map<string, { ot: string; events: Source['events'] }>()
  for (const e of src.events) {
    for (const oid of new Set(e.links.filter((l) => types === undefined || types.has(l.ot)).map((l) => l.oid))) {
      const ot = e.links.find((l) => l.oid === oid)?.ot ?? ''
      const tr = out.get(oid) ?? { ot, events: [] }
      tr.events.push(e)
      out.set(oid, tr)
    }
  }
  for (const tr of out.values()) tr.events.sort((a, b) => a.t - b.t || a.rank - b.rank)
  return out
}

const inWindow = (t: number, w: { from?: number; to?: number }) => (w.from === undefined || t >= w.from) && (w.to === undefined || t < w.to)

/** OPerA's measures per activity, from the definitions. Object ids are "type\0id". */
function expectedPerformance(src: Source, w: { from?: number; to?: number }, slowest: number, withEventIds: boolean) {
  const tr = traces(src)
  const pred = new Map<string, Source['events'][number]>() // "eventId\0oid" → predecessor
  for (const [oid, t] of tr) {
    t.events.forEach((e, i) => {
      const previous = t.events[i - 1]
      if (previous !== undefined) pred.set(`${e.id}\u0000${oid}`, previous)
    })
  }
  const ready = (p: Source['events'][number]) => p.end ?? p.t
  const acts = new Map<
    string,
    {
      events: number
      measured: number
      soj: number[]
      flow: number[]
      sync: number[]
      types: Map<string, { pool: number[]; lag: number[]; rdy: number[]; delaying: number }>
      slow: { e: Source['events'][number]; s: number; d: string }[]
    }
  >()
  for (const e of src.events) {
    if (!inWindow(e.t, w) || e.links.length === 0) continue
    const a: NonNullable<ReturnType<typeof acts.get>> = acts.get(e.type) ?? { events: 0, measured: 0, soj: [], flow: [], sync: [], types: new Map(), slow: [] }
    acts.set(e.type, a)
    a.events += 1
    const objects = [...new Set(e.links.map((l) => `${l.ot}\u0000${l.oid}`))]
    for (const o of objects) {
      const ot = o.split('\u0000')[0] as string
      if (!a.types.has(ot)) a.types.set(ot, { pool: [], lag: [], rdy: [], delaying: 0 })
    }
    const inputs = objects.flatMap((o) => {
      const oid = o.slice(o.indexOf('\u0000') + 1)
      const p = pred.get(`${e.id}\u0000${oid}`)
      return p === undefined ? [] : [{ o, ot: o.split('\u0000')[0] as string, p }]
    })
    if (inputs.length === 0) continue
    a.measured += 1
    const rs = inputs.map((i) => ready(i.p))
    const maxr = Math.max(...rs)
    const minr = Math.min(...rs)
    a.soj.push(Math.max(0, e.t - maxr))
    a.flow.push(Math.max(0, e.t - minr))
    a.sync.push(maxr - minr)
    for (const [ot, t] of a.types) {
      const mine = inputs.filter((i) => i.ot === ot).map((i) => ready(i.p))
      if (mine.length === 0) continue
      t.pool.push(Math.max(...mine) - Math.min(...mine))
      t.lag.push(Math.max(...mine) - minr)
      t.rdy.push(maxr - Math.max(...mine))
    }
    const delaying = [...inputs].sort((x, y) => ready(y.p) - ready(x.p) || y.p.rank - x.p.rank || byText(x.o, y.o))[0]
    if (delaying !== undefined) {
      const t = a.types.get(delaying.ot)
      if (t !== undefined) t.delaying += 1
      a.slow.push({ e, s: Math.max(0, e.t - maxr), d: delaying.o })
    }
  }
  return [...acts]
    .sort(([x], [y]) => byText(x, y))
    .map(([activity, a]) => ({
      activity,
      events: a.events,
      events_with_predecessors: a.measured,
      sojourn: statsOf(a.soj),
      flow: statsOf(a.flow),
      synchronization: statsOf(a.sync),
      object_types: [...a.types]
        .sort(([x], [y]) => byText(x, y))
        .map(([object_type, t]) => ({ object_type, pooling: statsOf(t.pool), lagging: statsOf(t.lag), readying: statsOf(t.rdy), delaying: t.delaying })),
      slowest: a.slow
        .sort((x, y) => y.s - x.s || y.e.rank - x.e.rank)
        .slice(0, slowest)
        .map((s) => {
          const [type, id] = s.d.split('\u0000') as [string, string]
          return { ...(withEventIds ? { event_id: s.e.id } : {}), timestamp: new Date(s.e.t).toISOString(), sojourn: sec(s.s), delaying_object: { type, id } }
        }),
    }))
}

/** pm4py's flattened variants of type `ot` over the events in the window, in the answer's order. */
function expectedVariants(src: Source, ot: string, w: { from?: number; to?: number }) {
  const windowed: Source = { ...src, events: src.events.filter((e) => inWindow(e.t, w)) }
  const groups = new Map<string, { activities: string[]; ids: string[]; d: number[] }>()
  for (const [oid, t] of traces(windowed, new Set([ot]))) {
    const activities = t.events.map((e) => e.type)
    const key = JSON.stringify(activities)
    const g = groups.get(key) ?? { activities, ids: [], d: [] }
    g.ids.push(oid)
    g.d.push((t.events[t.events.length - 1]?.t ?? 0) - (t.events[0]?.t ?? 0))
    groups.set(key, g)
  }
  const objects = [...groups.values()].reduce((s, g) => s + g.ids.length, 0)
  const cmpSeq = (a: string[], b: string[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = byText(a[i] as string, b[i] as string)
      if (c !== 0) return c
    }
    return a.length - b.length
  }
  const variants = [...groups.values()]
    .sort((a, b) => b.ids.length - a.ids.length || cmpSeq(a.activities, b.activities))
    .map((g) => ({
      activities: g.activities,
      objects: g.ids.length,
      share: g.ids.length / objects,
      duration: statsOf(g.d),
      examples: g.ids.sort(byText).slice(0, 3),
    }))
  return { objects, total: variants.length, variants }
}

/** pm4py's ET-OT over the events in the window, and O2O by types. */
function expectedTypeRelations(src: Source, w: { from?: number; to?: number }) {
  const pairs = new Map<string, { events: number; e2o: number; n: number[] }>()
  for (const e of src.events) {
    if (!inWindow(e.t, w)) continue
    const types = new Map<string, { links: number; objects: Set<string> }>()
    for (const l of e.links) {
      const t = types.get(l.ot) ?? { links: 0, objects: new Set() }
      t.links += 1
      t.objects.add(l.oid)
      types.set(l.ot, t)
    }
    for (const [ot, t] of types) {
      const key = JSON.stringify([e.type, ot])
      const p = pairs.get(key) ?? { events: 0, e2o: 0, n: [] }
      p.events += 1
      p.e2o += t.links
      p.n.push(t.objects.size)
      pairs.set(key, p)
    }
  }
  const o2o = new Map<string, number>()
  for (const r of src.o2o) {
    const key = JSON.stringify([r.source, r.q, r.target])
    o2o.set(key, (o2o.get(key) ?? 0) + 1)
  }
  return {
    activity_object_types: [...pairs]
      .map(([key, p]) => {
        const [activity, object_type] = JSON.parse(key) as [string, string]
        const sum = p.n.reduce((a, b) => a + b, 0)
        return {
          activity,
          object_type,
          events: p.events,
          e2o: p.e2o,
          objects_per_event: { min: Math.min(...p.n), mean: sum / p.events, max: Math.max(...p.n) },
        }
      })
      .sort((a, b) => byText(a.activity, b.activity) || byText(a.object_type, b.object_type)),
    o2o: [...o2o]
      .map(([key, relationships]) => {
        const [source_type, qualifier, target_type] = JSON.parse(key) as [string, string | null, string]
        return { source_type, qualifier, target_type, relationships }
      })
      .sort(
        (a, b) =>
          byText(a.source_type, b.source_type) ||
          (a.qualifier === b.qualifier ? 0 : a.qualifier === null ? -1 : b.qualifier === null ? 1 : byText(a.qualifier, b.qualifier)) ||
          byText(a.target_type, b.target_type),
      ),
  }
}

/** Every page of a type's variants (bounded: at most 100 pages). */
async function allVariants(reader: ProcessReader, ds: string, object_type: string, window: { from?: string; to?: string }) {
  const first = await reader.variants(ds, { object_type, ...window, limit: 1000 })
  const variants = [...first.variants]
  let cursor = first.next_cursor
  for (let i = 0; cursor !== null && i < 100; i++) {
    const page = await reader.variants(ds, { object_type, ...window, limit: 1000, cursor })
    variants.push(...page.variants)
    cursor = page.next_cursor
  }
  return { objects: first.objects, total: first.total, variants }
}

let fx: SqliteFixture
let log: SqliteEventLog
let store: SqliteReadModelStore
let reader: ProcessReader
beforeAll(() => {
  fx = openSqliteFixture('ocelog-analysis-')
  ;({ log, store } = fx)
  reader = new ProcessReader({ query: new SqliteReadModelQuery(fx.rmDb), log })
})
afterAll(async () => {
  await log.close()
  fx.close()
})

/** Asserts the three reads, over all time and over a window of the middle third, against the independent computation. */
async function assertReads(ds: string, src: Source, withEventIds: boolean): Promise<void> {
  const times = src.events.map((e) => e.t).sort((a, b) => a - b)
  const lo = times[Math.floor(times.length / 3)] ?? 0
  const hi = times[Math.floor((2 * times.length) / 3)] ?? 0
  const windows = [{}, { from: lo, to: hi + 1 }]
  const types = [...new Set(src.events.flatMap((e) => e.links.map((l) => l.ot)))].sort(byText)
  for (const w of windows) {
    const iso = {
      ...(w.from === undefined ? {} : { from: new Date(w.from).toISOString() }),
      ...(w.to === undefined ? {} : { to: new Date(w.to).toISOString() }),
    }
    const performance = await reader.performance(ds, { ...iso, slowest: 100 })
    const actual = withEventIds ? performance.activities : performance.activities.map((a) => ({ ...a, slowest: a.slowest.map(({ event_id: _id, ...s }) => s) }))
    expect(actual).toEqual(expectedPerformance(src, w, 100, withEventIds))
    for (const ot of types) expect(await allVariants(reader, ds, ot, iso)).toEqual(expectedVariants(src, ot, w))
    const relations = await reader.typeRelations(ds, iso)
    expect({ activity_object_types: relations.activity_object_types, o2o: relations.o2o }).toEqual(expectedTypeRelations(src, w))
  }
}

describeWithSharedOcel('analysis reads of the shared OCEL 2.0 logs', () => {
  it.each(LOGS)(
    'equal an independent computation from %s',
    async (relative) => {
      const ocel = readOcelFile(ocelFixture(relative), parseTimeZone('UTC'))
      const typeOf = new Map<string, string>()
      for (const o of ocel.objects) if (!typeOf.has(o.id)) typeOf.set(o.id, o.type)
      const src: Source = { events: [], o2o: [] }
      ocel.events.forEach((e, rank) => {
        const seen = new Set<string>()
        const links: Source['events'][number]['links'] = []
        for (const r of e.relationships) {
          const key = JSON.stringify([r.objectId, r.qualifier])
          if (seen.has(key)) continue
          seen.add(key)
          links.push({ oid: r.objectId, ot: typeOf.get(r.objectId) ?? UNDEFINED_TYPE, q: r.qualifier })
        }
        if (links.length === 0 || links.length > MAX_OBJECTS) return
        src.events.push({ id: e.id, type: e.type, t: e.time, end: null, rank, links })
      })
      const seenObjects = new Set<string>()
      for (const o of ocel.objects) {
        if (seenObjects.has(o.id)) continue
        seenObjects.add(o.id)
        const pairs = new Set<string>()
        for (const r of o.relationships) {
          const key = JSON.stringify([r.objectId, r.qualifier])
          if (pairs.has(key)) continue
          pairs.add(key)
          src.o2o.push({ source: o.type, q: r.qualifier, target: typeOf.get(r.objectId) ?? UNDEFINED_TYPE })
        }
      }
      const ds = freshDatasetId()
      await loadOcel(ocel, ds, { log, store })
      await assertReads(ds, src, false)
    },
    300_000,
  )
})

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('analysis reads of a generated log', () => {
  it('equal an independent computation, with end_timestamps, out-of-order arrivals, equal times and several objects of a type per event', async () => {
    const rnd = random(28)
    const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)] as T
    const base = Date.parse('2024-06-01T00:00:00.000Z')
    const activities = ['receive', 'pack', 'load', 'ship', 'invoice']
    const ids = { order: 30, item: 60, truck: 4 }
    const planned: { type: string; t: number; end: number | null; links: { oid: string; ot: string; q: string | null }[] }[] = []
    for (let i = 0; i < 400; i++) {
      // Times on a coarse grid, so that many events share a timestamp.
      const t = base + Math.floor(rnd() * 200) * 60_000
      const links: { oid: string; ot: string; q: string | null }[] = []
      const types = Object.keys(ids) as (keyof typeof ids)[]
      const k = 1 + Math.floor(rnd() * 5)
      for (let j = 0; j < k; j++) {
        const ot = pick(types)
        const oid = `${ot}-${String(Math.floor(rnd() * ids[ot]))}`
        if (!links.some((l) => l.oid === oid)) links.push({ oid, ot, q: rnd() < 0.5 ? null : pick(['part', 'main']) })
      }
      const end = rnd() < 0.4 ? t + Math.floor(rnd() * 90 * 60_000) + 1 : null
      planned.push({ type: pick(activities), t, end, links })
    }
    // Arrival order: shuffled, so that the log order is not the time order.
    const arrival = planned.map((p, i) => ({ p, k: rnd(), i })).sort((a, b) => a.k - b.k)
    const ds = freshDatasetId()
    const src: Source = { events: [], o2o: [] }
    for (const { p } of arrival) {
      const record = eventRecord(
        ds,
        p.type,
        p.links.map((l) => ({ type: l.ot, id: l.oid, ...(l.q === null ? {} : { qualifier: l.q }) })),
        { timestamp: new Date(p.t).toISOString(), ...(p.end === null ? {} : { endTimestamp: new Date(p.end).toISOString() }) },
      )
      const [position] = (await log.append(ds, [record], [])).positions
      const id = 'event_id' in record.data ? record.data.event_id : ''
      src.events.push({ id, type: p.type, t: p.t, end: p.end, rank: position ?? 0, links: p.links })
    }
    const upserts: NewRecord[] = []
    for (let i = 0; i < 10; i++) {
      const relationships = [
        { type: 'item', id: `item-${String(i)}`, qualifier: 'contains' },
        { type: 'item', id: `item-${String(i + 10)}` },
        { type: 'truck', id: `truck-${String(i % 4)}`, qualifier: 'on' },
      ]
      upserts.push(upsertRecord(ds, 'order', `order-${String(i)}`, {}, undefined, { relationships }))
      for (const r of relationships) src.o2o.push({ source: 'order', q: r.qualifier ?? null, target: r.type })
    }
    await log.append(ds, upserts, [])
    await new Projector(log, store).catchUp()
    await assertReads(ds, src, true)
  }, 120_000)
})
