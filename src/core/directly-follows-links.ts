/**
 * Step 1 of the directly-follows read model's rules (docs/process-map.md#the-directly-follows-read-model;
 * the steps are told in src/core/directly-follows.ts, which re-exports this module): the steps of a
 * run, and their linking into each object's trace, stored steps read around the new ones, directly
 * (`linkSteps`, `linkAppends`) or by clusters (`linkByClusters`). No I/O here.
 */
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

/** Whether `steps` are in (t, pos) order. */
export function isAscending(steps: readonly { t: number; pos: number }[]): boolean {
  for (let i = 1; i < steps.length; i++) if (compareSteps(steps[i - 1] as { t: number; pos: number }, steps[i] as { t: number; pos: number }) > 0) return false
  return true
}

/** Groups candidate steps by object, each ascending. */
export function stepsByObject<O>(steps: readonly DfStep<O>[]): Map<O, DfStep<O>[]> {
  const byObject = new Map<O, DfStep<O>[]>()
  for (const s of steps) {
    const list = byObject.get(s.object)
    if (list === undefined) byObject.set(s.object, [s])
    else list.push(s)
  }
  // Steps come mostly in log order, often one per object: a list already ascending is left as it is.
  for (const list of byObject.values()) if (!isAscending(list)) list.sort(compareSteps)
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
 * Adds to `out` one object's candidates as a chain after `pred` (null: none before them): each is
 * inserted after the one before it (the first after `pred`), with the couples between them.
 */
function linkChain<O>(out: DfLinking<O>, candidates: readonly DfStep<O>[], pred: DfStep<O> | null): void {
  let prev = pred
  for (const step of candidates) {
    out.inserts.push({ step, prev })
    if (prev !== null) out.added.push({ p: prev, n: step })
    prev = step
  }
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
  if (pred === null) {
    out.newObjects.add(object)
    out.starts.push({ dataset: first.dataset, ot: first.ot, from: null, to: first.act })
  }
  linkChain(out, candidates, pred)
  out.ends.push({ dataset: last.dataset, ot: last.ot, from: pred?.act ?? null, to: last.act })
}

/**
 * Adds to `out` the linking of one object's candidates that all lie between two consecutive stored
 * steps, `pred` (null: the object's first stored step is `succ`) and `succ`: what linkSteps' merge
 * finds for such a region, in the same order, without its sets of couples. Each candidate is inserted
 * after the one before it (the first after `pred`), the couple pred → succ is removed, and succ is
 * relinked after the last candidate; succ's event is a stored target when it has other objects of
 * succ's type (`kin` > 1); with no `pred`, the object's first activity moves from succ's to the
 * first candidate's (the late arrivals of out-of-order senders: most clusters of linkByClusters).
 * @param candidates the object's candidate steps, ascending, none stored, each after `pred` and before `succ`.
 */
function linkBetween<O>(out: DfLinking<O>, targets: Map<number, DfStep<O>>, candidates: readonly DfStep<O>[], pred: DfStep<O> | null, succ: DfStep<O>): void {
  const first = candidates[0]
  const last = candidates[candidates.length - 1]
  if (first === undefined || last === undefined) return
  linkChain(out, candidates, pred)
  out.added.push({ p: last, n: succ })
  out.relinks.push({ step: succ, prev: last })
  if (succ.kin > 1) targets.set(succ.pos, succ)
  if (pred !== null) out.removed.push({ p: pred, n: succ })
  else out.starts.push({ dataset: first.dataset, ot: first.ot, from: succ.act, to: first.act })
}

/**
 * Step 1: links one run's new steps into their objects' traces.
 * @param byObject the run's candidate steps per object, ascending (stepsByObject); a step of an
 *   object may appear once per event.
 * @param regionOf the stored region of an object around its candidates' bounds (DfRegion).
 * @param into a linking of other objects (or of other runs of these objects' steps, with stored
 *   steps between them) that this one is added to; its stored targets stay, each event once.
 * @returns `into`, with this linking added.
 */
export function linkSteps<O>(
  byObject: ReadonlyMap<O, readonly DfStep<O>[]>,
  regionOf: (object: O, bounds: DfBounds<O>) => DfRegion<O>,
  into: DfLinking<O> = emptyLinking<O>(),
): DfLinking<O> {
  const out = into
  const targets = new Map<number, DfStep<O>>()
  for (const t of out.storedTargets) targets.set(t.pos, t)
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
    if (region.mid.length === 0 && region.succ !== null) {
      // A late run with no stored step among its candidates: they go between pred and succ.
      linkBetween(out, targets, candidates, region.pred, region.succ)
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
 * Links rounds of clusters into one linking: round k holds each object's k-th cluster (clusterAt),
 * by object, so each round is one linkSteps call, added to the same linking. Clusters of one object
 * are separated by stored steps, so their linkings are disjoint.
 * @param rounds the rounds in order, each a map object → its cluster of that round.
 * @param into the linking the rounds are added to (linkSteps' `into`): by default a new one.
 */
export function linkClusterRounds<O>(rounds: readonly ReadonlyMap<O, DfCluster<O>>[], into: DfLinking<O> = emptyLinking<O>()): DfLinking<O> {
  for (const round of rounds) {
    const steps = new Map<O, readonly DfStep<O>[]>()
    for (const [object, cluster] of round) steps.set(object, cluster.steps)
    linkSteps(
      steps,
      (object) => {
        const cluster = round.get(object)
        if (cluster === undefined) throw new Error(`directly-follows: no cluster of object ${String(object)}`)
        return cluster.region
      },
      into,
    )
  }
  return into
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
 * @param into the linking the run's is added to (linkClusterRounds): the part of the run linked
 *   without reads (linkAfterTails), so that nothing is copied; by default a new one.
 * @throws Error when an answer lacks the neighbours of an object it was asked for.
 */
export function* linkByClusters<O>(
  byObject: ReadonlyMap<O, readonly DfStep<O>[]>,
  into: DfLinking<O> = emptyLinking<O>(),
): Generator<DfStep<O>[], DfLinking<O>, ReadonlyMap<O, DfNeighbours<O>>> {
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
      if (next < p.candidates.length) {
        p.from = next
        later.push(p)
      }
    }
    rounds.push(round)
    pending = later
  }
  return linkClusterRounds(rounds, into)
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
