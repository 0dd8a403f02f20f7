/**
 * The directly-follows read model's rules (docs/process-map.md#the-directly-follows-read-model),
 * decided once for every store. A *step* is one (object, event) pair of an E2O relation (qualifiers
 * merged). Each object's steps in (`timestamp`, position) order form its trace; consecutive steps
 * p → n are a directly-follows couple, with elapsed time `t(n) − t(p)` and, when p has an
 * `end_timestamp`, waiting time `max(0, t(n) − end(p))` (after pm4py's OC-DFG). Each stored step
 * keeps its predecessor, and per (dataset, object type, activity) and per (dataset, object type,
 * activity → activity) an aggregate is kept, so that the all-time map reads a number of rows in
 * proportion to the map, and a window reads the steps in it.
 *
 * A store applies a run of new steps in two pure steps around its reads:
 * 1. `linkSteps`: with each object's stored steps around the new ones (`DfRegion`), the new
 *    steps' predecessors, the stored steps whose predecessor changes (an event that arrived out
 *    of time order goes between its neighbours: p → n becomes p → e and e → n), the couples added
 *    and removed, and the moves of each object's first and last activity;
 * 2. `aggregateChanges`: with the stored membership counts of each object (steps per activity,
 *    couples per edge) and the stored steps of events whose incoming couples changed (only events
 *    with another object of a changed step's type: `kin`), the changes to every aggregate and
 *    membership count.
 * 3. after applyDelta, `edgeRefills`: the kept smallest or largest durations of an edge that its
 *    removed couples emptied, which the store reads back from its stored steps (the edge's couples
 *    as the run left them) and puts back with `refillAggregate`, so that min and max stay exact.
 * A store reads the regions by clusters (runs of an object's new steps with no stored step between
 * them; `linkByClusters`): one read of the stored neighbours per cluster, so the stored steps between
 * two far-apart new steps are never read.
 * Replays change nothing: a step already stored is dropped in step 1, and only new steps change
 * aggregates. The result is the same whatever order the steps arrive in. No I/O here.
 */
import { addDuration, type DurationStats, emptiedEnds, emptyStats, refillEnd, refillSize, removeDuration, type StatsEnd } from './duration-stats.js'
import { KEY_SEP } from './keys.js'
import type { DirectlyFollowsEvent } from './read-model-changes.js'

/** One (object, event) step. `O` is the store's object key (a row id, an object id). Times in ms since the epoch. */
export interface DfStep<O> {
  dataset: string
  object: O
  /** The object's type. */
  ot: string
  /** The event's activity (event type). */
  act: string
  t: number
  /** The event's log position: ties of `t` are ordered by it. */
  pos: number
  /** The event's end time (ms), or null. */
  te: number | null
  /**
   * The number of the event's objects of type `ot` (≥ 1): its steps of that type. Fixed when the
   * event is recorded (an event never changes). When it is 1, a change of the step's predecessor
   * changes the event's distinct couples of its type by the step alone, so aggregateChanges needs
   * no read of the event's other steps.
   */
  kin: number
}

/** (t, pos) order of steps. */
export function compareSteps(a: { t: number; pos: number }, b: { t: number; pos: number }): number {
  return a.t - b.t || a.pos - b.pos
}

/**
 * An object's stored steps around a run's new steps, ascending: `pred` the stored step just before
 * the earliest new one (null: none), `mid` every stored step from the earliest to the latest new one
 * (bounds included, so a replayed step is found), `succ` the stored step just after the latest one.
 */
export interface DfRegion<O> {
  pred: DfStep<O> | null
  mid: DfStep<O>[]
  succ: DfStep<O> | null
}

/** A step and its predecessor in its object's trace (null: the object's first step). */
export interface LinkedStep<O> {
  step: DfStep<O>
  prev: DfStep<O> | null
}

/** A directly-follows couple of one object: `p` then `n`. */
export interface DfCouple<O> {
  p: DfStep<O>
  n: DfStep<O>
}

