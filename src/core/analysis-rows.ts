/**
 * The object-centric analysis reads' aggregate rows (performance, variants, type relations), as
 * every ReadModelQuery adapter computes them in its engine, and their assembly into the answers'
 * shapes (pure). An adapter's query yields a few rows per activity, object type and variant (never
 * one per event); this module sorts, nests and pages them. Definitions: docs/analysis.md (after
 * OPerA, Park, Adams and van der Aalst, arXiv 2204.10662; pm4py's flattened variants and ET-OT).
 */
import type { ActivityObjectType, O2oTypeRelation, PerformanceActivity, PerformanceObjectType, SlowEvent, Variant } from '../schemas/analysis.js'
import { compareText, statsOf } from './process-map-rows.js'
import { joinKey } from './keys.js'

/** Where a page of variants starts: after the variant with these objects and activities (the answer's order). */
export interface VariantsAfter {
  objects: number
  activities: readonly string[]
}

export interface VariantsPage {
  /** Objects with at least one event in the window: the sum of every variant's objects. */
  objects: number
  /** Distinct variants. */
  total: number
  variants: Variant[]
  /** The last variant of this page when more follow, else null. */
  next: VariantsAfter | null
}

/**
 * One performance aggregate row. `kind` says what it holds (durations in whole milliseconds):
 * - `activity` (`act`): `c1` events, `c2` events with at least one predecessor;
 * - `sojourn`, `flow`, `synchronization` (`act`): statistics in `c3`..`c7` (count, sum, min, max, median);
 * - `type` (`act`, `ot`): an object type linked to the activity's events (no figures);
 * - `pooling`, `lagging`, `readying` (`act`, `ot`): statistics in `c3`..`c7`;
 * - `delaying` (`act`, `ot`): `c1` events whose delaying object is of type `ot`;
 * - `slowest` (`act`): one event, `eid` its id, `c1` its timestamp (epoch ms), `c2` its sojourn,
 *   `c3` its log position (for the order of ties), `ot` and `ext` its delaying object.
 */
export interface PerformanceRow {
  kind: 'activity' | 'sojourn' | 'flow' | 'synchronization' | 'type' | 'pooling' | 'lagging' | 'readying' | 'delaying' | 'slowest'
  act: string
  ot: string
  ext: string
  eid: string
  c1: number
  c2: number
  c3: number
  c4: number
  c5: number
  c6: number
  c7: number | null
}

/**
 * Nests performance rows into the answer's activities: sorted by activity, each activity's object
 * types by name, its slowest events by sojourn descending then log position descending.
 */
export function assemblePerformance(rows: readonly PerformanceRow[]): PerformanceActivity[] {
  const activities = new Map<string, PerformanceActivity>()
  const types = new Map<string, PerformanceObjectType>()
  const slow = new Map<string, { event: SlowEvent; position: number }[]>()
  const activityOf = (act: string): PerformanceActivity => {
    let a = activities.get(act)
    if (a === undefined) {
      a = { activity: act, events: 0, events_with_predecessors: 0, sojourn: null, flow: null, synchronization: null, object_types: [], slowest: [] }
      activities.set(act, a)
    }
    return a
  }
  const typeOf = (act: string, ot: string): PerformanceObjectType => {
    const key = joinKey(act, ot)
    let t = types.get(key)
    if (t === undefined) {
      t = { object_type: ot, pooling: null, lagging: null, readying: null, delaying: 0 }
      types.set(key, t)
      activityOf(act).object_types.push(t)
    }
    return t
  }
  for (const r of rows) {
    switch (r.kind) {
      case 'activity': {
        const a = activityOf(r.act)
        a.events = Number(r.c1)
        a.events_with_predecessors = Number(r.c2)
        break
      }
      case 'sojourn':
      case 'flow':
      case 'synchronization':
        activityOf(r.act)[r.kind] = statsOf(r)
        break
      case 'type':
        typeOf(r.act, r.ot)
        break
      case 'pooling':
      case 'lagging':
      case 'readying':
        typeOf(r.act, r.ot)[r.kind] = statsOf(r)
        break
      case 'delaying':
        typeOf(r.act, r.ot).delaying = Number(r.c1)
        break
      case 'slowest': {
        const list = slow.get(r.act) ?? []
        list.push({
          event: { event_id: r.eid, timestamp: new Date(Number(r.c1)).toISOString(), sojourn: Number(r.c2) / 1000, delaying_object: { type: r.ot, id: r.ext } },
          position: Number(r.c3),
        })
        slow.set(r.act, list)
        break
      }
    }
  }
  for (const [act, list] of slow) {
    list.sort((a, b) => b.event.sojourn - a.event.sojourn || b.position - a.position)
    activityOf(act).slowest = list.map((s) => s.event)
  }
  const result = [...activities.values()].sort((a, b) => compareText(a.activity, b.activity))
  for (const a of result) a.object_types.sort((x, y) => compareText(x.object_type, y.object_type))
  return result
}

