/**
 * The directly-follows read model's rules (src/core/directly-follows.ts; definitions in
 * docs/process-map.md): linkSteps on in-order and out-of-order arrivals and replays, the clusters
 * of new steps a store reads one at a time (clusterAt, linkByClusters), and aggregateChanges'
 * objects and distinct event couples, over stored traces held in memory here.
 */
import { describe, expect, it } from 'vitest'
import { prng } from '../../bench/bodies.js'
import {
  aggregateChanges,
  applyDelta,
  clusterAt,
  compareSteps,
  type DfBounds,
  type DfChanges,
  type DfDelta,
  type DfLinking,
  type DfNeighbours,
  type DfRegion,
  type DfStep,
  dfKeyString,
  edgeRefills,
  type EventStepRow,
  linkByClusters,
  linkSteps,
  membershipsAsked,
  refillAggregate,
  stepsByObject,
} from '../../src/core/directly-follows.js'
import { EXTREMES, summarize } from '../../src/core/duration-stats.js'

/** A step of object `object` (type `order` unless given) at time `t` (ms), position `pos`. */
const step = (object: string, act: string, t: number, pos: number, options: { ot?: string; te?: number; kin?: number } = {}): DfStep<string> => ({
  dataset: 'd',
  object,
  ot: options.ot ?? 'order',
  act,
  t,
  pos,
  te: options.te ?? null,
  kin: options.kin ?? 1,
})

/** Sets each step's `kin`: the distinct objects of its type among `steps` at its position (its event's, when `steps` holds the whole event). */
const withKin = (steps: DfStep<string>[]): DfStep<string>[] => {
  const objects = new Map<string, Set<string>>()
  for (const s of steps) {
    const k = `${String(s.pos)}|${s.ot}`
    const set = objects.get(k) ?? new Set<string>()
    set.add(s.object)
    objects.set(k, set)
  }
  for (const s of steps) s.kin = objects.get(`${String(s.pos)}|${s.ot}`)?.size ?? 1
  return steps
}

/** Stored traces in memory: each object's steps, with each step's stored predecessor. */
class Traces {
  readonly steps = new Map<string, DfStep<string>[]>()
  readonly prev = new Map<string, DfStep<string> | null>()
  readonly memberships = new Map<string, number>()

  /** Stores whole traces, as a store would after projecting them. */
  constructor(traces: DfStep<string>[][] = []) {
    withKin(traces.flat())
    for (const trace of traces) {
      const sorted = [...trace].sort(compareSteps)
      const first = sorted[0]
      if (first === undefined) continue
      this.steps.set(first.object, sorted)
      sorted.forEach((s, i) => {
        this.prev.set(this.key(s), sorted[i - 1] ?? null)
        this.bump(s.object, s.act, '', 1)
        const p = sorted[i - 1]
        if (p !== undefined) this.bump(s.object, p.act, s.act, 1)
      })
    }
  }

  key(s: { object: string; pos: number }): string {
    return `${s.object}@${String(s.pos)}`
  }

  bump(object: string, a: string, b: string, by: number): void {
    const k = `${object}|${a}|${b}`
    this.memberships.set(k, (this.memberships.get(k) ?? 0) + by)
  }

  /** DfRegion of an object: the stored steps around its candidates' bounds. */
  region = (object: string, { first, last }: DfBounds<string>): DfRegion<string> => {
    const all = this.steps.get(object) ?? []
    const before = all.filter((s) => compareSteps(s, first) < 0)
    const after = all.filter((s) => compareSteps(s, last) > 0)
    return {
      pred: before[before.length - 1] ?? null,
      mid: all.filter((s) => compareSteps(s, first) >= 0 && compareSteps(s, last) <= 0),
      succ: after[0] ?? null,
    }
  }

  /** DfNeighbours of a candidate: the stored step before it, the first at or after it, and the one after that. */
  neighbours = (c: DfStep<string>): DfNeighbours<string> => {
    const all = this.steps.get(c.object) ?? []
    const before = all.filter((s) => compareSteps(s, c) < 0)
    const rest = all.filter((s) => compareSteps(s, c) >= 0)
    return { before: before[before.length - 1] ?? null, at: rest[0] ?? null, next: rest[1] ?? null }
  }

  /** linkByClusters driven over these traces; `asks` gets each round's asked steps as `object:activity@pos`. */
  linkByClusters(steps: DfStep<string>[], asks: string[][] = []): DfLinking<string> {
    const walk = linkByClusters(stepsByObject(withKin(steps)))
    let round = walk.next()
    while (round.done !== true) {
      asks.push(round.value.map((c) => `${c.object}:${c.act}@${String(c.pos)}`))
      round = walk.next(new Map(round.value.map((c) => [c.object, this.neighbours(c)])))
    }
    return round.value
  }

