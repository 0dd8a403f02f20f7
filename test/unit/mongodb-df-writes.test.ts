/**
 * The MongoDB write of the directly-follows read model (src/adapters/mongodb/mongodb-df-writes.ts)
 * and its process map (mongodb-df-query.ts). MongoDB cannot run here, so the write runs through
 * `MemoryIo` below: the DfIo port answered from arrays, by MongoDB's documented semantics for the
 * few forms the write uses (equality, where null matches a missing field; $lt/$gt/$gte of numbers;
 * $ne; $in; top-level $or; sort; limit; updateOne with $setOnInsert/$set and upsert, replaceOne,
 * deleteOne); and a window's pipelines run through `runPipeline`, a small interpreter of the
 * stages and operators they use ($match, $project, $group, $setWindowFields). Both are checked
 * against the map computed by the definitions (docs/process-map.md) straight from the events.
 * They check the logic around the shared rules; they are no substitute for the MongoDB contract
 * suite (test/contract/mongodb.test.ts), which runs where an engine answers.
 */
import type { AnyBulkWriteOperation, Document, Filter, Sort } from 'mongodb'
import { describe, expect, it } from 'vitest'
import { prng } from '../../bench/bodies.js'
import { processMapOfAggregates, type RowPart, windowMap, windowPipelines } from '../../src/adapters/mongodb/mongodb-df-query.js'
import { type DfIo, writeDirectlyFollows } from '../../src/adapters/mongodb/mongodb-df-writes.js'
import { statsOfStored } from '../../src/core/duration-stats.js'
import { READ_MODEL_COLLECTIONS, READ_MODEL_INDEXES } from '../../src/adapters/mongodb/read-model-writes.js'
import type { DirectlyFollowsEvent } from '../../src/core/read-model-changes.js'
import type { ObjectTypeMap, Stats } from '../../src/schemas/process.js'
import { statsOfDurations } from '../helpers/duration-stats-reference.js'

type Doc = Record<string, unknown>

const isOperators = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).every((k) => k.startsWith('$'))

/** MongoDB's query semantics for the forms the write uses; comparisons only between numbers (type bracketing). */
function matches(doc: Doc, filter: Document): boolean {
  return Object.entries(filter).every(([field, cond]) => {
    if (field === '$or') return (cond as Document[]).some((f) => matches(doc, f))
    const v = doc[field] ?? null
    if (!isOperators(cond)) return v === (cond ?? null)
    return Object.entries(cond).every(([op, x]) => {
      const both = typeof v === 'number' && typeof x === 'number'
      switch (op) {
        case '$lt':
          return both && v < x
        case '$gt':
          return both && v > x
        case '$gte':
          return both && v >= x
        case '$in':
          return (x as unknown[]).includes(v)
        case '$ne':
          return v !== (x ?? null)
        default:
          throw new Error(`query operator ${op} is not in this store`)
      }
    })
  })
}

/** The collection's unique key fields (READ_MODEL_INDEXES, index `key`), sorted. */
function keyOf(collection: string): string[] {
  const indexes = (READ_MODEL_INDEXES as Record<string, { key: Record<string, unknown> }[]>)[collection]
  return Object.keys(indexes?.[0]?.key ?? {}).sort()
}

/** The DfIo port on arrays: every write's filter must be exactly the collection's unique key. */
class MemoryIo implements DfIo {
  readonly docs = new Map<string, Doc[]>()
  finds = 0
  /** The documents each collection's finds have handed out (a read stopped early counts those read before it stopped). */
  readonly returned = new Map<string, number>()

  private all(collection: string): Doc[] {
    let list = this.docs.get(collection)
    if (list === undefined) {
      list = []
      this.docs.set(collection, list)
    }
    return list
  }