/** A change of one object's first (or last) activity: `from` null when the object had no step. */
export interface EndMove {
  dataset: string
  ot: string
  from: string | null
  to: string
}

/** What `linkSteps` finds. */
export interface DfLinking<O> {
  /** The new steps (replays dropped), with their predecessors: rows to insert. */
  inserts: LinkedStep<O>[]
  /** Stored steps whose predecessor changed: rows to update. */
  relinks: LinkedStep<O>[]
  added: DfCouple<O>[]
  removed: DfCouple<O>[]
  starts: EndMove[]
  ends: EndMove[]
  /**
   * Stored steps (one per event) whose predecessor changed, of events with more than one object of
   * the step's type (`kin` > 1): aggregateChanges needs their event's stored steps to count its
   * distinct couples. A changed step whose event has no other object of its type is not listed:
   * its removed and added couples give the change.
   */
  storedTargets: DfStep<O>[]
  /** Objects with no stored step before this run: their membership counts are all 0 (no read needed). */
  newObjects: Set<O>
}

/** The earliest and latest of an object's candidate steps: the bounds of the region a store reads for it. */
export interface DfBounds<O> {
  object: O
  first: DfStep<O>
  last: DfStep<O>
}

/** Groups candidate steps by object, each ascending. */
export function stepsByObject<O>(steps: readonly DfStep<O>[]): Map<O, DfStep<O>[]> {
  const byObject = new Map<O, DfStep<O>[]>()
  for (const s of steps) {
    const list = byObject.get(s.object)
    if (list === undefined) byObject.set(s.object, [s])
    else list.push(s)
  }
  for (const list of byObject.values()) list.sort(compareSteps)
  return byObject
}

/**
 * Sets `kin` (DfStep) of one event's steps, `steps[first..]` (its distinct objects): the number
 * of its objects of each step's type. Steps are made with any `kin`; this sets each.
 */
export function setKin<O>(steps: readonly DfStep<O>[], first: number): void {
  if (steps.length - first === 1) {
    const only = steps[first]
    if (only !== undefined) only.kin = 1
    return
  }
  const byType = new Map<string, number>()
  for (let i = first; i < steps.length; i += 1) {
    const ot = (steps[i] as DfStep<O>).ot
    byType.set(ot, (byType.get(ot) ?? 0) + 1)
  }
  for (let i = first; i < steps.length; i += 1) {
    const s = steps[i] as DfStep<O>
    s.kin = byType.get(s.ot) ?? 1
  }
}

const coupleKey = (p: { pos: number }, n: { pos: number }) => `${String(p.pos)}>${String(n.pos)}`

/** A linking with nothing in it, to add to. */
export function emptyLinking<O>(): DfLinking<O> {
  return { inserts: [], relinks: [], added: [], removed: [], starts: [], ends: [], storedTargets: [], newObjects: new Set() }
}

/**
 * Adds to `out` the linking of one object's candidates when every one comes after the object's
 * last stored step `pred` (null: the object has no stored step): each is inserted after the one
 * before it, the couples between them are added, and the object's first (when new) and last
 * activity move. The common case of linkSteps, for a store that knows `pred` without reading the
 * object's region.
 * @param candidates the object's candidate steps, ascending, each after `pred`.
 */
export function linkAppends<O>(out: DfLinking<O>, object: O, candidates: readonly DfStep<O>[], pred: DfStep<O> | null): void {
  const first = candidates[0]
  const last = candidates[candidates.length - 1]
  if (first === undefined || last === undefined) return
  let prev = pred
  if (prev === null) {
    out.newObjects.add(object)
    out.starts.push({ dataset: first.dataset, ot: first.ot, from: null, to: first.act })
  }
  for (const step of candidates) {
    out.inserts.push({ step, prev })
    if (prev !== null) out.added.push({ p: prev, n: step })
    prev = step
  }
  out.ends.push({ dataset: last.dataset, ot: last.ot, from: pred?.act ?? null, to: last.act })
}

