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
 * A store applies a run of new steps in two pure steps around its reads (step 1 in
 * src/core/directly-follows-links.ts, re-exported here; steps 2 and 3 here):
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
import type { DfCouple, DfLinking, DfStep, EndMove, LinkedStep } from './directly-follows-links.js'
import { innerMap, joinKey } from './keys.js'

export * from './directly-follows-links.js'

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

/** The map key of a DfKey (joinKey: names may hold NUL, and two different keys never share a string). */
export const dfKeyString = (k: DfKey): string => joinKey(k.dataset, k.ot, k.a, k.b)

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

/** One object's change to one membership count (MembershipChange): `a → b` (`b` '': activity `a`). */
interface CountChange {
  a: string
  b: string
  delta: number
}

/**
 * The changes to aggregates (DfDelta), by key (dataset, ot, a, b) in nested maps (no key string is
 * made per step: a run tallies several per step), and in `list` in the order first touched.
 */
class DeltaTable {
  readonly list: DfDelta[] = []
  private readonly byDataset = new Map<string, Map<string, Map<string, Map<string, DfDelta>>>>()

  /** The change to the aggregate of (dataset, ot, a, b), added with nothing in it when missing. */
  of(dataset: string, ot: string, a: string, b: string): DfDelta {
    const byB = innerMap(innerMap(innerMap(this.byDataset, dataset), ot), a)
    let d = byB.get(b)
    if (d === undefined) {
      d = { key: { dataset, ot, a, b }, events: 0, objects: 0, total: 0, starts: 0, ends: 0, couples: 0, add: [], remove: [], waitAdd: [], waitRemove: [] }
      byB.set(b, d)
      this.list.push(d)
    }
    return d
  }
}

/** The changes an object's list holds before it is indexed by (a, b) (ObjectCounts): most objects change a few counts a run. */
const SCANNED_COUNTS = 8

/** One object's changes to its membership counts, in the order first touched; indexed by (a, b) once there are more than SCANNED_COUNTS. */
interface ObjectCounts {
  list: CountChange[]
  byA: Map<string, Map<string, CountChange>> | null
}

/** The change of `m` to the count of `a → b`, or undefined. */
function countChangeOf(m: ObjectCounts, a: string, b: string): CountChange | undefined {
  if (m.byA !== null) return m.byA.get(a)?.get(b)
  for (const c of m.list) if (c.a === a && c.b === b) return c
  return undefined
}

/** Adds `change` (of a new (a, b)) to `m`, indexing the list once it passes SCANNED_COUNTS. */
function addCountChange(m: ObjectCounts, change: CountChange): void {
  m.list.push(change)
  if (m.byA !== null) innerMap(m.byA, change.a).set(change.b, change)
  else if (m.list.length > SCANNED_COUNTS) {
    const byA = new Map<string, Map<string, CountChange>>()
    for (const c of m.list) innerMap(byA, c.a).set(c.b, c)
    m.byA = byA
  }
}

/**
 * What aggregateChanges gathers as it goes: the changes to aggregates (DeltaTable); the change to
 * each object's membership counts; and each object's dataset and type (from one of its steps).
 */
interface Tally<O> {
  deltas: DeltaTable
  counts: Map<O, ObjectCounts>
  where: Map<O, { dataset: string; ot: string }>
}

/** A tally with nothing in it. */
function emptyTally<O>(): Tally<O> {
  return { deltas: new DeltaTable(), counts: new Map(), where: new Map() }
}

/** Adds `by` to the change of the membership count of `s`'s object in `a → b` (`b` '': activity `a`). */
function countMembership<O>(tally: Tally<O>, s: DfStep<O>, a: string, b: string, by: number): void {
  let m = tally.counts.get(s.object)
  if (m === undefined) {
    m = { list: [], byA: null }
    tally.counts.set(s.object, m)
  }
  const c = countChangeOf(m, a, b)
  if (c === undefined) addCountChange(m, { a, b, delta: by })
  else c.delta += by
}

/**
 * Tallies the new steps (DfLinking.inserts) by activity (docs/process-map.md#the-directly-follows-read-model):
 * `total` one a step, with its object's membership; `events` and the run time (ms, end − time,
 * when the event has an end time) once per event and object type.
 */
function tallySteps<O>(tally: Tally<O>, inserts: readonly LinkedStep<O>[]): void {
  // The object types seen in each event (by position): a few per event.
  const eventTypes = new Map<number, string[]>()
  for (const { step } of inserts) {
    tally.where.set(step.object, step)
    const d = tally.deltas.of(step.dataset, step.ot, step.act, '')
    d.total += 1
    countMembership(tally, step, step.act, '', 1)
    const types = eventTypes.get(step.pos)
    if (types === undefined) eventTypes.set(step.pos, [step.ot])
    else if (types.includes(step.ot)) continue
    else types.push(step.ot)
    d.events += 1
    if (step.te !== null) d.add.push(step.te - step.t)
  }
}