  async *find(collection: string, filter: Filter<Document>, sort?: Sort, limit?: number): AsyncIterable<Document> {
    this.finds += 1
    const found = this.all(collection).filter((d) => matches(d, filter))
    const order = Object.entries((sort ?? {}) as Record<string, 1 | -1>)
    found.sort((a, b) => {
      for (const [k, dir] of order) {
        const x = a[k] as number
        const y = b[k] as number
        if (x !== y) return (x < y ? -1 : 1) * dir
      }
      return 0
    })
    for (const d of found.slice(0, limit ?? found.length)) {
      this.returned.set(collection, (this.returned.get(collection) ?? 0) + 1)
      yield structuredClone(d)
    }
  }

  async bulkWrite(collection: string, ops: AnyBulkWriteOperation<Document>[]): Promise<void> {
    const docs = this.all(collection)
    const key = keyOf(collection)
    const onKey = (filter: Document) => {
      expect([collection, Object.keys(filter).sort()]).toEqual([collection, key])
      return docs.findIndex((d) => matches(d, filter))
    }
    for (const op of ops) {
      if ('updateOne' in op) {
        const { filter, update, upsert } = op.updateOne
        if (Array.isArray(update)) throw new Error('no update pipelines here')
        let i = onKey(filter)
        if (i < 0 && upsert !== true) throw new Error(`${collection}: updateOne of a missing document ${JSON.stringify(filter)}`)
        if (i < 0) {
          docs.push({ ...filter, ...(update.$setOnInsert ?? {}) })
          i = docs.length - 1
        }
        Object.assign(docs[i] as Doc, update.$set ?? {})
      } else if ('replaceOne' in op) {
        const { filter, replacement, upsert } = op.replaceOne
        const i = onKey(filter)
        if (i < 0 && upsert !== true) throw new Error('replaceOne of a missing document')
        if (i < 0) docs.push(structuredClone(replacement))
        else docs[i] = structuredClone(replacement)
      } else if ('deleteOne' in op) {
        const i = onKey(op.deleteOne.filter)
        if (i >= 0) docs.splice(i, 1)
      } else throw new Error('no such write here')
    }
    const keys = docs.map((d) => JSON.stringify(key.map((k) => d[k] ?? null)))
    expect(new Set(keys).size).toBe(keys.length)
  }

  /** A collection's documents in a canonical order (JSON text), `omit` fields left out. */
  sorted(collection: string, omit: string[] = []): string[] {
    return this.all(collection)
      .map((d) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(d)
              .filter(([k]) => !omit.includes(k))
              .sort(([a], [b]) => (a < b ? -1 : 1)),
          ),
        ),
      )
      .sort()
  }
}

const DS = 'ds1'
const MIN = 60_000
const T0 = Date.parse('2024-05-01T10:00:00.000Z')

interface Ev {
  act: string
  minutes: number
  end?: number
  objects: string[]
}

/** `o…` objects are orders, `i…` items. */
const typeOf = (object: string) => (object.startsWith('o') ? 'order' : 'item')

function dfEvent(e: Ev, position: number): DirectlyFollowsEvent {
  return {
    datasetId: DS,
    position,
    activity: e.act,
    time: T0 + e.minutes * MIN,
    endTime: e.end === undefined ? null : T0 + e.end * MIN,
    objects: e.objects.map((objectId) => ({ objectId, type: typeOf(objectId) })),
  }
}

function stats(seconds: number[]): Stats {
  const s = [...seconds].sort((a, b) => a - b)
  const sum = s.reduce((a, b) => a + b, 0)
  const mid = (s.length - 1) / 2
  return {
    count: s.length,
    mean: sum / s.length,
    median: ((s[Math.floor(mid)] ?? 0) + (s[Math.ceil(mid)] ?? 0)) / 2,
    min: s[0] ?? 0,
    max: s[s.length - 1] ?? 0,
    sum,
  }
}

/** The value at a field path (`a.b`) of `doc`; undefined when missing. */
function pathOf(doc: Doc, path: string): unknown {
  let v: unknown = doc
  for (const part of path.split('.')) v = typeof v === 'object' && v !== null ? (v as Doc)[part] : undefined
  return v
}