  membership = (object: string, a: string, b: string): number => this.memberships.get(`${object}|${a}|${b}`) ?? 0

  /** The stored steps of a target's event (every object's step at its position). */
  eventSteps = (n: DfStep<string>): EventStepRow<string>[] => {
    const rows: EventStepRow<string>[] = []
    for (const trace of this.steps.values())
      for (const s of trace)
        if (s.pos === n.pos) {
          const p = this.prev.get(this.key(s)) ?? null
          rows.push({ object: s.object, ot: s.ot, prevPos: p?.pos ?? null, prevAct: p?.act ?? null })
        }
    return rows
  }

  link(steps: DfStep<string>[]): DfLinking<string> {
    return linkSteps(stepsByObject(withKin(steps)), this.region)
  }

  changes(linking: DfLinking<string>): DfChanges<string> {
    return aggregateChanges(linking, this.membership, this.eventSteps)
  }
}

/** A linking as `activity@pos` names, to compare briefly. */
const named = (l: DfLinking<string>) => {
  const s = (x: DfStep<string> | null) => (x === null ? null : `${x.act}@${String(x.pos)}`)
  return {
    inserts: l.inserts.map((r) => [r.step.object, s(r.step), s(r.prev)]),
    relinks: l.relinks.map((r) => [r.step.object, s(r.step), s(r.prev)]),
    added: l.added.map((c) => [c.p.object, `${s(c.p)}>${s(c.n)}`]),
    removed: l.removed.map((c) => [c.p.object, `${s(c.p)}>${s(c.n)}`]),
    starts: l.starts.map((m) => [m.ot, m.from, m.to]),
    ends: l.ends.map((m) => [m.ot, m.from, m.to]),
    storedTargets: l.storedTargets.map((x) => s(x)),
  }
}

/** The deltas by `a` or `a>b`, without the empty fields. */
const deltasOf = (changes: DfChanges<string>) => {
  const out: Record<string, Partial<DfDelta>> = {}
  for (const d of changes.deltas) {
    const brief: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(d)) {
      if (k === 'key') continue
      if (Array.isArray(v) ? v.length > 0 : v !== 0) brief[k] = v
    }
    out[d.key.b === '' ? `${d.key.ot}:${d.key.a}` : `${d.key.ot}:${d.key.a}>${d.key.b}`] = brief
  }
  return out
}