/** One variant as an adapter groups it: `seq` the activities, `objects` its traces, duration statistics (ms) in `c3`..`c7`, `examples` some object ids. */
export interface VariantRow {
  seq: readonly string[]
  examples: readonly string[]
  c3: number
  c4: number
  c5: number
  c6: number
  c7: number | null
}

/** Activity sequences element by element in code-unit order, a prefix before its extensions. */
export function compareSequences(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const c = compareText(a[i] as string, b[i] as string)
    if (c !== 0) return c
  }
  return a.length - b.length
}

/** The variants' order: most objects first, then compareSequences. */
export function compareVariants(a: VariantsAfter, b: VariantsAfter): number {
  return b.objects - a.objects || compareSequences(a.activities, b.activities)
}

/**
 * Sorts every variant of an object type (compareVariants) and takes the page of `limit` after
 * `after`: shares are of all the type's objects, examples the first 3 ids in code-unit order.
 */
export function pageVariants(rows: readonly VariantRow[], limit: number, after?: VariantsAfter): VariantsPage {
  const objects = rows.reduce((sum, r) => sum + Number(r.c3), 0)
  const all = rows.map((r) => ({ objects: Number(r.c3), activities: r.seq, row: r })).sort(compareVariants)
  const start = after === undefined ? 0 : all.findIndex((v) => compareVariants(v, after) > 0)
  const from = start < 0 ? all.length : start
  const page = all.slice(from, from + limit)
  const variants: Variant[] = page.map((v) => ({
    activities: [...v.activities],
    objects: v.objects,
    share: v.objects / objects,
    duration: statsOf(v.row),
    examples: [...v.row.examples].sort(compareText).slice(0, 3),
  }))
  const last = page[page.length - 1]
  return {
    objects,
    total: all.length,
    variants,
    next: from + limit < all.length && last !== undefined ? { objects: last.objects, activities: last.activities } : null,
  }
}

/** One (activity, object type) row: `events`, `e2o` links, and the distinct objects per event's min, sum and max. */
export interface ActivityTypeRow {
  act: string
  ot: string
  events: number
  e2o: number
  n_min: number
  n_sum: number
  n_max: number
}

/** The activity × object type entries, by activity then object type (code-unit order). */
export function assembleActivityTypes(rows: readonly ActivityTypeRow[]): ActivityObjectType[] {
  return rows
    .map((r) => ({
      activity: r.act,
      object_type: r.ot,
      events: Number(r.events),
      e2o: Number(r.e2o),
      objects_per_event: { min: Number(r.n_min), mean: Number(r.n_sum) / Number(r.events), max: Number(r.n_max) },
    }))
    .sort((a, b) => compareText(a.activity, b.activity) || compareText(a.object_type, b.object_type))
}

/** The O2O entries, by source type, qualifier (none first), target type (code-unit order). */
export function sortO2o(rows: readonly O2oTypeRelation[]): O2oTypeRelation[] {
  return rows
    .map((r) => ({ ...r, relationships: Number(r.relationships) }))
    .sort(
      (a, b) =>
        compareText(a.source_type, b.source_type) ||
        (a.qualifier === b.qualifier ? 0 : a.qualifier === null ? -1 : b.qualifier === null ? 1 : compareText(a.qualifier, b.qualifier)) ||
        compareText(a.target_type, b.target_type),
    )
}

/** One input of a measured event: an object of a chosen type and its predecessor's ready time and log position (null: none). */
export interface EventInput {
  ot: string
  ext: string
  /** r(pred): the predecessor's `end_timestamp`, else its `timestamp`, epoch ms; null when the object has no earlier event. */
  p_r: number | null
  p_pos: number | null
}

/** An event in the window with its inputs (one per object of the chosen types). */
export interface EventInputs {
  event_id: string
  act: string
  /** `timestamp`, epoch ms. */
  t: number
  position: number
  inputs: readonly EventInput[]
}

/** count, sum, min, max and median (the mean of the two middle values of an even count) of whole ms, as `c3`..`c7`. */
function statsColumns(values: number[]): Pick<PerformanceRow, 'c3' | 'c4' | 'c5' | 'c6' | 'c7'> {
  const v = [...values].sort((a, b) => a - b)
  const n = v.length
  const mid = n % 2 === 1 ? (v[(n - 1) / 2] as number) : ((v[n / 2 - 1] as number) + (v[n / 2] as number)) / 2
  return { c3: n, c4: v.reduce((s, x) => s + x, 0), c5: v[0] as number, c6: v[n - 1] as number, c7: mid }
}

interface ActivityAcc {
  events: number
  measured: number
  sojourn: number[]
  flow: number[]
  sync: number[]
  types: Map<string, { pooling: number[]; lagging: number[]; readying: number[]; delaying: number }>
  slow: { e: EventInputs; sojourn: number; delay: EventInput }[]
}