/** MongoDB's aggregation expressions, the operators the window's pipelines use. */
function evaluate(expr: unknown, doc: Doc): unknown {
  if (typeof expr === 'string' && expr.startsWith('$')) return pathOf(doc, expr.slice(1))
  if (Array.isArray(expr)) return expr.map((e) => evaluate(e, doc))
  if (typeof expr !== 'object' || expr === null) return expr
  const entries = Object.entries(expr)
  const [op, arg] = entries[0] ?? ['', undefined]
  if (entries.length !== 1 || !op.startsWith('$')) return Object.fromEntries(entries.map(([k, v]) => [k, evaluate(v, doc)]))
  if (op === '$literal') return arg
  const args = (Array.isArray(arg) ? arg : [arg]).map((a) => evaluate(a, doc))
  const nums = args as number[]
  switch (op) {
    case '$cond':
      return args[0] === true ? args[1] : args[2]
    case '$in':
      return (args[1] as unknown[]).includes(args[0])
    case '$and':
      return args.every((a) => a === true)
    case '$gte':
      return typeof args[0] === 'number' && typeof args[1] === 'number' && args[0] >= args[1]
    case '$isNumber':
      return typeof args[0] === 'number'
    case '$add':
      return nums.reduce((a, b) => a + b, 0)
    case '$subtract':
      return (nums[0] as number) - (nums[1] as number)
    case '$divide':
      return (nums[0] as number) / (nums[1] as number)
    case '$floor':
      return Math.floor(nums[0] as number)
    case '$max':
      return Math.max(...nums.filter((n) => typeof n === 'number'))
    default:
      throw new Error(`expression operator ${op} is not in this interpreter`)
  }
}

/** `docs` grouped by the value of expression `key` (as JSON text). */
function groupsOf(docs: readonly Doc[], key: unknown): Map<string, Doc[]> {
  const groups = new Map<string, Doc[]>()
  for (const d of docs) {
    const k = JSON.stringify(evaluate(key, d))
    groups.set(k, [...(groups.get(k) ?? []), d])
  }
  return groups
}

/** MongoDB's aggregation stages, as the window's pipelines use them. */
function runPipeline(docs: readonly Doc[], pipeline: readonly Document[]): Doc[] {
  let out: Doc[] = docs.map((d) => ({ ...d }))
  for (const stage of pipeline) {
    const [name, spec] = Object.entries(stage)[0] as [string, Doc]
    switch (name) {
      case '$match':
        out = out.filter((d) => matches(d, spec))
        break
      case '$project':
        out = out.map((d) => {
          const next: Doc = spec._id === 0 ? {} : { _id: d._id }
          for (const [k, v] of Object.entries(spec)) if (k !== '_id') next[k] = v === 1 ? d[k] : evaluate(v, d)
          return next
        })
        break
      case '$group': {
        out = [...groupsOf(out, spec._id)].map(([key, members]) => {
          const g: Doc = { _id: JSON.parse(key) }
          for (const [field, acc] of Object.entries(spec)) {
            if (field === '_id') continue
            const [op, e] = Object.entries(acc as Doc)[0] as [string, unknown]
            const values = members.map((m) => evaluate(e, m))
            const numbers = values.filter((v): v is number => typeof v === 'number')
            if (op === '$sum') g[field] = numbers.reduce((a, b) => a + b, 0)
            else if (op === '$min') g[field] = Math.min(...numbers)
            else if (op === '$max') g[field] = Math.max(...numbers)
            else if (op === '$avg') g[field] = numbers.length === 0 ? null : numbers.reduce((a, b) => a + b, 0) / numbers.length
            else if (op === '$first') g[field] = values[0]
            else throw new Error(`accumulator ${op} is not in this interpreter`)
          }
          return g
        })
        break
      }
      case '$setWindowFields': {
        const partitions = groupsOf(out, spec.partitionBy)
        const [[sortField, dir]] = Object.entries(spec.sortBy as Record<string, number>) as [[string, number]]
        out = [...partitions.values()].flatMap((members) =>
          [...members]
            .sort((a, b) => ((a[sortField] as number) - (b[sortField] as number)) * dir)
            .map((d, i) => {
              const next: Doc = { ...d }
              for (const [field, op] of Object.entries(spec.output as Record<string, Doc>)) {
                if ('$documentNumber' in op) next[field] = i + 1
                else if ('$count' in op) next[field] = members.length
                else throw new Error('window operator not in this interpreter')
              }
              return next
            }),
        )
        break
      }
      default:
        throw new Error(`stage ${name} is not in this interpreter`)
    }
  }
  return out
}