describe('linkSteps', () => {
  it("links a new object's first step: its start and end, no couple", () => {
    const l = new Traces().link([step('o1', 'A', 1000, 1)])
    expect(named(l)).toEqual({
      inserts: [['o1', 'A@1', null]],
      relinks: [],
      added: [],
      removed: [],
      starts: [['order', null, 'A']],
      ends: [['order', null, 'A']],
      storedTargets: [],
    })
  })

  it('links an in-order append after the last step: one couple added, the end moves', () => {
    const traces = new Traces([[step('o1', 'A', 1000, 1)]])
    expect(named(traces.link([step('o1', 'B', 2000, 2)]))).toEqual({
      inserts: [['o1', 'B@2', 'A@1']],
      relinks: [],
      added: [['o1', 'A@1>B@2']],
      removed: [],
      starts: [],
      ends: [['order', 'A', 'B']],
      storedTargets: [],
    })
  })

  it('puts an out-of-order event between its neighbours: p→n removed, p→e and e→n added, n relinked to e', () => {
    const traces = new Traces([[step('o1', 'P', 1000, 1), step('o1', 'N', 3000, 2)]])
    expect(named(traces.link([step('o1', 'E', 2000, 3)]))).toEqual({
      inserts: [['o1', 'E@3', 'P@1']],
      relinks: [['o1', 'N@2', 'E@3']],
      added: [
        ['o1', 'P@1>E@3'],
        ['o1', 'E@3>N@2'],
      ],
      removed: [['o1', 'P@1>N@2']],
      starts: [],
      ends: [],
      // N@2 is its event's only order: its removed and added couples are its event's, no read.
      storedTargets: [],
    })
  })

  it("lists a relinked stored step as a target, to read its event's steps, only when its event has another object of its type", () => {
    const traces = new Traces([
      [step('o1', 'P', 1000, 1), step('o1', 'N', 3000, 2)],
      [step('i1', 'P', 1000, 1, { ot: 'item' }), step('i1', 'N', 3000, 2, { ot: 'item' })],
      [step('i2', 'N', 3000, 2, { ot: 'item' })],
    ])
    const l = traces.link([step('o1', 'E', 2000, 3), step('i1', 'E', 2000, 3, { ot: 'item' })])
    expect(named(l).relinks).toEqual([
      ['o1', 'N@2', 'E@3'],
      ['i1', 'N@2', 'E@3'],
    ])
    expect(named(l).storedTargets).toEqual(['N@2'])
    expect(l.storedTargets.map((s) => s.object)).toEqual(['i1'])
  })

  it('orders equal times by log position', () => {
    const traces = new Traces([[step('o1', 'P', 1000, 1), step('o1', 'N', 1000, 5)]])
    expect(named(traces.link([step('o1', 'E', 1000, 3)])).added).toEqual([
      ['o1', 'P@1>E@3'],
      ['o1', 'E@3>N@5'],
    ])
  })

  it('moves the start when an event arrives before the first step', () => {
    const traces = new Traces([[step('o1', 'A', 5000, 1), step('o1', 'B', 6000, 2)]])
    expect(named(traces.link([step('o1', 'S', 1000, 3)]))).toEqual({
      inserts: [['o1', 'S@3', null]],
      relinks: [['o1', 'A@1', 'S@3']],
      added: [['o1', 'S@3>A@1']],
      removed: [],
      starts: [['order', 'A', 'S']],
      ends: [],
      storedTargets: [],
    })
  })

  it('links several new steps of one object in one run, around and between stored ones', () => {
    const traces = new Traces([[step('o1', 'A', 2000, 1), step('o1', 'B', 4000, 2)]])
    const l = traces.link([step('o1', 'Z', 5000, 5), step('o1', 'S', 1000, 3), step('o1', 'M', 3000, 4)])
    expect(named(l)).toEqual({
      inserts: [
        ['o1', 'S@3', null],
        ['o1', 'M@4', 'A@1'],
        ['o1', 'Z@5', 'B@2'],
      ],
      relinks: [
        ['o1', 'A@1', 'S@3'],
        ['o1', 'B@2', 'M@4'],
      ],
      added: [
        ['o1', 'S@3>A@1'],
        ['o1', 'A@1>M@4'],
        ['o1', 'M@4>B@2'],
        ['o1', 'B@2>Z@5'],
      ],
      removed: [['o1', 'A@1>B@2']],
      starts: [['order', 'A', 'S']],
      ends: [['order', 'B', 'Z']],
      storedTargets: [],
    })
  })

  it('drops a replayed step: nothing to insert, relink, add or move', () => {
    const traces = new Traces([[step('o1', 'A', 1000, 1), step('o1', 'B', 2000, 2), step('o1', 'C', 3000, 3)]])
    const empty = { inserts: [], relinks: [], added: [], removed: [], starts: [], ends: [], storedTargets: [] }
    expect(named(traces.link([step('o1', 'B', 2000, 2)]))).toEqual(empty)
    expect(named(traces.link([step('o1', 'A', 1000, 1), step('o1', 'C', 3000, 3)]))).toEqual(empty)
    expect(traces.changes(traces.link([step('o1', 'B', 2000, 2)]))).toEqual({ deltas: [], memberships: [] })
  })

  it('links a replayed step with a new one as the new one alone', () => {
    const traces = new Traces([[step('o1', 'A', 1000, 1), step('o1', 'B', 2000, 2)]])
    expect(named(traces.link([step('o1', 'B', 2000, 2), step('o1', 'C', 3000, 3)]))).toMatchObject({
      inserts: [['o1', 'C@3', 'B@2']],
      relinks: [],
      added: [['o1', 'B@2>C@3']],
      removed: [],
    })
  })
})