/**
 * Step 1: links one run's new steps into their objects' traces.
 * @param byObject the run's candidate steps per object, ascending (stepsByObject); a step of an
 *   object may appear once per event.
 * @param regionOf the stored region of an object around its candidates' bounds (DfRegion).
 */
export function linkSteps<O>(byObject: ReadonlyMap<O, readonly DfStep<O>[]>, regionOf: (object: O, bounds: DfBounds<O>) => DfRegion<O>): DfLinking<O> {
  const out = emptyLinking<O>()
  const targets = new Map<number, DfStep<O>>()
  for (const [object, candidates] of byObject) {
    const first = candidates[0]
    const last = candidates[candidates.length - 1]
    if (first === undefined || last === undefined) continue
    const region = regionOf(object, { object, first, last })
    if (region.mid.length === 0 && region.succ === null) {
      // The common case: every candidate comes after the object's last stored step (or it has none).
      linkAppends(out, object, candidates, region.pred)
      continue
    }
    const stored = [...(region.pred === null ? [] : [region.pred]), ...region.mid, ...(region.succ === null ? [] : [region.succ])]
    const storedPositions = new Set(stored.map((s) => s.pos))
    const fresh = candidates.filter((s) => !storedPositions.has(s.pos))
    if (fresh.length === 0) continue
    // The merged segment: stored and fresh steps in trace order.
    const merged: { step: DfStep<O>; fresh: boolean }[] = []
    let i = 0
    let j = 0
    while (i < stored.length || j < fresh.length) {
      const a = stored[i]
      const b = fresh[j]
      if (b === undefined || (a !== undefined && compareSteps(a, b) < 0)) {
        merged.push({ step: a as DfStep<O>, fresh: false })
        i += 1
      } else {
        merged.push({ step: b, fresh: true })
        j += 1
      }
    }
    const oldCouples = new Set<string>()
    for (let k = 1; k < stored.length; k += 1) oldCouples.add(coupleKey(stored[k - 1] as DfStep<O>, stored[k] as DfStep<O>))
    const newCouples = new Set<string>()
    for (let k = 0; k < merged.length; k += 1) {
      const cur = merged[k] as { step: DfStep<O>; fresh: boolean }
      const before = merged[k - 1]?.step ?? null
      if (cur.fresh) out.inserts.push({ step: cur.step, prev: before })
      if (before === null) continue
      const key = coupleKey(before, cur.step)
      newCouples.add(key)
      if (!oldCouples.has(key)) {
        out.added.push({ p: before, n: cur.step })
        if (!cur.fresh) {
          out.relinks.push({ step: cur.step, prev: before })
          if (cur.step.kin > 1) targets.set(cur.step.pos, cur.step)
        }
      }
    }
    for (let k = 1; k < stored.length; k += 1) {
      const p = stored[k - 1] as DfStep<O>
      const n = stored[k] as DfStep<O>
      if (!newCouples.has(coupleKey(p, n))) {
        out.removed.push({ p, n })
        if (n.kin > 1) targets.set(n.pos, n)
      }
    }
    const head = merged[0]?.step
    const tail = merged[merged.length - 1]?.step
    if (region.pred === null && head !== undefined && merged[0]?.fresh === true) {
      out.starts.push({ dataset: head.dataset, ot: head.ot, from: stored[0]?.act ?? null, to: head.act })
    }
    if (region.succ === null && tail !== undefined && merged[merged.length - 1]?.fresh === true) {
      out.ends.push({ dataset: tail.dataset, ot: tail.ot, from: stored[stored.length - 1]?.act ?? null, to: tail.act })
    }
  }
  out.storedTargets = [...targets.values()]
  return out
}

/**
 * Joins the linkings of disjoint parts of one run (other objects, or runs of an object's new steps
 * with stored steps between them): lists concatenated, and each stored target event once.
 */