/** The all-time map by its definitions (docs/process-map.md), straight from the events: the oracle. */
function mapByDefinition(events: readonly DirectlyFollowsEvent[]): ObjectTypeMap[] {
  const traces = new Map<string, { ot: string; steps: DirectlyFollowsEvent[] }>()
  for (const e of events) {
    for (const o of e.objects) {
      const trace = traces.get(o.objectId) ?? { ot: o.type, steps: [] }
      trace.steps.push(e)
      traces.set(o.objectId, trace)
    }
  }
  const maps = new Map<
    string,
    {
      objects: number
      acts: Map<string, { events: Set<number>; objects: Set<string>; total: number; run: Map<number, number> }>
      edges: Map<string, { total: number; objects: Set<string>; couples: Set<string>; elapsed: number[]; waiting: number[] }>
      starts: Map<string, number>
      ends: Map<string, number>
    }
  >()
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
  for (const [object, { ot, steps }] of traces) {
    steps.sort((a, b) => a.time - b.time || a.position - b.position)
    const m = maps.get(ot) ?? { objects: 0, acts: new Map(), edges: new Map(), starts: new Map(), ends: new Map() }
    maps.set(ot, m)
    m.objects += 1
    bump(m.starts, (steps[0] as DirectlyFollowsEvent).activity)
    bump(m.ends, (steps[steps.length - 1] as DirectlyFollowsEvent).activity)
    steps.forEach((e, i) => {
      const a = m.acts.get(e.activity) ?? { events: new Set(), objects: new Set(), total: 0, run: new Map() }
      m.acts.set(e.activity, a)
      a.events.add(e.position)
      a.objects.add(object)
      a.total += 1
      if (e.endTime !== null) a.run.set(e.position, e.endTime - e.time)
      const p = steps[i - 1]
      if (p === undefined) return
      const key = `${p.activity}\u0000${e.activity}`
      const edge = m.edges.get(key) ?? { total: 0, objects: new Set(), couples: new Set(), elapsed: [], waiting: [] }
      m.edges.set(key, edge)
      edge.total += 1
      edge.objects.add(object)
      edge.couples.add(`${String(p.position)}>${String(e.position)}`)
      edge.elapsed.push(e.time - p.time)
      if (p.endTime !== null) edge.waiting.push(Math.max(0, e.time - p.endTime))
    })
  }
  const byName = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return byName(maps).map(([ot, m]) => ({
    object_type: ot,
    objects: m.objects,
    activities: byName(m.acts).map(([activity, a]) => ({
      activity,
      events: a.events.size,
      objects: a.objects.size,
      total: a.total,
      run_time: statsOfDurations([...a.run.values()]),
    })),
    edges: byName(m.edges).map(([key, e]) => {
      const [source, target] = key.split('\u0000') as [string, string]
      return {
        source,
        target,
        total: e.total,
        objects: e.objects.size,
        event_couples: e.couples.size,
        elapsed: statsOfDurations(e.elapsed) as Stats,
        waiting: statsOfDurations(e.waiting),
      }
    }),
    start_activities: byName(m.starts).map(([activity, objects]) => ({ activity, objects })),
    end_activities: byName(m.ends).map(([activity, objects]) => ({ activity, objects })),
  }))
}