describe('clusterAt', () => {
  // o1 stores A(1000), B(2000), C(3000).
  const A = step('o1', 'A', 1000, 1)
  const B = step('o1', 'B', 2000, 2)
  const C = step('o1', 'C', 3000, 3)
  const traces = new Traces([[A, B, C]])
  const brief = ({ cluster, next }: ReturnType<typeof clusterAt<string>>) => {
    const s = (x: DfStep<string> | null) => (x === null ? null : `${x.act}@${String(x.pos)}`)
    return { steps: cluster.steps.map(s), pred: s(cluster.region.pred), mid: cluster.region.mid.map(s), succ: s(cluster.region.succ), next }
  }

  it('makes one cluster of appends after the last stored step: pred the last step, no succ', () => {
    const candidates = [step('o1', 'D', 4000, 4), step('o1', 'E', 5000, 5), step('o1', 'F', 5000, 6)]
    expect(brief(clusterAt(candidates, 0, traces.neighbours(candidates[0] as DfStep<string>)))).toEqual({
      steps: ['D@4', 'E@5', 'F@6'],
      pred: 'C@3',
      mid: [],
      succ: null,
      next: 3,
    })
  })

  it('makes one cluster of late steps with no stored step between them, and another for each past a stored step', () => {
    const candidates = [step('o1', 'X', 1200, 4), step('o1', 'Y', 1800, 5), step('o1', 'Z', 2500, 6), step('o1', 'W', 9000, 7)]
    const at = (i: number) => brief(clusterAt(candidates, i, traces.neighbours(candidates[i] as DfStep<string>)))
    expect(at(0)).toEqual({ steps: ['X@4', 'Y@5'], pred: 'A@1', mid: [], succ: 'B@2', next: 2 })
    expect(at(2)).toEqual({ steps: ['Z@6'], pred: 'B@2', mid: [], succ: 'C@3', next: 3 })
    expect(at(3)).toEqual({ steps: ['W@7'], pred: 'C@3', mid: [], succ: null, next: 4 })
  })

  it('makes a replayed first candidate the mid of its cluster, the step after it the succ', () => {
    const candidates = [step('o1', 'B', 2000, 2), step('o1', 'Z', 2500, 6)]
    expect(brief(clusterAt(candidates, 0, traces.neighbours(B)))).toEqual({ steps: ['B@2', 'Z@6'], pred: 'A@1', mid: ['B@2'], succ: 'C@3', next: 2 })
  })

  it('ends a cluster at a candidate equal to its succ (a replay), which starts the next one', () => {
    const candidates = [step('o1', 'X', 1500, 4), step('o1', 'B', 2000, 2), step('o1', 'Z', 2500, 6)]
    expect(brief(clusterAt(candidates, 0, traces.neighbours(candidates[0] as DfStep<string>)))).toEqual({
      steps: ['X@4'],
      pred: 'A@1',
      mid: [],
      succ: 'B@2',
      next: 1,
    })
    expect(brief(clusterAt(candidates, 1, traces.neighbours(B)))).toEqual({ steps: ['B@2', 'Z@6'], pred: 'A@1', mid: ['B@2'], succ: 'C@3', next: 3 })
  })

  it('takes every candidate of an object with no stored step', () => {
    const candidates = [step('o9', 'A', 1000, 1), step('o9', 'B', 2000, 2)]
    expect(brief(clusterAt(candidates, 0, { before: null, at: null, next: null }))).toEqual({ steps: ['A@1', 'B@2'], pred: null, mid: [], succ: null, next: 2 })
  })

  it('refuses an index past the candidates', () => {
    expect(() => clusterAt([A], 1, { before: null, at: null, next: null })).toThrow(RangeError)
  })
})

