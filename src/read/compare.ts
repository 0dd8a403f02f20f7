/**
 * The comparison of two time windows (pure): the process map and the performance read of window a
 * and of window b, side by side with their differences (b − a), and the largest relative changes
 * (docs/analysis.md, "Compare").
 */
import type { CompareMapActivity, CompareMapEdge, ComparePerformance, Highlight, Pair, PerformanceActivity } from '../schemas/analysis.js'
import type { ObjectTypeMap, Stats } from '../schemas/process.js'
import { compareText } from '../core/process-map-rows.js'
import { joinKey } from '../core/keys.js'

/** Highlights kept. */
export const HIGHLIGHTS_MAX = 10

const pair = (a: number | null, b: number | null): Pair => ({ a, b, diff: a === null || b === null ? null : Math.round((b - a) * 1000) / 1000 })
const median = (s: Stats | null | undefined): number | null => s?.median ?? null

/** Keyed union of two lists: every key of either, sorted, with the entry of each side or undefined. */
function sideBySide<T>(a: readonly T[], b: readonly T[], key: (t: T) => string[]): { key: string[]; a: T | undefined; b: T | undefined }[] {
  const join = (k: string[]) => joinKey(...k)
  const out = new Map<string, { key: string[]; a: T | undefined; b: T | undefined }>()
  for (const x of a) out.set(join(key(x)), { key: key(x), a: x, b: undefined })
  for (const y of b) {
    const k = join(key(y))
    const entry = out.get(k)
    if (entry === undefined) out.set(k, { key: key(y), a: undefined, b: y })
    else entry.b = y
  }
  return [...out.values()].sort((x, y) => {
    for (let i = 0; i < x.key.length; i++) {
      const c = compareText(x.key[i] ?? '', y.key[i] ?? '')
      if (c !== 0) return c
    }
    return 0
  })
}

export interface Comparison {
  map_activities: CompareMapActivity[]
  map_edges: CompareMapEdge[]
  performance: ComparePerformance[]
  highlights: Highlight[]
}

/**
 * Puts the maps and performance answers of two windows side by side.
 * @param mapA, mapB the process map's object types of windows a and b
 * @param perfA, perfB the performance read's activities of windows a and b
 */
export function compareWindows(
  mapA: readonly ObjectTypeMap[],
  mapB: readonly ObjectTypeMap[],
  perfA: readonly PerformanceActivity[],
  perfB: readonly PerformanceActivity[],
): Comparison {
  const flat = <T>(maps: readonly ObjectTypeMap[], list: (m: ObjectTypeMap) => T[]) => maps.flatMap((m) => list(m).map((x) => ({ ot: m.object_type, x })))
  const activities = sideBySide(
    flat(mapA, (m) => m.activities),
    flat(mapB, (m) => m.activities),
    (v) => [v.ot, v.x.activity],
  )
  const edges = sideBySide(
    flat(mapA, (m) => m.edges),
    flat(mapB, (m) => m.edges),
    (v) => [v.ot, v.x.source, v.x.target],
  )
  const perf = sideBySide(perfA, perfB, (p) => [p.activity])
  const map_activities = activities.map(({ key, a, b }) => ({
    object_type: key[0] ?? '',
    activity: key[1] ?? '',
    events: pair(a?.x.events ?? null, b?.x.events ?? null),
    run_time_median: pair(median(a?.x.run_time), median(b?.x.run_time)),
  }))
  const map_edges = edges.map(({ key, a, b }) => ({
    object_type: key[0] ?? '',
    source: key[1] ?? '',
    target: key[2] ?? '',
    total: pair(a?.x.total ?? null, b?.x.total ?? null),
    elapsed_median: pair(median(a?.x.elapsed), median(b?.x.elapsed)),
    waiting_median: pair(median(a?.x.waiting), median(b?.x.waiting)),
  }))
  const performance = perf.map(({ key, a, b }) => ({
    activity: key[0] ?? '',
    sojourn_median: pair(median(a?.sojourn), median(b?.sojourn)),
    synchronization_median: pair(median(a?.synchronization), median(b?.synchronization)),
  }))
  const candidates: { what: string; p: Pair }[] = [
    ...map_activities.flatMap((r) => [
      { what: `${r.object_type}: ${r.activity}, events`, p: r.events },
      { what: `${r.object_type}: ${r.activity}, run_time_median`, p: r.run_time_median },
    ]),
    ...map_edges.flatMap((r) => [
      { what: `${r.object_type}: ${r.source} → ${r.target}, total`, p: r.total },
      { what: `${r.object_type}: ${r.source} → ${r.target}, elapsed_median`, p: r.elapsed_median },
      { what: `${r.object_type}: ${r.source} → ${r.target}, waiting_median`, p: r.waiting_median },
    ]),
    ...performance.flatMap((r) => [
      { what: `${r.activity}, sojourn_median`, p: r.sojourn_median },
      { what: `${r.activity}, synchronization_median`, p: r.synchronization_median },
    ]),
  ]
  const highlights = candidates
    .flatMap(({ what, p }) =>
      p.a === null || p.b === null || p.diff === null || p.a === 0 || p.diff === 0
        ? []
        : [{ what, a: p.a, b: p.b, diff: p.diff, relative: Math.round((p.diff / p.a) * 1000) / 1000 }],
    )
    .sort((x, y) => Math.abs(y.relative) - Math.abs(x.relative) || compareText(x.what, y.what))
    .slice(0, HIGHLIGHTS_MAX)
  return { map_activities, map_edges, performance, highlights }
}

/**
 * Per object type, the `max` compared edges with the largest `total` in either window (ties by
 * source, then target), still in (object type, source, target) order, and how many were left out.
 */
export function mostFrequentComparedEdges(edges: readonly CompareMapEdge[], max: number): { kept: CompareMapEdge[]; leftOut: number } {
  const frequency = (e: CompareMapEdge) => Math.max(e.total.a ?? 0, e.total.b ?? 0)
  const byType = new Map<string, CompareMapEdge[]>()
  for (const e of edges) byType.set(e.object_type, [...(byType.get(e.object_type) ?? []), e])
  const keep = new Set<CompareMapEdge>()
  for (const list of byType.values()) {
    for (const e of [...list].sort((x, y) => frequency(y) - frequency(x) || compareText(x.source, y.source) || compareText(x.target, y.target)).slice(0, max))
      keep.add(e)
  }
  const kept = edges.filter((e) => keep.has(e))
  return { kept, leftOut: edges.length - kept.length }
}