/** Applies `events` arriving in this order (positions 1, 2, … in arrival order), in runs of the given sizes. */
async function arrive(io: MemoryIo, events: readonly Ev[], runSizes: readonly number[] = [events.length]): Promise<DirectlyFollowsEvent[]> {
  const stored = events.map((e, i) => dfEvent(e, i + 1))
  let at = 0
  for (const size of runSizes) {
    await writeDirectlyFollows(io, stored.slice(at, at + size))
    at += size
  }
  if (at < stored.length) await writeDirectlyFollows(io, stored.slice(at))
  return stored
}

/**
 * Applies `events` arriving in this order in random runs of 1 to `maxRun` events, then replays a
 * random stretch of the log (at most `maxRun` + 1 events) as a restarted projector would.
 */
async function arriveWithReplay(io: MemoryIo, events: readonly Ev[], rnd: () => number, maxRun: number): Promise<DirectlyFollowsEvent[]> {
  const runs: number[] = []
  for (let left = events.length; left > 0; ) {
    const n = Math.min(left, 1 + Math.floor(rnd() * maxRun))
    runs.push(n)
    left -= n
  }
  const stored = await arrive(io, events, runs)
  const from = Math.floor(rnd() * stored.length)
  await writeDirectlyFollows(io, stored.slice(from, from + 1 + Math.floor(rnd() * (maxRun + 1))))
  return stored
}

/**
 * 3 to 16 random events over few distinct minutes (0 to `minutes` − 1, so ties on time are
 * common), each with 1 to 3 of five objects and, with probability `ends`, an end time.
 */
function randomEvents(rnd: () => number, minutes: number, ends: number): Ev[] {
  const objects = ['o1', 'o2', 'i1', 'i2', 'i3']
  const acts = ['A', 'B', 'C']
  return Array.from({ length: 3 + Math.floor(rnd() * 14) }, () => {
    const t = Math.floor(rnd() * minutes)
    const chosen = objects.filter(() => rnd() < 0.35).slice(0, 3)
    return {
      act: acts[Math.floor(rnd() * acts.length)] as string,
      minutes: t,
      ...(rnd() < ends ? { end: t + Math.floor(rnd() * 3) } : {}),
      objects: chosen.length > 0 ? chosen : ['i1'],
    }
  })
}