export function joinLinkings<O>(parts: readonly DfLinking<O>[]): DfLinking<O> {
  const out = emptyLinking<O>()
  const targets = new Map<number, DfStep<O>>()
  for (const p of parts) {
    // Element by element: a part may hold more items than a call's arguments allow.
    for (const x of p.inserts) out.inserts.push(x)
    for (const x of p.relinks) out.relinks.push(x)
    for (const x of p.added) out.added.push(x)
    for (const x of p.removed) out.removed.push(x)
    for (const x of p.starts) out.starts.push(x)
    for (const x of p.ends) out.ends.push(x)
    for (const t of p.storedTargets) targets.set(t.pos, t)
    for (const o of p.newObjects) out.newObjects.add(o)
  }
  out.storedTargets = [...targets.values()]
  return out
}

/**
 * The stored neighbours of a candidate step c in its object's trace, in (t, pos) order: what a store
 * reads at c, in one read (docs/process-map.md#the-directly-follows-read-model). `before` the stored
 * step just before c; `at` the first stored step at or after c (c itself when c is stored: a replay);
 * `next` the stored step after `at`. null: none.
 */
export interface DfNeighbours<O> {
  before: DfStep<O> | null
  at: DfStep<O> | null
  next: DfStep<O> | null
}

/**
 * A cluster: consecutive candidate steps of one object with no stored step between them (ascending),
 * and the stored region around them (DfRegion: `mid` holds the first candidate when it is a replay,
 * nothing else).
 */
export interface DfCluster<O> {
  steps: DfStep<O>[]
  region: DfRegion<O>
}

/**
 * The cluster of an object's candidates that starts at c = `candidates[from]`, from c's stored
 * neighbours: its region is pred `before`, mid [c] when c is stored (a replay) and [] otherwise, succ
 * the first stored step after c. The next candidates join while they come before succ (all of them
 * when succ is null); a candidate equal to succ (a replay) starts the next cluster, whose read finds
 * it. So one read per cluster, and the object's stored steps between two clusters are never read.
 * @param candidates one object's candidate steps, ascending (stepsByObject), each (t, pos) once.
 * @param from the index of the cluster's first candidate.
 * @param neighbours the stored neighbours of c (DfNeighbours), as the store read them.
 * @returns the cluster, and `next`: the index of the next cluster's first candidate (`candidates.length`: none).
 * @throws RangeError when `from` is not an index of `candidates`.
 */
export function clusterAt<O>(candidates: readonly DfStep<O>[], from: number, neighbours: DfNeighbours<O>): { cluster: DfCluster<O>; next: number } {
  const c = candidates[from]
  if (c === undefined) throw new RangeError(`directly-follows: no candidate at index ${String(from)} of ${String(candidates.length)}`)
  const { before, at, next } = neighbours
  const replay = at !== null && compareSteps(at, c) === 0
  const succ = replay ? next : at
  const steps = [c]
  let i = from + 1
  for (; i < candidates.length; i += 1) {
    const s = candidates[i] as DfStep<O>
    if (succ !== null && compareSteps(s, succ) >= 0) break
    steps.push(s)
  }
  return { cluster: { steps, region: { pred: before, mid: replay ? [at] : [], succ } }, next: i }
}

/**
 * Links rounds of clusters and joins their linkings (joinLinkings): round k holds each object's k-th
 * cluster (clusterAt), by object, so each round is one linkSteps call. Clusters of one object are
 * separated by stored steps, so their linkings are disjoint.
 * @param rounds the rounds in order, each a map object → its cluster of that round.
 */
export function linkClusterRounds<O>(rounds: readonly ReadonlyMap<O, DfCluster<O>>[]): DfLinking<O> {
  const parts = rounds.map((round) => {
    const steps = new Map<O, readonly DfStep<O>[]>()
    for (const [object, cluster] of round) steps.set(object, cluster.steps)
    return linkSteps(steps, (object) => {
      const cluster = round.get(object)
      if (cluster === undefined) throw new Error(`directly-follows: no cluster of object ${String(object)}`)
      return cluster.region
    })
  })
  return parts.length === 1 && parts[0] !== undefined ? parts[0] : joinLinkings(parts)
}

