/**
 * Cross-engine equality of the read side: every read of the query port (ReadModelQuery), the
 * compare read (ProcessReader.compare, docs/analysis.md "Compare") and the OCEL 2.0 export
 * (src/ocel/export.ts exportOcel, docs/ocel.md#export) asked of two adapters over the read models
 * of the same log, each answer expected deep-equal. The first adapter is the reference (SQLite);
 * the answers given are its own.
 */
import { expect } from 'vitest'
import type { AuditChainEntry } from '../../src/schemas/audit.js'
import { exportOcel } from '../../src/ocel/export.js'
import type { EventLog } from '../../src/ports/event-log.js'
import type { ObjectHistory, ReadModelQuery, TimeWindow } from '../../src/ports/read-model-query.js'
import { ProcessReader } from '../../src/read/process-reader.js'

/** The two adapters compared, over read models projected from the same log. */
export interface Engines {
  /** The reference adapter (SQLite). */
  reference: ReadModelQuery
  /** The adapter under test (PostgreSQL). */
  other: ReadModelQuery
  /** The log both were projected from (ProcessReader needs one; compare does not read it). */
  log: EventLog
}

/** What one log's comparison covered, for the report of the test. */
export interface AgreementCoverage {
  events: number
  objects: number
  objectTypes: number
  /** Reads asked of both adapters (each one a pair of equal answers). */
  reads: number
  /** Objects whose object view and event page were compared. */
  objectsRead: number
  variantPages: number
  eventPages: number
  auditEntries: number
}

/** Below this many events, a log is small: every page and every object is read; above it, a few pages and a sample of objects. */
const SMALL_LOG_EVENTS = 1000

/** Asks `read` of both adapters and compares. */
class Pair {
  reads = 0
  constructor(private readonly engines: Engines) {}

  /** Asks both adapters `read`, expects equal answers (`what` names the read in a failure); gives the reference's. */
  async same<T>(what: string, read: (q: ReadModelQuery) => Promise<T>): Promise<T> {
    this.reads++
    const expected = await read(this.engines.reference)
    expect(await read(this.engines.other), what).toStrictEqual(expected)
    return expected
  }
}

/** The window of the middle third of [first, last] and two halves of the whole span (`to` exclusive, so b ends 1 ms after the last event). */
function windowsOf(first: string, last: string): { middle: TimeWindow; a: TimeWindow; b: TimeWindow } {
  const start = Date.parse(first)
  const span = Date.parse(last) - start
  const at = (ms: number) => new Date(Math.round(ms)).toISOString()
  const half = at(start + span / 2)
  return {
    middle: { from: at(start + span / 3), to: at(start + (2 * span) / 3) },
    a: { from: first, to: half },
    b: { from: half, to: at(start + span + 1) },
  }
}

/** Map, performance, type relations and variants (paged) in window `w`; returns the variant pages read. */
async function analysisReads(p: Pair, ds: string, w: TimeWindow, types: string[], small: boolean): Promise<number> {
  const map = await p.same('processMap', (q) => q.processMap(ds, w))
  // Every type with an event in the window: all time, at least one (a type may have objects but no event).
  if (w.from === undefined) expect(map.object_types.length).toBeGreaterThan(0)
  expect(map.object_types.length).toBeLessThanOrEqual(types.length)
  await p.same('processMap of two types', (q) => q.processMap(ds, { ...w, objectTypes: types.slice(0, 2) }))
  for (const type of types) await p.same(`processMap of ${type}`, (q) => q.processMap(ds, { ...w, objectTypes: [type] }))
  await p.same('performance', (q) => q.performance(ds, { ...w, slowest: 5 }))
  await p.same('performance of one type', (q) => q.performance(ds, { ...w, objectTypes: types.slice(0, 1), slowest: 0 }))
  await p.same('typeRelations', (q) => q.typeRelations(ds, w))
  const limit = small ? 2 : 25
  let pages = 0
  for (const objectType of types) {
    let page = await p.same(`variants of ${objectType}`, (q) => q.variants(ds, { ...w, objectType, limit }))
    pages++
    for (let n = 0; (small || n < 3) && page.next !== null; n++) {
      const after = page.next
      page = await p.same(`variants of ${objectType} after a cursor`, (q) => q.variants(ds, { ...w, objectType, limit, after }))
      pages++
    }
  }
  return pages
}