describe('the directly-follows write on MongoDB (through MemoryIo)', () => {
  // o1: A(0, ends 0.5) → B(1) → C(3); o2: A(0, the same event) → C(2).
  const SMALL: Ev[] = [
    { act: 'A', minutes: 0, end: 0.5, objects: ['o1', 'o2'] },
    { act: 'B', minutes: 1, objects: ['o1'] },
    { act: 'C', minutes: 2, objects: ['o2'] },
    { act: 'C', minutes: 3, objects: ['o1'] },
  ]
  const SMALL_MAP = {
    object_type: 'order',
    objects: 2,
    activities: [
      { activity: 'A', events: 1, objects: 2, total: 2, run_time: stats([30]) },
      { activity: 'B', events: 1, objects: 1, total: 1, run_time: null },
      { activity: 'C', events: 2, objects: 2, total: 2, run_time: null },
    ],
    edges: [
      { source: 'A', target: 'B', total: 1, objects: 1, event_couples: 1, elapsed: stats([60]), waiting: stats([30]) },
      { source: 'A', target: 'C', total: 1, objects: 1, event_couples: 1, elapsed: stats([120]), waiting: stats([90]) },
      { source: 'B', target: 'C', total: 1, objects: 1, event_couples: 1, elapsed: stats([120]), waiting: null },
    ],
    start_activities: [{ activity: 'A', objects: 2 }],
    end_activities: [{ activity: 'C', objects: 2 }],
  }
  const mapOf = (io: MemoryIo) => processMapOfAggregates(io.docs.get(READ_MODEL_COLLECTIONS.dfAggregates) ?? [])

  it('keeps the steps with their predecessors, and aggregates that give the map by its definitions', async () => {
    const io = new MemoryIo()
    await arrive(io, SMALL)
    expect(mapOf(io)).toEqual({ object_types: [SMALL_MAP], median_relative_error: 0 })
    const steps = io.docs.get(READ_MODEL_COLLECTIONS.dfSteps) ?? []
    const o1 = steps.filter((s) => s.object_id === 'o1').sort((a, b) => (a.t as number) - (b.t as number))
    expect(o1.map((s) => [s.activity, s.prev_act, s.prev_pos, s.prev_te])).toEqual([
      ['A', null, null, null],
      ['B', 'A', 1, T0 + 0.5 * MIN],
      ['C', 'B', 2, null],
    ])
    expect(io.sorted(READ_MODEL_COLLECTIONS.dfMemberships)).toEqual(
      [
        { a: 'A', b: null, dataset_id: DS, n: 1, object_id: 'o1' },
        { a: 'A', b: 'B', dataset_id: DS, n: 1, object_id: 'o1' },
        { a: 'B', b: null, dataset_id: DS, n: 1, object_id: 'o1' },
        { a: 'B', b: 'C', dataset_id: DS, n: 1, object_id: 'o1' },
        { a: 'C', b: null, dataset_id: DS, n: 1, object_id: 'o1' },
        { a: 'A', b: null, dataset_id: DS, n: 1, object_id: 'o2' },
        { a: 'A', b: 'C', dataset_id: DS, n: 1, object_id: 'o2' },
        { a: 'C', b: null, dataset_id: DS, n: 1, object_id: 'o2' },
      ]
        .map((d) => JSON.stringify(d))
        .sort(),
    )
  })

  it('puts an event that arrives out of time order between its neighbours: p → n becomes p → e and e → n', async () => {
    const io = new MemoryIo()
    // C(3) and C(2) first, then A, then B of o1 between A and C(3).
    await arrive(io, [SMALL[3], SMALL[2], SMALL[0], SMALL[1]] as Ev[], [1, 1, 1, 1])
    expect(mapOf(io)).toEqual({ object_types: [SMALL_MAP], median_relative_error: 0 })
  })

  it('changes nothing when a run is applied again (a replayed record)', async () => {
    const io = new MemoryIo()
    const stored = await arrive(io, SMALL)
    const snapshot = () => [READ_MODEL_COLLECTIONS.dfSteps, READ_MODEL_COLLECTIONS.dfMemberships, READ_MODEL_COLLECTIONS.dfAggregates].map((c) => io.sorted(c))
    const first = snapshot()
    await writeDirectlyFollows(io, stored)
    await writeDirectlyFollows(io, stored.slice(1, 3))
    expect(snapshot()).toEqual(first)
    expect(first[0]).toHaveLength(5)
  })

  it('reads a bounded number of steps for a late step and an appended one of an object with a long history, with the read model of the events one by one', async () => {
    // o1 has 300 steps (minutes 0, 1, …, 299, with i1 on every tenth); then one run brings a late step of o1 at minute 100.5 and one after its last.
    const history: Ev[] = Array.from({ length: 300 }, (_, i) => ({
      act: ['A', 'B', 'C'][i % 3] as string,
      minutes: i,
      objects: i % 10 === 0 ? ['o1', 'i1'] : ['o1'],
    }))
    const run: Ev[] = [
      { act: 'L', minutes: 100.5, end: 101, objects: ['o1'] },
      { act: 'Z', minutes: 400, objects: ['o1', 'i1'] },
    ]
    const io = new MemoryIo()
    const stored = await arrive(io, history, [50, 50, 50, 50, 50, 50])
    io.returned.clear()
    const runEvents = run.map((e, i) => dfEvent(e, history.length + i + 1))
    await writeDirectlyFollows(io, runEvents)
    // o1: the step before 100.5 and the two at or after it (a cluster that ends at minute 101), then the step before 400 (the
    // last one); i1: the step before 400. Memberships: o1's and i1's 3 activities and 3 edges each; no event's steps (kin 1);
    // the stored aggregates the run changes: order B → C (B(100) → C(101) is removed), order C and item C (their ends move).
    expect(Object.fromEntries(io.returned)).toEqual({
      [READ_MODEL_COLLECTIONS.dfSteps]: 5,
      [READ_MODEL_COLLECTIONS.dfMemberships]: 12,
      [READ_MODEL_COLLECTIONS.dfAggregates]: 3,
    })
    const oneByOne = new MemoryIo()
    for (const e of [...stored, ...runEvents]) await writeDirectlyFollows(oneByOne, [e])
    for (const c of [READ_MODEL_COLLECTIONS.dfSteps, READ_MODEL_COLLECTIONS.dfMemberships, READ_MODEL_COLLECTIONS.dfAggregates]) {
      expect({ c, docs: io.sorted(c) }).toEqual({ c, docs: oneByOne.sorted(c) })
    }
  })

  it('gives the same read model whatever the arrival order, runs and replays (seeded random orders)', async () => {
    const objects = ['o1', 'o2', 'o3', 'i1', 'i2']
    const acts = ['A', 'B', 'C', 'D']
    const rnd = prng(26)
    // Distinct times, so the order of each trace does not depend on the positions arrival gives.
    const events: Ev[] = Array.from({ length: 24 }, (_, i) => {
      const chosen = objects.filter(() => rnd() < 0.4)
      return {
        act: acts[Math.floor(rnd() * acts.length)] as string,
        minutes: i * 7 + Math.floor(rnd() * 5),
        ...(rnd() < 0.3 ? { end: i * 7 + 5 + Math.floor(rnd() * 9) } : {}),
        objects: chosen.length > 0 ? chosen : ['o1'],
      }
    })
    const reference = new MemoryIo()
    await arrive(reference, events)
    const expected = {
      map: mapOf(reference),
      aggregates: reference.sorted(READ_MODEL_COLLECTIONS.dfAggregates),
      memberships: reference.sorted(READ_MODEL_COLLECTIONS.dfMemberships),
      steps: reference.sorted(READ_MODEL_COLLECTIONS.dfSteps, ['pos', 'prev_pos']),
    }
    expect(expected.map.object_types.map((m) => m.object_type)).toEqual(['item', 'order'])
    for (let round = 0; round < 30; round += 1) {
      const order = [...events]
      for (let i = order.length - 1; i > 0; i -= 1) {
        const j = Math.floor(rnd() * (i + 1))
        ;[order[i], order[j]] = [order[j] as Ev, order[i] as Ev]
      }
      const io = new MemoryIo()
      await arriveWithReplay(io, order, rnd, 5)
      expect({
        round,
        map: mapOf(io),
        aggregates: io.sorted(READ_MODEL_COLLECTIONS.dfAggregates),
        memberships: io.sorted(READ_MODEL_COLLECTIONS.dfMemberships),
        steps: io.sorted(READ_MODEL_COLLECTIONS.dfSteps, ['pos', 'prev_pos']),
      }).toEqual({ round, ...expected })
    }
  })

  it('gives the map of the definitions for any arrival order, ties on time broken by position (seeded random orders)', async () => {
    const rnd = prng(2026)
    for (let round = 0; round < 40; round += 1) {
      const events = randomEvents(rnd, 6, 0.3)
      const io = new MemoryIo()
      const stored = await arriveWithReplay(io, events, rnd, 4)
      expect({ round, map: mapOf(io) }).toEqual({ round, map: { object_types: mapByDefinition(stored), median_relative_error: 0 } })
    }
  })

  it('maps a window by the definitions: the events in it, edges across its bounds left out (pipelines run by an interpreter)', async () => {
    const rnd = prng(7)
    for (let round = 0; round < 30; round += 1) {
      const events = randomEvents(rnd, 8, 0.4)
      const io = new MemoryIo()
      const stored = await arriveWithReplay(io, events, rnd, 4)
      const lo = Math.floor(rnd() * 4)
      const hi = lo + 1 + Math.floor(rnd() * 5)
      const windows = [
        { from: lo, to: hi },
        { from: lo, to: undefined },
        { from: undefined, to: hi },
      ]
      for (const w of windows) {
        for (const objectTypes of [undefined, ['item']]) {
          const filter = {
            ...(w.from === undefined ? {} : { from: new Date(T0 + w.from * MIN).toISOString() }),
            ...(w.to === undefined ? {} : { to: new Date(T0 + w.to * MIN).toISOString() }),
            ...(objectTypes === undefined ? {} : { objectTypes }),
          }
          const steps = io.docs.get(READ_MODEL_COLLECTIONS.dfSteps) ?? []
          const parts = windowPipelines(DS, filter).map(([kind, pipeline]) => ({ kind, rows: runPipeline(steps, pipeline) as unknown as RowPart[] }))
          const inWindow = stored
            .filter((e) => (w.from === undefined || e.time >= T0 + w.from * MIN) && (w.to === undefined || e.time < T0 + w.to * MIN))
            .map((e) => ({ ...e, objects: e.objects.filter((o) => objectTypes === undefined || objectTypes.includes(o.type)) }))
            .filter((e) => e.objects.length > 0)
          expect({ round, w, objectTypes, map: windowMap(parts) }).toEqual({
            round,
            w,
            objectTypes,
            map: { object_types: mapByDefinition(inWindow), median_relative_error: 0 },
          })
        }
      }
    }
  })

  it('keeps min and max exact when late events split every kept smallest and largest duration of a sketched edge', async () => {
    // o1: A every 10 + i minutes (i = 0…99), each ending a minute later: A → A holds 100 elapsed and waiting times, sketched.
    const starts: number[] = [0]
    for (let i = 0; i < 100; i += 1) starts.push((starts[i] as number) + 10 + i)
    const early: Ev[] = starts.map((m) => ({ act: 'A', minutes: m, end: m + 1, objects: ['o1'] }))
    // Late B events split every couple but the 10 middle ones (i = 45…54): A → A loses its 32 smallest and 32 largest, twice over.
    const late: Ev[] = starts.slice(0, -1).flatMap((m, i) => (i >= 45 && i < 55 ? [] : [{ act: 'B', minutes: m + 3, objects: ['o1'] }]))
    const io = new MemoryIo()
    const stored = await arrive(io, [...early, ...late], [early.length, ...late.map(() => 7)])
    const map = mapOf(io)
    const loop = map.object_types.flatMap((t) => t.edges).find((e) => e.source === 'A' && e.target === 'A')
    // Elapsed 55 … 64 minutes, waiting a minute less.
    expect([loop?.total, loop?.elapsed.min, loop?.elapsed.max, loop?.waiting?.min, loop?.waiting?.max]).toEqual([10, 55 * 60, 64 * 60, 54 * 60, 63 * 60])
    // Every count, sum, min and max of every edge is the definitions' (B → A's 90 couples have a sketched median).
    const withoutMedians = (maps: readonly ObjectTypeMap[]) =>
      maps
        .flatMap((t) => t.edges)
        .map((e) => ({ ...e, elapsed: { ...e.elapsed, median: 0 }, waiting: e.waiting === null ? null : { ...e.waiting, median: 0 } }))
    expect(map.median_relative_error).toBe(0.01)
    expect(withoutMedians(map.object_types)).toEqual(withoutMedians(mapByDefinition(stored)))
  })

  it('reads stored duration statistics back without the fields a store may hold as null', () => {
    expect(statsOfStored({ n: 2, sum: 7, exact: [3, 4], k0: null, lo: null })).toEqual({ n: 2, sum: 7, exact: [3, 4] })
    expect(statsOfStored({ n: 70, sum: 100, lo: [0], hi: [9], z: 1, k0: -3, c: [1, 0, 2] })).toEqual({
      n: 70,
      sum: 100,
      lo: [0],
      hi: [9],
      z: 1,
      k0: -3,
      c: [1, 0, 2],
    })
  })
})