/**
 * Step 1 by clusters, for a store that reads between the rounds (sync or async: the store drives
 * this generator and does the reads). Yields each round's reads, the first candidate of each
 * object's next cluster (round 1: every object's first candidate; the candidate carries its object),
 * and takes back their stored neighbours by object (DfNeighbours); returns the run's linking
 * (linkClusterRounds). A run of appends is one round of one read per object; a late step adds one
 * read, and an object's history between its new steps is never read
 * (docs/process-map.md#the-directly-follows-read-model).
 * @param byObject the run's candidate steps per object, ascending (stepsByObject).
 * @throws Error when an answer lacks the neighbours of an object it was asked for.
 */
export function* linkByClusters<O>(byObject: ReadonlyMap<O, readonly DfStep<O>[]>): Generator<DfStep<O>[], DfLinking<O>, ReadonlyMap<O, DfNeighbours<O>>> {
  const rounds: Map<O, DfCluster<O>>[] = []
  // Each object still to read, with the index of its next cluster's first candidate.
  let pending: { object: O; candidates: readonly DfStep<O>[]; from: number }[] = []
  for (const [object, candidates] of byObject) if (candidates.length > 0) pending.push({ object, candidates, from: 0 })
  while (pending.length > 0) {
    const answers = yield pending.map((p) => p.candidates[p.from] as DfStep<O>)
    const round = new Map<O, DfCluster<O>>()
    const later: typeof pending = []
    for (const p of pending) {
      const neighbours = answers.get(p.object)
      if (neighbours === undefined) throw new Error(`directly-follows: no neighbours read for object ${String(p.object)}`)
      const { cluster, next } = clusterAt(p.candidates, p.from, neighbours)
      round.set(p.object, cluster)
      if (next < p.candidates.length) later.push({ ...p, from: next })
    }
    rounds.push(round)
    pending = later
  }
  return linkClusterRounds(rounds)
}

/** A stored step of an event, as aggregateChanges reads it: its object and predecessor. */
export interface EventStepRow<O> {
  object: O
  ot: string
  prevPos: number | null
  prevAct: string | null
}

/** The aggregate key of an activity (`b` empty) or an edge `a → b` of an object type in a dataset. */
export interface DfKey {
  dataset: string
  ot: string
  a: string
  /** '' for an activity's aggregate. */
  b: string
}

/** Separates the parts of a key (src/core/keys.ts). */
const SEP = KEY_SEP

/** The map key of a DfKey's parts. */
const keyString = (dataset: string, ot: string, a: string, b: string): string => dataset + SEP + ot + SEP + a + SEP + b

/** The map key of a DfKey. */
export const dfKeyString = (k: DfKey): string => keyString(k.dataset, k.ot, k.a, k.b)

/** The counts of an aggregate (DfAggregate) or of its change (DfDelta); their meaning is DfDelta's. */
export interface DfCounts {
  events: number
  objects: number
  total: number
  starts: number
  ends: number
  couples: number
}

/**
 * The change to one aggregate. Activities: `events` (distinct events), `objects` (distinct
 * objects), `total` (steps), `starts`/`ends` (objects whose first/last step it is), `durations`
 * the run times added. Edges: `total` (couples), `objects` (distinct objects with a couple),
 * `couples` (distinct event couples), `durations` elapsed and `waiting` times added and removed.
 */
export interface DfDelta extends DfCounts {
  key: DfKey
  add: number[]
  remove: number[]
  waitAdd: number[]
  waitRemove: number[]
}

/**
 * The change to one object's membership count: its couples `a → b`, or whether it has a step of
 * activity `a` (`b` ''; steps are never removed, so that row only says "at least one": 1, written once).
 */
export interface MembershipChange<O> {
  object: O
  a: string
  b: string
  /** The stored count (0: no row). */
  before: number
  after: number
}

/** What `aggregateChanges` gives a store to write. */
export interface DfChanges<O> {
  deltas: DfDelta[]
  memberships: MembershipChange<O>[]
}