/** Pages of events in window `w` (all of them on a small log, four on a large one); returns the pages read. */
async function eventPages(p: Pair, ds: string, w: TimeWindow, small: boolean): Promise<number> {
  const limit = small ? 3 : 200
  let page = await p.same('events', (q) => q.events(ds, { ...w, limit }))
  let pages = 1
  for (let n = 0; (small || n < 3) && page.next !== null; n++) {
    const after = page.next
    page = await p.same('events after a cursor', (q) => q.events(ds, { ...w, limit, after, count: false }))
    pages++
  }
  return pages
}

/** Every object's history, paged (by 5 on a small log, 300 on a large one). */
async function allHistories(p: Pair, ds: string, small: boolean): Promise<ObjectHistory[]> {
  const limit = small ? 5 : 300
  let page = await p.same('objectHistories', (q) => q.objectHistories(ds, { limit }))
  const all = [...page.objects]
  while (page.next !== null) {
    const after = page.next
    page = await p.same('objectHistories after a key', (q) => q.objectHistories(ds, { limit, after }))
    all.push(...page.objects)
  }
  return all
}

/** The whole audit chain, by pages of 500 (its `seq` numbered 1, 2, … across pages); returns the entries. */
async function auditEntries(p: Pair, ds: string): Promise<number> {
  let after: number | null = null
  let entries = 0
  for (;;) {
    const from = after
    const chain: AuditChainEntry[] = await p.same('auditChain', (q) => q.auditChain(ds, from, 500))
    expect(chain.map((e) => e.seq)).toEqual(chain.map((_, i) => entries + i + 1))
    entries += chain.length
    const last = chain.at(-1)
    if (chain.length < 500 || last === undefined) break
    after = last.position
  }
  const last = await p.same('auditChainAt the last', (q) => q.auditChainAt(ds, null))
  expect(last?.seq).toBe(entries)
  return entries
}

/** ProcessReader.compare of windows a and b (all types; one type with max_edges) and of an empty window and b, on both adapters. */
async function compareReads(p: Pair, engines: Engines, ds: string, a: TimeWindow, b: TimeWindow, types: string[]): Promise<void> {
  const reader = (q: ReadModelQuery) => new ProcessReader({ query: q, log: engines.log })
  const params = { a_from: a.from, a_to: a.to, b_from: b.from, b_to: b.to }
  const all = await p.same('compare', (q) => reader(q).compare(ds, params))
  expect(all.map_activities.length).toBeGreaterThan(0)
  await p.same('compare of one type, max_edges 3', (q) => reader(q).compare(ds, { ...params, object_type: types[0], max_edges: 3 }))
  // Window a before the first event: every a side null.
  const empty = await p.same('compare with an empty window', (q) => reader(q).compare(ds, { a_to: a.from, b_from: b.from, b_to: b.to }))
  expect(empty.map_activities.every((r) => r.events.a === null)).toBe(true)
}

/** The export of the dataset by both adapters: deep-equal, and equal as JSON text (key order included). */
async function exportReads(engines: Engines, ds: string, events: number, objects: number): Promise<void> {
  const reference = await exportOcel(engines.reference, ds)
  const other = await exportOcel(engines.other, ds)
  expect(other, 'exportOcel').toStrictEqual(reference)
  expect(JSON.stringify(other), 'exportOcel as JSON text').toBe(JSON.stringify(reference))
  expect(reference.events.length).toBe(events)
  expect(reference.objects.length).toBe(objects)
}