/** Tallies the moves of objects' first (`starts`) and last (`ends`) activities: −1 to the activity left, +1 to the one reached. */
function tallyEndMoves(deltas: DeltaTable, starts: readonly EndMove[], ends: readonly EndMove[]): void {
  for (const m of starts) {
    if (m.from !== null) deltas.of(m.dataset, m.ot, m.from, '').starts -= 1
    deltas.of(m.dataset, m.ot, m.to, '').starts += 1
  }
  for (const m of ends) {
    if (m.from !== null) deltas.of(m.dataset, m.ot, m.from, '').ends -= 1
    deltas.of(m.dataset, m.ot, m.to, '').ends += 1
  }
}

/**
 * Tallies a couple p → n added (`by` 1) or removed (−1) in its edge's aggregate: `total`, the elapsed
 * time t(n) − t(p) and, when p has an end time, the waiting time max(0, t(n) − end(p)) (ms), and
 * the membership of p's object in the edge.
 */
function tallyCouple<O>(tally: Tally<O>, { p, n }: DfCouple<O>, by: 1 | -1): void {
  tally.where.set(p.object, p)
  const d = tally.deltas.of(p.dataset, p.ot, p.act, n.act)
  d.total += by
  const elapsed = n.t - p.t
  ;(by > 0 ? d.add : d.remove).push(elapsed)
  if (p.te !== null) (by > 0 ? d.waitAdd : d.waitRemove).push(Math.max(0, n.t - p.te))
  countMembership(tally, p, p.act, n.act, by)
}

/**
 * Tallies `couples` (distinct event couples per edge) into new events: every incoming couple of a
 * new event is new (its steps are all in this run), so each distinct (object type, predecessor
 * event) of its steps adds one.
 */
function tallyNewEventCouples<O>(deltas: DeltaTable, inserts: readonly LinkedStep<O>[]): void {
  const intoNew = new Map<number, LinkedStep<O>[]>()
  for (const linked of inserts) {
    const rows = intoNew.get(linked.step.pos)
    if (rows === undefined) intoNew.set(linked.step.pos, [linked])
    else rows.push(linked)
  }
  for (const linked of intoNew.values()) {
    for (let i = 0; i < linked.length; i += 1) {
      const { step, prev } = linked[i] as LinkedStep<O>
      if (prev === null || sameCoupleBefore(linked, i, step.ot, prev.pos)) continue
      deltas.of(step.dataset, step.ot, prev.act, step.act).couples += 1
    }
  }
}

/** Whether a step of `linked` (one event's new steps) before index `i` has type `ot` and predecessor event `prevPos`: at most 50 steps an event. */
function sameCoupleBefore<O>(linked: readonly LinkedStep<O>[], i: number, ot: string, prevPos: number): boolean {
  for (let j = 0; j < i; j += 1) {
    const { step, prev } = linked[j] as LinkedStep<O>
    if (prev !== null && prev.pos === prevPos && step.ot === ot) return true
  }
  return false
}

/**
 * Tallies `couples` into the stored events whose predecessors changed and that were not read (not
 * in DfLinking.storedTargets): each changed step is its type's only one in its event, so its
 * removed and added couples are its event's.
 */
function tallyUnreadEventCouples<O>(deltas: DeltaTable, linking: DfLinking<O>): void {
  const read = new Set<number>()
  for (const n of linking.storedTargets) read.add(n.pos)
  for (const { p, n } of linking.removed) if (!read.has(n.pos)) deltas.of(n.dataset, n.ot, p.act, n.act).couples -= 1
  for (const { step, prev } of linking.relinks) if (prev !== null && !read.has(step.pos)) deltas.of(step.dataset, step.ot, prev.act, step.act).couples += 1
}

/** Adds `by` to the count under (`outer`, `inner`) of nested maps (a missing count is 0), and returns the count after it. */
function addCount<K, J>(counts: Map<K, Map<J, number>>, outer: K, inner: J, by: number): number {
  const of = innerMap(counts, outer)
  const n = (of.get(inner) ?? 0) + by
  of.set(inner, n)
  return n
}

/**
 * Tallies `couples` into the stored events that were read (DfLinking.storedTargets: a type with
 * several objects). An event's couples of an edge are its distinct (object type, predecessor event)
 * pairs: from the event's stored steps (`eventSteps`), each pair's objects are counted before the
 * run; each relinked step then moves its object from its old pair to its new one, and an edge gains
 * a couple where a pair's count leaves 0 and loses one where it reaches 0. Only the net change of
 * each edge is tallied.
 */