/**
 * Step 2: the changes to aggregates and membership counts that a linking implies.
 * @param membershipOf the stored count of an object's steps of activity `a` (`b` '') or couples `a → b` (0: none).
 * @param eventSteps the stored steps of the event of a stored target (DfLinking.storedTargets).
 */
export function aggregateChanges<O>(
  linking: DfLinking<O>,
  membershipOf: (object: O, a: string, b: string) => number,
  eventSteps: (target: DfStep<O>) => readonly EventStepRow<O>[],
): DfChanges<O> {
  const deltas = new Map<string, DfDelta>()
  const deltaOf = (dataset: string, ot: string, a: string, b: string): DfDelta => {
    const s = keyString(dataset, ot, a, b)
    let d = deltas.get(s)
    if (d === undefined) {
      d = { key: { dataset, ot, a, b }, events: 0, objects: 0, total: 0, starts: 0, ends: 0, couples: 0, add: [], remove: [], waitAdd: [], waitRemove: [] }
      deltas.set(s, d)
    }
    return d
  }
  // Membership counts: an object enters an aggregate's `objects` when its count leaves 0, and leaves it at 0.
  const counts = new Map<O, Map<string, { a: string; b: string; delta: number }>>()
  const count = (s: DfStep<O>, a: string, b: string, by: number) => {
    let m = counts.get(s.object)
    if (m === undefined) {
      m = new Map()
      counts.set(s.object, m)
    }
    const k = a + SEP + b
    const c = m.get(k)
    if (c === undefined) m.set(k, { a, b, delta: by })
    else c.delta += by
  }
  // An object's dataset and type: one of its steps.
  const datasetAndType = new Map<O, { dataset: string; ot: string }>()

  // Steps: per activity; per new event and object type: events and run time, once.
  const eventTypes = new Set<string>()
  for (const { step } of linking.inserts) {
    datasetAndType.set(step.object, step)
    const d = deltaOf(step.dataset, step.ot, step.act, '')
    d.total += 1
    count(step, step.act, '', 1)
    const eventType = `${String(step.pos)}${SEP}${step.ot}`
    if (eventTypes.has(eventType)) continue
    eventTypes.add(eventType)
    d.events += 1
    if (step.te !== null) d.add.push(step.te - step.t)
  }
  for (const m of linking.starts) {
    if (m.from !== null) deltaOf(m.dataset, m.ot, m.from, '').starts -= 1
    deltaOf(m.dataset, m.ot, m.to, '').starts += 1
  }
  for (const m of linking.ends) {
    if (m.from !== null) deltaOf(m.dataset, m.ot, m.from, '').ends -= 1
    deltaOf(m.dataset, m.ot, m.to, '').ends += 1
  }
  // Couples: occurrences, durations and per-object counts.
  const couple = ({ p, n }: DfCouple<O>, by: 1 | -1) => {
    datasetAndType.set(p.object, p)
    const d = deltaOf(p.dataset, p.ot, p.act, n.act)
    d.total += by
    const elapsed = n.t - p.t
    ;(by > 0 ? d.add : d.remove).push(elapsed)
    if (p.te !== null) (by > 0 ? d.waitAdd : d.waitRemove).push(Math.max(0, n.t - p.te))
    count(p, p.act, n.act, by)
  }
  for (const c of linking.added) couple(c, 1)
  for (const c of linking.removed) couple(c, -1)

  // Distinct event couples per edge: the distinct predecessors of each changed event, per object type, before and after.
  const relinked = new Map<string, LinkedStep<O>>()
  if (linking.storedTargets.length > 0) for (const r of linking.relinks) relinked.set(`${String(r.step.pos)}${SEP}${String(r.step.object)}`, r)
  const distinct = (
    rows: Iterable<{ ot: string; prevPos: number | null; prevAct: string | null }>,
    dataset: string,
    act: string,
    into: Map<string, number>,
  ) => {
    const seen = new Set<string>()
    for (const r of rows) {
      if (r.prevPos === null || r.prevAct === null) continue
      const k = r.ot + SEP + String(r.prevPos)
      if (seen.has(k)) continue
      seen.add(k)
      const edge = dfKeyString({ dataset, ot: r.ot, a: r.prevAct, b: act })
      into.set(edge, (into.get(edge) ?? 0) + 1)
    }
  }
  const edgeKeys = new Map<string, DfKey>()
  const coupleDelta = (
    before: Map<string, number>,
    after: Map<string, number>,
    dataset: string,
    act: string,
    rows: { ot: string; prevAct: string | null }[],
  ) => {
    for (const r of rows)
      if (r.prevAct !== null) edgeKeys.set(dfKeyString({ dataset, ot: r.ot, a: r.prevAct, b: act }), { dataset, ot: r.ot, a: r.prevAct, b: act })
    for (const k of new Set([...before.keys(), ...after.keys()])) {
      const change = (after.get(k) ?? 0) - (before.get(k) ?? 0)
      const key = edgeKeys.get(k)
      if (change !== 0 && key !== undefined) deltaOf(key.dataset, key.ot, key.a, key.b).couples += change
    }
  }
  // New events: every incoming couple is new (their steps are all in this run), so each distinct (type, predecessor) adds one.
  const intoNew = new Map<number, LinkedStep<O>[]>()
  for (const linked of linking.inserts) {
    const rows = intoNew.get(linked.step.pos)
    if (rows === undefined) intoNew.set(linked.step.pos, [linked])
    else rows.push(linked)
  }
  for (const linked of intoNew.values()) {
    const seen = linked.length > 1 ? new Set<string>() : null
    for (const { step, prev } of linked) {
      if (prev === null) continue
      if (seen !== null) {
        const k = step.ot + SEP + String(prev.pos)
        if (seen.has(k)) continue
        seen.add(k)
      }
      deltaOf(step.dataset, step.ot, prev.act, step.act).couples += 1
    }
  }
  // Stored events whose predecessors changed: those read (a type with several objects) count
  // distinct couples from their steps; in the others each changed step is its type's only one, so
  // its removed and added couples are its event's.
  const read = new Set<number>()
  for (const n of linking.storedTargets) read.add(n.pos)
  for (const { p, n } of linking.removed) if (!read.has(n.pos)) deltaOf(n.dataset, n.ot, p.act, n.act).couples -= 1
  for (const { step, prev } of linking.relinks) if (prev !== null && !read.has(step.pos)) deltaOf(step.dataset, step.ot, prev.act, step.act).couples += 1
  for (const n of linking.storedTargets) {
    const rows = eventSteps(n)
    const before = new Map<string, number>()
    distinct(rows, n.dataset, n.act, before)
    const now = rows.map((r) => {
      const moved = relinked.get(`${String(n.pos)}${SEP}${String(r.object)}`)
      return moved === undefined ? r : { ...r, prevPos: moved.prev?.pos ?? null, prevAct: moved.prev?.act ?? null }
    })
    const after = new Map<string, number>()
    distinct(now, n.dataset, n.act, after)
    coupleDelta(before, after, n.dataset, n.act, [...rows, ...now])
  }

  // Membership transitions give `objects`.
  const memberships: MembershipChange<O>[] = []
  for (const [object, m] of counts) {
    const where = datasetAndType.get(object)
    if (where === undefined) continue
    const isNew = linking.newObjects.has(object)
    for (const { a, b, delta } of m.values()) {
      if (delta === 0) continue
      const before = isNew ? 0 : membershipOf(object, a, b)
      // Steps are never removed: an activity's membership only needs to say "at least one" (kept at 1, written once).
      if (b === '' && before > 0) continue
      const after = b === '' ? 1 : before + delta
      if (after < 0) throw new Error(`directly-follows: membership of ${String(object)} in ${a} → ${b} would be ${String(after)}`)
      memberships.push({ object, a, b, before, after })
      if (before === 0 && after > 0) deltaOf(where.dataset, where.ot, a, b).objects += 1
      if (before > 0 && after === 0) deltaOf(where.dataset, where.ot, a, b).objects -= 1
    }
  }
  return { deltas: [...deltas.values()], memberships }
}