/** The first object of each type and about 30 more spread over the (type, id) order. */
function sample(histories: readonly ObjectHistory[], types: readonly string[]): ObjectHistory[] {
  const step = Math.max(1, Math.floor(histories.length / 30))
  const picked = new Set([...types.flatMap((type) => histories.filter((h) => h.type === type).slice(0, 1)), ...histories.filter((_, i) => i % step === 0)])
  return [...picked]
}

/** Object view and event page of `objects` (their (type, id)), and the lookups by own id. */
async function objectReads(p: Pair, ds: string, objects: readonly { type: string; id: string }[]): Promise<void> {
  for (const { type, id } of objects) {
    await p.same(`events of ${type} ${id}`, (q) => q.events(ds, { objectType: type, objectId: id, limit: 50 }))
    const view = await p.same(`object ${type} ${id}`, (q) => q.object(ds, type, id, 20))
    expect(view).not.toBeNull()
  }
  const shared = await p.same('sharedObjectIds', (q) => q.sharedObjectIds(ds))
  const ids = [...shared.slice(0, 20), ...objects.slice(0, 5).map((o) => o.id)]
  const found = await p.same('objectsWithIds', (q) => q.objectsWithIds(ds, ids))
  expect(found.length).toBeGreaterThan(0)
}

/**
 * Asks both adapters every read of dataset `ds`, all time and in the middle third of its span,
 * compare of its two halves, and its export, and expects equal answers (docs/api.md's reads, the
 * query port's methods in src/ports/read-model-query.ts).
 * @param expected the log's event and object counts as imported (the summary must show them).
 * @returns what was compared.
 * @throws vitest's assertion error naming the first read whose answers differ.
 */
export async function expectSameAnswers(engines: Engines, ds: string, expected: { events: number; objects: number }): Promise<AgreementCoverage> {
  const p = new Pair(engines)
  expect(await engines.other.asOf()).toBe(await engines.reference.asOf())
  const summary = await p.same('summary', (q) => q.summary(ds))
  expect({ events: summary.events, objects: summary.objects }).toEqual(expected)
  const small = summary.events < SMALL_LOG_EVENTS
  const types = (await p.same('objectTypes', (q) => q.objectTypes(ds))).map((t) => t.name)
  const eventTypes = await p.same('eventTypes', (q) => q.eventTypes(ds))
  const declared = await p.same('declaredTypes', (q) => q.declaredTypes(ds))
  // Every log here declares its types (OCEL 2.0 does), so each used event type is declared.
  expect(declared.event_types.map((t) => t.name)).toEqual(expect.arrayContaining(eventTypes.map((t) => t.name)))
  const { middle, a, b } = windowsOf(summary.first_event_time ?? '', summary.last_event_time ?? '')
  let variantPages = 0
  let pages = 0
  for (const w of [{}, middle]) {
    variantPages += await analysisReads(p, ds, w, types, small)
    pages += await eventPages(p, ds, w, small)
  }
  for (const { name: eventType } of eventTypes) {
    const page = await p.same(`events of type ${eventType}`, (q) => q.events(ds, { eventType, limit: small ? 3 : 50 }))
    expect(page.events.every((e) => e.event_type === eventType)).toBe(true)
  }
  await compareReads(p, engines, ds, a, b, types)
  const histories = await allHistories(p, ds, small)
  expect(histories.length).toBe(summary.objects)
  const read = small ? histories : sample(histories, types)
  await objectReads(p, ds, read)
  const auditCount = await auditEntries(p, ds)
  expect(auditCount).toBeGreaterThan(summary.events)
  await exportReads(engines, ds, summary.events, summary.objects)
  p.reads++
  return {
    events: summary.events,
    objects: summary.objects,
    objectTypes: types.length,
    reads: p.reads,
    objectsRead: read.length,
    variantPages,
    eventPages: pages,
    auditEntries: auditCount,
  }
}