describe('linkByClusters', () => {
  it("reads each object's clusters in rounds, and links as linkSteps does over the whole region", () => {
    const traces = new Traces([
      [step('o1', 'A', 2000, 1), step('o1', 'B', 4000, 2)],
      [step('o2', 'A', 2000, 1), step('o2', 'C', 6000, 3)],
    ])
    const run = () => [step('o1', 'Z', 5000, 5), step('o1', 'S', 1000, 4), step('o1', 'M', 3000, 6), step('o2', 'M', 3000, 6), step('o3', 'A', 1000, 4)]
    const asks: string[][] = []
    const byClusters = traces.linkByClusters(run(), asks)
    // o1 has three clusters (S | M | Z, a stored step between each), o2 one, o3 (new) one.
    expect(asks).toEqual([['o1:S@4', 'o2:M@6', 'o3:A@4'], ['o1:M@6'], ['o1:Z@5']])
    const whole = named(traces.link(run()))
    const sorted = (l: ReturnType<typeof named>) => Object.fromEntries(Object.entries(l).map(([k, v]) => [k, [...v].map((x) => JSON.stringify(x)).sort()]))
    expect(sorted(named(byClusters))).toEqual(sorted(whole))
    expect([...byClusters.newObjects]).toEqual(['o3'])
    expect(deltasOf(traces.changes(byClusters))).toEqual(deltasOf(traces.changes(traces.link(run()))))
  })

  it('gives the linking and changes of one linkSteps call over the whole region, for random stored traces and runs (seeded)', () => {
    const rnd = prng(11)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)] as T
    const sortedLinking = (l: DfLinking<string>) =>
      Object.fromEntries(Object.entries(named(l)).map(([k, v]) => [k, [...v].map((x) => JSON.stringify(x)).sort()]))
    const sortedDeltas = (c: DfChanges<string>) =>
      Object.fromEntries(
        Object.entries(deltasOf(c)).map(([k, d]) => [k, Object.fromEntries(Object.entries(d).map(([f, v]) => [f, Array.isArray(v) ? [...v].sort() : v]))]),
      )
    for (let round = 0; round < 200; round += 1) {
      // Events at positions 1..n over few distinct times; each with one to three of four objects. The first `cut` are stored.
      const n = 2 + Math.floor(rnd() * 14)
      const events = Array.from({ length: n }, (_, i) => ({ pos: i + 1, t: 1000 * Math.floor(rnd() * 6), act: pick(['A', 'B', 'C']) }))
      const steps = events.flatMap((e) =>
        ['o1', 'o2', 'i1', 'i2'].filter(() => rnd() < 0.45).map((o) => step(o, e.act, e.t, e.pos, { ot: o[0] === 'o' ? 'order' : 'item' })),
      )
      const cut = Math.floor(rnd() * (n + 1))
      const byObject = new Map<string, DfStep<string>[]>()
      for (const s of steps.filter((x) => x.pos <= cut)) byObject.set(s.object, [...(byObject.get(s.object) ?? []), s])
      const traces = new Traces([...byObject.values()])
      // The run: the rest, and some stored steps again (replays).
      const chosen = steps.filter((x) => x.pos > cut || rnd() < 0.2)
      const run = () => chosen.map((x) => ({ ...x }))
      const byClusters = traces.linkByClusters(run())
      const whole = traces.link(run())
      expect({ round, l: sortedLinking(byClusters), o: [...byClusters.newObjects].sort() }).toEqual({
        round,
        l: sortedLinking(whole),
        o: [...whole.newObjects].sort(),
      })
      expect({ round, d: sortedDeltas(traces.changes(byClusters)) }).toEqual({ round, d: sortedDeltas(traces.changes(whole)) })
    }
  })

  it('links nothing for a run of replays, reading once per replayed step (each is the succ of the one before)', () => {
    const traces = new Traces([[step('o1', 'A', 1000, 1), step('o1', 'B', 2000, 2)]])
    const asks: string[][] = []
    const l = traces.linkByClusters([step('o1', 'A', 1000, 1), step('o1', 'B', 2000, 2)], asks)
    expect(asks).toEqual([['o1:A@1'], ['o1:B@2']])
    expect(named(l)).toEqual({ inserts: [], relinks: [], added: [], removed: [], starts: [], ends: [], storedTargets: [] })
  })

  it('adds the run to the linking it is given: that linking itself, its entries first, each stored target event once', () => {
    // Event 3 names two items, so a change of either one's predecessor makes it a stored target.
    const traces = new Traces([
      [step('o1', 'A', 1000, 1, { ot: 'item' }), step('o1', 'C', 3000, 3, { ot: 'item' })],
      [step('o2', 'C', 3000, 3, { ot: 'item' })],
    ])
    const late = (object: string) => step(object, 'B', 2000, 4, { ot: 'item', kin: 2 })
    // Before the clusters: o2's late step, linked over its region (it goes before o2's first step).
    const into = linkSteps(stepsByObject([late('o2')]), traces.region)
    expect(named(into)).toMatchObject({ inserts: [['o2', 'B@4', null]], storedTargets: ['C@3'], starts: [['item', 'C', 'B']] })
    const walk = linkByClusters(stepsByObject([late('o1')]), into)
    let round = walk.next()
    while (round.done !== true) round = walk.next(new Map(round.value.map((c) => [c.object, traces.neighbours(c)])))
    expect(round.value).toBe(into)
    expect(named(into)).toEqual({
      inserts: [
        ['o2', 'B@4', null],
        ['o1', 'B@4', 'A@1'],
      ],
      relinks: [
        ['o2', 'C@3', 'B@4'],
        ['o1', 'C@3', 'B@4'],
      ],
      added: [
        ['o2', 'B@4>C@3'],
        ['o1', 'A@1>B@4'],
        ['o1', 'B@4>C@3'],
      ],
      removed: [['o1', 'A@1>C@3']],
      starts: [['item', 'C', 'B']],
      ends: [],
      storedTargets: ['C@3'],
    })
  })

  it('refuses an answer without the neighbours of an object it asked for', () => {
    const walk = linkByClusters(stepsByObject([step('o1', 'A', 1000, 1)]))
    walk.next()
    expect(() => walk.next(new Map())).toThrow(/no neighbours read for object o1/)
  })
})