/** One aggregate as stored: the counts of DfDelta, with `durations` (activities: run times; edges: elapsed) and edges' `waiting`. */
export interface DfAggregate extends DfCounts {
  durations: DurationStats
  waiting: DurationStats
}

/** An aggregate that holds nothing. */
export function emptyAggregate(): DfAggregate {
  return { events: 0, objects: 0, total: 0, starts: 0, ends: 0, couples: 0, durations: emptyStats(), waiting: emptyStats() }
}

/**
 * Applies `delta` to `stored` (undefined: no row), in place when given; returns the aggregate.
 * @throws from removeDuration when a duration removed was never added (a broken read model).
 */
export function applyDelta(stored: DfAggregate | undefined, delta: DfDelta): DfAggregate {
  const agg = stored ?? emptyAggregate()
  agg.events += delta.events
  agg.objects += delta.objects
  agg.total += delta.total
  agg.starts += delta.starts
  agg.ends += delta.ends
  agg.couples += delta.couples
  for (const v of delta.add) addDuration(agg.durations, v)
  for (const v of delta.remove) removeDuration(agg.durations, v)
  for (const v of delta.waitAdd) addDuration(agg.waiting, v)
  for (const v of delta.waitRemove) removeDuration(agg.waiting, v)
  return agg
}