/**
 * Folds events given one by one with their inputs into the performance rows (PerformanceRow), for an
 * adapter that streams per-event rows from its engine (SQLite, in log position order; MongoDB, one
 * document per event): the definitions of docs/analysis.md. Holds the activities' durations (numbers,
 * for the exact medians) and a few slowest candidates per activity, never the events.
 */
export class PerformanceFold {
  private readonly acts = new Map<string, ActivityAcc>()

  /** @param slowest the slowest events kept per activity (0 to SLOWEST_MAX). */
  constructor(private readonly slowest: number) {}

  /** Adds one event in the window with its inputs (one per object of the chosen types). */
  add(e: EventInputs): void {
    let a = this.acts.get(e.act)
    if (a === undefined) {
      a = { events: 0, measured: 0, sojourn: [], flow: [], sync: [], types: new Map(), slow: [] }
      this.acts.set(e.act, a)
    }
    a.events += 1
    const byType = new Map<string, number[]>()
    for (const i of e.inputs) {
      const list = byType.get(i.ot) ?? []
      if (i.p_r !== null) list.push(i.p_r)
      byType.set(i.ot, list)
    }
    for (const ot of byType.keys()) if (!a.types.has(ot)) a.types.set(ot, { pooling: [], lagging: [], readying: [], delaying: 0 })
    const withPred = e.inputs.filter((i) => i.p_r !== null)
    if (withPred.length === 0) return
    a.measured += 1
    const rs = withPred.map((i) => i.p_r as number)
    const maxr = Math.max(...rs)
    const minr = Math.min(...rs)
    const delay = [...withPred].sort(
      (x, y) => (y.p_r as number) - (x.p_r as number) || (y.p_pos ?? 0) - (x.p_pos ?? 0) || compareText(x.ot, y.ot) || compareText(x.ext, y.ext),
    )[0] as EventInput
    const sojourn = Math.max(0, e.t - maxr)
    a.sojourn.push(sojourn)
    a.flow.push(Math.max(0, e.t - minr))
    a.sync.push(maxr - minr)
    for (const [ot, list] of byType) {
      if (list.length === 0) continue
      const t = a.types.get(ot)
      if (t === undefined) continue
      const maxt = Math.max(...list)
      t.pooling.push(maxt - Math.min(...list))
      t.lagging.push(maxt - minr)
      t.readying.push(maxr - maxt)
    }
    const dt = a.types.get(delay.ot)
    if (dt !== undefined) dt.delaying += 1
    a.slow.push({ e, sojourn, delay })
    if (a.slow.length > 2 * this.slowest + 64) a.slow = topSlow(a.slow, this.slowest)
  }

  /** The rows of every event added so far. */
  rows(): PerformanceRow[] {
    const blank = { ot: '', ext: '', eid: '', c1: 0, c2: 0, c3: 0, c4: 0, c5: 0, c6: 0, c7: null }
    const rows: PerformanceRow[] = []
    for (const [act, a] of this.acts) {
      rows.push({ ...blank, kind: 'activity', act, c1: a.events, c2: a.measured })
      if (a.measured > 0) {
        rows.push({ ...blank, kind: 'sojourn', act, ...statsColumns(a.sojourn) })
        rows.push({ ...blank, kind: 'flow', act, ...statsColumns(a.flow) })
        rows.push({ ...blank, kind: 'synchronization', act, ...statsColumns(a.sync) })
      }
      for (const [ot, t] of a.types) {
        rows.push({ ...blank, kind: 'type', act, ot })
        if (t.pooling.length > 0) {
          rows.push({ ...blank, kind: 'pooling', act, ot, ...statsColumns(t.pooling) })
          rows.push({ ...blank, kind: 'lagging', act, ot, ...statsColumns(t.lagging) })
          rows.push({ ...blank, kind: 'readying', act, ot, ...statsColumns(t.readying) })
        }
        if (t.delaying > 0) rows.push({ ...blank, kind: 'delaying', act, ot, c1: t.delaying })
      }
      for (const s of topSlow(a.slow, this.slowest)) {
        rows.push({ ...blank, kind: 'slowest', act, ot: s.delay.ot, ext: s.delay.ext, eid: s.e.event_id, c1: s.e.t, c2: s.sojourn, c3: s.e.position })
      }
    }
    return rows
  }
}

/** PerformanceFold over a list or generator of events. */
export function performanceRowsOfEvents(events: Iterable<EventInputs>, slowest: number): PerformanceRow[] {
  const fold = new PerformanceFold(slowest)
  for (const e of events) fold.add(e)
  return fold.rows()
}

/** The `n` slowest: largest sojourn first, ties by the later log position. */
function topSlow<T extends { e: { position: number }; sojourn: number }>(list: T[], n: number): T[] {
  return [...list].sort((x, y) => y.sojourn - x.sojourn || y.e.position - x.e.position).slice(0, n)
}