function tallyReadEventCouples<O>(deltas: DeltaTable, linking: DfLinking<O>, eventSteps: (target: DfStep<O>) => readonly EventStepRow<O>[]): void {
  if (linking.storedTargets.length === 0) return
  // Each event's relinked steps, by position then object.
  const relinked = new Map<number, Map<O, LinkedStep<O>>>()
  for (const r of linking.relinks) innerMap(relinked, r.step.pos).set(r.step.object, r)
  for (const n of linking.storedTargets) {
    const moved = relinked.get(n.pos)
    if (moved === undefined) continue
    const rows = eventSteps(n)
    // The objects of each (object type, predecessor event) pair, before the run.
    const holders = new Map<string, Map<number, number>>()
    for (const r of rows) if (r.prevPos !== null && r.prevAct !== null) addCount(holders, r.ot, r.prevPos, 1)
    // The change of the event's couples by (object type, predecessor activity).
    const change = new Map<string, Map<string, number>>()
    for (const r of rows) {
      const m = moved.get(r.object)
      if (m === undefined) continue
      if (r.prevPos !== null && r.prevAct !== null && addCount(holders, r.ot, r.prevPos, -1) === 0) addCount(change, r.ot, r.prevAct, -1)
      if (m.prev !== null && addCount(holders, r.ot, m.prev.pos, 1) === 1) addCount(change, r.ot, m.prev.act, 1)
    }
    for (const [ot, byAct] of change) for (const [a, c] of byAct) if (c !== 0) deltas.of(n.dataset, ot, a, n.act).couples += c
  }
}

/**
 * The membership changes of the tallied counts, with the `objects` of the aggregates they imply:
 * an object enters an aggregate's `objects` when its count leaves 0, and leaves it at 0. An
 * activity's membership only says "at least one" (steps are never removed): 1, written once.
 * @param newObjects objects with no stored step (their stored counts are 0, not read).
 * @param membershipOf the stored count (aggregateChanges).
 * @throws Error when a count would fall below 0 (a broken read model).
 */
function membershipChanges<O>(tally: Tally<O>, newObjects: ReadonlySet<O>, membershipOf: (object: O, a: string, b: string) => number): MembershipChange<O>[] {
  const memberships: MembershipChange<O>[] = []
  for (const [object, m] of tally.counts) {
    const where = tally.where.get(object)
    if (where === undefined) continue
    const isNew = newObjects.has(object)
    for (const { a, b, delta } of m.list) {
      if (delta === 0) continue
      const before = isNew ? 0 : membershipOf(object, a, b)
      if (b === '' && before > 0) continue
      const after = b === '' ? 1 : before + delta
      if (after < 0) throw new Error(`directly-follows: membership of ${String(object)} in ${a} → ${b} would be ${String(after)}`)
      memberships.push({ object, a, b, before, after })
      if (before === 0 && after > 0) tally.deltas.of(where.dataset, where.ot, a, b).objects += 1
      if (before > 0 && after === 0) tally.deltas.of(where.dataset, where.ot, a, b).objects -= 1
    }
  }
  return memberships
}

/**
 * The membership counts that aggregateChanges asks `membershipOf` for on `linking`: each
 * (object, a, b) whose count the run changes, of the objects with stored steps (the new objects'
 * counts are 0 and not asked). A store that reads counts before the rules run reads these and only
 * these (docs/read-models.md#the-read-models-on-postgresql).
 */
export function membershipsAsked<O>(linking: DfLinking<O>): { object: O; a: string; b: string }[] {
  const tally = emptyTally<O>()
  tallySteps(tally, linking.inserts)
  for (const c of linking.added) tallyCouple(tally, c, 1)
  for (const c of linking.removed) tallyCouple(tally, c, -1)
  const asked: { object: O; a: string; b: string }[] = []
  for (const [object, m] of tally.counts) {
    if (!tally.where.has(object) || linking.newObjects.has(object)) continue
    for (const { a, b, delta } of m.list) if (delta !== 0) asked.push({ object, a, b })
  }
  return asked
}

/**
 * Step 2: the changes to aggregates and membership counts that a linking implies
 * (docs/process-map.md#the-directly-follows-read-model): the new steps, the moves of first and
 * last activities, the couples added and removed, the distinct event couples into new and
 * changed events, then the membership transitions (`objects`). `deltas` in the order their keys
 * were first touched.
 * @param membershipOf the stored count of an object's steps of activity `a` (`b` '') or couples `a → b` (0: none).
 * @param eventSteps the stored steps of the event of a stored target (DfLinking.storedTargets).
 * @throws Error when a membership count would fall below 0 (a broken read model).
 */
export function aggregateChanges<O>(
  linking: DfLinking<O>,
  membershipOf: (object: O, a: string, b: string) => number,
  eventSteps: (target: DfStep<O>) => readonly EventStepRow<O>[],
): DfChanges<O> {
  const tally = emptyTally<O>()
  tallySteps(tally, linking.inserts)
  tallyEndMoves(tally.deltas, linking.starts, linking.ends)
  for (const c of linking.added) tallyCouple(tally, c, 1)
  for (const c of linking.removed) tallyCouple(tally, c, -1)
  tallyNewEventCouples(tally.deltas, linking.inserts)
  tallyUnreadEventCouples(tally.deltas, linking)
  tallyReadEventCouples(tally.deltas, linking, eventSteps)
  const memberships = membershipChanges(tally, linking.newObjects, membershipOf)
  return { deltas: tally.deltas.list, memberships }
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