/** Whether an aggregate holds nothing any more (a store deletes its row). */
export function isEmptyAggregate(a: DfAggregate): boolean {
  return a.total === 0 && a.events === 0 && a.objects === 0 && a.starts === 0 && a.ends === 0 && a.couples === 0 && a.durations.n === 0 && a.waiting.n === 0
}

/**
 * A kept end of an edge aggregate's statistics that removed couples emptied (emptiedEnds), for the
 * store to read back from its stored steps: the `count` smallest (`end` 'lo') or largest ('hi') of
 * the edge's values as they are after the run: `durations` the elapsed times t(n) − t(p) of its
 * couples, `waiting` the waiting times max(0, t(n) − end(p)) of those whose p has an end time.
 */
export interface DfRefill {
  stats: 'durations' | 'waiting'
  end: StatsEnd
  count: number
}

/**
 * The refills (DfRefill) that edge aggregate `agg` needs after applyDelta, by docs/process-map.md#medians-of-the-all-time-map:
 * none unless a sketched statistic lost every kept value of one end. An activity's aggregate (`key.b`
 * '') never needs one: run times are only added.
 */
export function edgeRefills(key: DfKey, agg: DfAggregate): DfRefill[] {
  if (key.b === '') return []
  const out: DfRefill[] = []
  for (const stats of ['durations', 'waiting'] as const) {
    for (const end of emptiedEnds(agg[stats])) out.push({ stats, end, count: refillSize(agg[stats]) })
  }
  return out
}

/**
 * Puts back in `agg` (in place) the end that `refill` names, from `values`: the store's read of it
 * (ms, any order, exactly `refill.count` of them).
 * @throws RangeError from refillEnd when the read does not hold `refill.count` whole numbers ≥ 0 (a broken read model).
 */
export function refillAggregate(agg: DfAggregate, refill: DfRefill, values: readonly number[]): void {
  refillEnd(agg[refill.stats], refill.end, values)
}

/** A run's steps (Slices.directly_follows): one per (event, distinct object), in log order. */
export function dfStepsOf(events: readonly DirectlyFollowsEvent[]): DfStep<string>[] {
  const steps: DfStep<string>[] = []
  for (const e of events) {
    const first = steps.length
    for (const o of e.objects) {
      steps.push({ dataset: e.datasetId, object: o.objectId, ot: o.type, act: e.activity, t: e.time, pos: e.position, te: e.endTime, kin: 1 })
    }
    setKin(steps, first)
  }
  return steps
}