describe('aggregateChanges', () => {
  it('asks membershipOf for exactly the keys membershipsAsked lists, for random stored traces and runs (seeded)', () => {
    const rnd = prng(23)
    let asked = 0
    for (let round = 0; round < 200; round += 1) {
      const n = 2 + Math.floor(rnd() * 12)
      const steps = Array.from({ length: n }, (_, i) => i + 1).flatMap((p) => {
        const act = ['A', 'B', 'C'][Math.floor(rnd() * 3)] ?? 'A'
        const time = 1000 * Math.floor(rnd() * 5)
        return ['o1', 'o2', 'i1'].filter(() => rnd() < 0.5).map((o) => step(o, act, time, p, { ot: o[0] === 'o' ? 'order' : 'item' }))
      })
      const cut = Math.floor(rnd() * (n + 1))
      const byObject = new Map<string, DfStep<string>[]>()
      for (const x of steps.filter((y) => y.pos <= cut)) byObject.set(x.object, [...(byObject.get(x.object) ?? []), x])
      const traces = new Traces([...byObject.values()])
      const linking = traces.link(steps.filter((x) => x.pos > cut || rnd() < 0.2).map((x) => ({ ...x })))
      const seen: string[] = []
      aggregateChanges(
        linking,
        (object, a, b) => {
          seen.push(`${object}|${a}|${b}`)
          return 2 ** 20
        },
        traces.eventSteps,
      )
      const listed = membershipsAsked(linking).map((k) => `${k.object}|${k.a}|${k.b}`)
      expect({ round, listed: listed.sort() }).toEqual({ round, listed: [...new Set(seen)].sort() })
      expect(listed.length).toBe(seen.length)
      asked += seen.length
    }
    // The runs ask for counts of objects with stored steps, not only of new objects.
    expect(asked).toBeGreaterThan(200)
  })

  it("counts one object's memberships exactly when a run changes more than eight of them, some twice", () => {
    // o1 has stored steps A1 → B1; the run appends A2…A12, then A2, A3 again and A1: 13 activities' counts and 14 edges',
    // A2 → A3 twice, A2 and A3 after the ninth change.
    const traces = new Traces([[step('o1', 'A1', 1000, 1), step('o1', 'B1', 2000, 2)]])
    const acts = [...Array.from({ length: 11 }, (_, i) => `A${String(i + 2)}`), 'A2', 'A3', 'A1']
    const changes = traces.changes(traces.link(acts.map((act, i) => step('o1', act, 3000 + 1000 * i, 3 + i))))
    const memberships = changes.memberships.map((m) => `${m.a}>${m.b}:${String(m.before)}→${String(m.after)}`)
    const edges = new Map<string, number>()
    for (const [i, a] of ['B1', ...acts].slice(0, -1).entries()) edges.set(`${a}>${String(acts[i])}`, (edges.get(`${a}>${String(acts[i])}`) ?? 0) + 1)
    expect(edges.get('A2>A3')).toBe(2)
    expect(memberships.sort()).toEqual([...acts.slice(0, 11).map((a) => `${a}>:0→1`), ...[...edges].map(([e, n]) => `${e}:0→${String(n)}`)].sort())
    // Each new activity and each new edge counts o1 once; A1 was stored.
    const objects = changes.deltas.filter((d) => d.objects !== 0).map((d) => `${d.key.a}>${d.key.b}:${String(d.objects)}`)
    expect(objects.sort()).toEqual([...acts.slice(0, 11).map((a) => `${a}>:1`), ...[...edges.keys()].map((e) => `${e}:1`)].sort())
  })

  it('keeps apart the aggregates and memberships of names that would meet at a NUL', () => {
    // Joined with NUL as they are, (type "x\0y", activity "a") and (type "x", activity "y\0a") make one string, and so do the
    // pairs of activities ("p\0q", "r") and ("p", "q\0r").
    const traces = new Traces([])
    const changes = traces.changes(
      traces.link([
        step('o1', 'a', 1000, 1, { ot: 'x\u0000y' }),
        step('o2', 'y\u0000a', 1000, 2, { ot: 'x' }),
        step('o3', 'p\u0000q', 1000, 3),
        step('o3', 'r', 2000, 4),
        step('o4', 'p', 1000, 5),
        step('o4', 'q\u0000r', 2000, 6),
      ]),
    )
    const activities = changes.deltas.filter((d) => d.key.b === '').map((d) => [d.key.ot, d.key.a, d.events])
    expect(activities).toEqual([
      ['x\u0000y', 'a', 1],
      ['x', 'y\u0000a', 1],
      ['order', 'p\u0000q', 1],
      ['order', 'r', 1],
      ['order', 'p', 1],
      ['order', 'q\u0000r', 1],
    ])
    const edges = changes.deltas.filter((d) => d.key.b !== '').map((d) => [d.key.a, d.key.b, d.total, d.objects])
    expect(edges).toEqual([
      ['p\u0000q', 'r', 1, 1],
      ['p', 'q\u0000r', 1, 1],
    ])
    expect(changes.memberships.filter((m) => m.b !== '').map((m) => [m.object, m.a, m.b, m.after])).toEqual([
      ['o3', 'p\u0000q', 'r', 1],
      ['o4', 'p', 'q\u0000r', 1],
    ])
  })

  it('counts an object in an activity or edge when its membership leaves 0, and no more after', () => {
    const traces = new Traces([[step('o1', 'A', 1000, 1), step('o1', 'B', 2000, 2)]])
    // o1 gets A→B again (B→A, then A→B; its end stays B); o2 is new with A (its start and end).
    const changes = traces.changes(traces.link([step('o1', 'A', 3000, 3), step('o1', 'B', 4000, 4), step('o2', 'A', 3000, 3)]))
    expect(deltasOf(changes)).toEqual({
      'order:A': { events: 1, objects: 1, total: 2, starts: 1, ends: 1 },
      'order:B': { events: 1, total: 1 },
      'order:A>B': { total: 1, couples: 1, add: [1000] },
      'order:B>A': { objects: 1, total: 1, couples: 1, add: [1000] },
    })
    // An activity's membership only says "at least one": o1's A and B rows are not written again.
    expect(changes.memberships.map((m) => [m.object, m.a, m.b, m.before, m.after])).toEqual([
      ['o1', 'B', 'A', 0, 1],
      ['o1', 'A', 'B', 1, 2],
      ['o2', 'A', '', 0, 1],
    ])
  })

  it('takes an object out of an edge when its last couple of it is removed, and moves start and end counts', () => {
    const traces = new Traces([[step('o1', 'P', 1000, 1, { te: 1500 }), step('o1', 'N', 3000, 2)]])
    const changes = traces.changes(traces.link([step('o1', 'E', 2000, 3, { te: 2600 }), step('o1', 'S', 500, 4)]))
    expect(deltasOf(changes)).toEqual({
      'order:E': { events: 1, objects: 1, total: 1, add: [600] },
      'order:S': { events: 1, objects: 1, total: 1, starts: 1 },
      'order:P': { starts: -1 },
      'order:P>E': { objects: 1, total: 1, couples: 1, add: [1000], waitAdd: [500] },
      'order:E>N': { objects: 1, total: 1, couples: 1, add: [1000], waitAdd: [400] },
      'order:S>P': { objects: 1, total: 1, couples: 1, add: [500] },
      'order:P>N': { objects: -1, total: -1, couples: -1, remove: [2000], waitRemove: [1500] },
    })
  })

  it('counts a run time once per event and object type, whatever its number of objects', () => {
    const changes = new Traces().changes(
      new Traces().link([step('o1', 'A', 1000, 1, { te: 4000 }), step('o2', 'A', 1000, 1, { te: 4000 }), step('i1', 'A', 1000, 1, { te: 4000, ot: 'item' })]),
    )
    expect(deltasOf(changes)).toEqual({
      'order:A': { events: 1, objects: 2, total: 2, starts: 2, ends: 2, add: [3000] },
      'item:A': { events: 1, objects: 1, total: 1, starts: 1, ends: 1, add: [3000] },
    })
  })

  it('keeps a shared event couple p→n while another object still has it, when an event is inserted between p and n for one object', () => {
    const shared = (o: string) => [step(o, 'P', 1000, 1), step(o, 'N', 3000, 2)]
    const traces = new Traces([shared('o1'), shared('o2')])
    const changes = traces.changes(traces.link([step('o1', 'E', 2000, 3)]))
    expect(deltasOf(changes)).toEqual({
      'order:E': { events: 1, objects: 1, total: 1 },
      'order:P>E': { objects: 1, total: 1, couples: 1, add: [1000] },
      'order:E>N': { objects: 1, total: 1, couples: 1, add: [1000] },
      // o2 still has the couple (P@1, N@2): one occurrence and one object fewer, the same distinct couples.
      'order:P>N': { objects: -1, total: -1, remove: [2000] },
    })
  })

  it('removes the shared event couple when the inserted event is linked to both objects', () => {
    const shared = (o: string) => [step(o, 'P', 1000, 1), step(o, 'N', 3000, 2)]
    const traces = new Traces([shared('o1'), shared('o2')])
    const changes = traces.changes(traces.link([step('o1', 'E', 2000, 3), step('o2', 'E', 2000, 3)]))
    expect(deltasOf(changes)).toEqual({
      'order:E': { events: 1, objects: 2, total: 2 },
      'order:P>E': { objects: 2, total: 2, couples: 1, add: [1000, 1000] },
      'order:E>N': { objects: 2, total: 2, couples: 1, add: [1000, 1000] },
      'order:P>N': { objects: -2, total: -2, couples: -1, remove: [2000, 2000] },
    })
  })

  it("counts distinct couples of a mixed event: a type alone in its event by its step's couples, a shared type from the event's steps", () => {
    // Event N@2 has one order (o1) and two items (i1, i2), all after P@1. E@3 goes between P and N for o1 and i1.
    const traces = new Traces([
      [step('o1', 'P', 1000, 1), step('o1', 'N', 3000, 2)],
      [step('i1', 'P', 1000, 1, { ot: 'item' }), step('i1', 'N', 3000, 2, { ot: 'item' })],
      [step('i2', 'P', 1000, 1, { ot: 'item' }), step('i2', 'N', 3000, 2, { ot: 'item' })],
      [step('o9', 'Q', 500, 9), step('o9', 'R', 800, 10)],
    ])
    const changes = traces.changes(traces.link([step('o1', 'E', 2000, 3), step('i1', 'E', 2000, 3, { ot: 'item' }), step('o9', 'E', 600, 11)]))
    const couples = Object.fromEntries(Object.entries(deltasOf(changes)).map(([k, d]) => [k, d.couples ?? 0]))
    expect(couples).toEqual({
      'order:E': 0,
      'item:E': 0,
      'order:P>E': 1,
      'order:E>N': 1,
      'order:P>N': -1,
      'item:P>E': 1,
      'item:E>N': 1,
      // i2 keeps (P@1, N@2): the event couple stays.
      'item:P>N': 0,
      'order:Q>E': 1,
      'order:E>R': 1,
      'order:Q>R': -1,
    })
  })

  it('gives aggregates that applyDelta turns into the definition of the traces', () => {
    const traces = new Traces([[step('o1', 'P', 1000, 1), step('o1', 'N', 3000, 2)]])
    const base = new Traces().changes(new Traces().link([step('o1', 'P', 1000, 1), step('o1', 'N', 3000, 2)]))
    const aggregates = new Map(base.deltas.map((d) => [dfKeyString(d.key), applyDelta(undefined, d)]))
    for (const d of traces.changes(traces.link([step('o1', 'E', 2000, 3)])).deltas) {
      aggregates.set(dfKeyString(d.key), applyDelta(aggregates.get(dfKeyString(d.key)), d))
    }
    const edge = (a: string, b: string) => aggregates.get(dfKeyString({ dataset: 'd', ot: 'order', a, b }))
    expect(edge('P', 'N')).toMatchObject({ total: 0, objects: 0, couples: 0, durations: { n: 0 } })
    expect(edge('P', 'E')).toMatchObject({ total: 1, objects: 1, couples: 1 })
    expect(summarize(edge('E', 'N')?.durations ?? { n: 0, sum: 0 })).toEqual({ count: 1, sum: 1000, min: 1000, max: 1000, median: 1000, exactMedian: true })
    expect(edge('P', '')).toMatchObject({ events: 1, objects: 1, total: 1, starts: 1, ends: 0 })
    expect(edge('N', '')).toMatchObject({ events: 1, objects: 1, total: 1, starts: 0, ends: 1 })
  })

  it('asks a store to refill the kept ends of an edge that removed couples emptied, and none of an activity', () => {
    const key = { dataset: 'd', ot: 'order', a: 'A', b: 'A' }
    const delta = (add: number[], remove: number[], waitAdd: number[], waitRemove: number[]): DfDelta => ({
      key,
      events: 0,
      objects: 0,
      total: add.length - remove.length,
      starts: 0,
      ends: 0,
      couples: 0,
      add,
      remove,
      waitAdd,
      waitRemove,
    })
    const elapsed = Array.from({ length: 100 }, (_, i) => 60_000 + i * 1000)
    const agg = applyDelta(undefined, delta(elapsed, [], elapsed.slice(0, 70), []))
    expect(edgeRefills(key, agg)).toEqual([])
    // Late steps split the 40 longest couples, and the 35 with the shortest waits: their kept largest and smallest are gone.
    applyDelta(agg, delta([], elapsed.slice(60), [], elapsed.slice(0, 35)))
    expect(edgeRefills(key, agg)).toEqual([
      { stats: 'durations', end: 'hi', count: EXTREMES },
      { stats: 'waiting', end: 'lo', count: EXTREMES },
    ])
    refillAggregate(agg, { stats: 'durations', end: 'hi', count: EXTREMES }, elapsed.slice(28, 60))
    refillAggregate(agg, { stats: 'waiting', end: 'lo', count: EXTREMES }, elapsed.slice(35, 67))
    expect(edgeRefills(key, agg)).toEqual([])
    expect(summarize(agg.durations)).toMatchObject({ count: 60, min: 60_000, max: 119_000 })
    expect(summarize(agg.waiting)).toMatchObject({ count: 35, min: 95_000, max: 129_000 })
    // An activity's run times are only added: never a refill, whatever its statistics.
    expect(edgeRefills({ ...key, b: '' }, agg)).toEqual([])
    expect(() => refillAggregate(agg, { stats: 'durations', end: 'lo', count: EXTREMES }, [1])).toThrow(RangeError)
  })
})
