/**
 * The performance view: the process map's activities coloured by their median `sojourn` (how long
 * an event waited after its last input object was ready, after OPerA: Park, Adams, van der Aalst,
 * "OPerA: Object-Centric Performance Analysis", arXiv 2204.10662), each with the object type that
 * most often held the delaying object, and a table of activities with their slowest events linking
 * to the object view of their delaying object. Reads `GET /v1/process/performance` (docs/analysis.md).
 */
import type { PerformanceActivity, PerformanceResponse } from '../src/schemas/analysis.js'
import { type Child, el, objectLink, table } from './dom.js'
import { formatCount, formatDuration, type NodeLook } from './dot.js'

/** Sequential colours (ColorBrewer OrRd), light (short sojourn) to dark (long). */
export const SOJOURN_COLOURS = ['#fff7ec', '#fee8c8', '#fdd49e', '#fdbb84', '#fc8d59', '#ef6548', '#d7301f', '#990000'] as const

/**
 * The colour of a median sojourn of `seconds` when the largest of the view is `max` seconds, on a
 * logarithmic scale (seconds + 1) so that minutes and days both show; the lightest when max is 0.
 */
export function sojournColour(seconds: number, max: number): string {
  const top = SOJOURN_COLOURS.length - 1
  const k = max <= 0 ? 0 : Math.round((top * Math.log1p(Math.max(0, seconds))) / Math.log1p(max))
  return SOJOURN_COLOURS[Math.min(top, Math.max(0, k))] ?? '#fff7ec'
}

/** The object type that held the delaying object most often for an activity (ties: by name), or null when none did. */
export function delayingType(a: PerformanceActivity): { object_type: string; delaying: number } | null {
  let best: { object_type: string; delaying: number } | null = null
  for (const t of a.object_types) if (t.delaying > 0 && (best === null || t.delaying > best.delaying)) best = t
  return best === null ? null : { object_type: best.object_type, delaying: best.delaying }
}

const maxMedian = (p: PerformanceResponse): number => Math.max(0, ...p.activities.map((a) => a.sojourn?.median ?? 0))

/** For processMapDot: each measured activity's box filled by its median sojourn, labelled with it and its delaying object type. */
export function sojournLooks(p: PerformanceResponse): (activity: string) => NodeLook | undefined {
  const max = maxMedian(p)
  const by = new Map(p.activities.map((a) => [a.activity, a]))
  return (activity) => {
    const a = by.get(activity)
    if (a === undefined) return undefined
    const events = `${formatCount(a.events)} ${a.events === 1 ? 'event' : 'events'}`
    if (a.sojourn === null) return { fill: '#f2f2f2', font: '#1d2330', lines: [events, 'no predecessor'] }
    const fill = sojournColour(a.sojourn.median, max)
    const dark = SOJOURN_COLOURS.indexOf(fill as (typeof SOJOURN_COLOURS)[number]) >= 5
    const d = delayingType(a)
    return {
      fill,
      font: dark ? '#ffffff' : '#1d2330',
      lines: [events, `sojourn ${formatDuration(a.sojourn.median)}`, ...(d === null ? [] : [`waits for ${d.object_type}`])],
    }
  }
}

/** The colour scale's legend: one swatch per step, from 0 s to the view's largest median sojourn. */
export function sojournLegend(p: PerformanceResponse): HTMLElement {
  const max = maxMedian(p)
  return el(
    'div',
    'scale',
    el('span', 'scale-name', 'Median sojourn (wait after the last input was ready):'),
    '0 s',
    ...SOJOURN_COLOURS.map((c) => {
      const swatch = el('i', 'swatch')
      swatch.style.background = c
      return swatch
    }),
    formatDuration(max),
  )
}

const median = (s: { median: number } | null): string => (s === null ? '—' : formatDuration(s.median))

/**
 * The activities by median sojourn (longest first; unmeasured last, by name): events, measured
 * events, median sojourn, synchronization and flow, the delaying object type with its count, and
 * the slowest events, each linking to the object view of its delaying object.
 */
export function performanceTable(p: PerformanceResponse): HTMLTableElement {
  const max = maxMedian(p)
  const rows = [...p.activities].sort(
    (x, y) => (y.sojourn?.median ?? -1) - (x.sojourn?.median ?? -1) || (x.activity < y.activity ? -1 : x.activity > y.activity ? 1 : 0),
  )
  return table(
    ['Activity', 'Events', 'Measured', 'Median sojourn', 'Median synchronization', 'Median flow', 'Delaying object type', 'Slowest events (delaying object)'],
    rows.map((a): Child[] => {
      const swatch = el('i', 'swatch')
      swatch.style.background = a.sojourn === null ? '#f2f2f2' : sojournColour(a.sojourn.median, max)
      const d = delayingType(a)
      const slow = el(
        'ul',
        'slowest',
        ...a.slowest.map((s) =>
          el(
            'li',
            '',
            `${formatDuration(s.sojourn)} at ${s.timestamp.replace('T', ' ').slice(0, 19)}: `,
            objectLink(s.delaying_object.type, s.delaying_object.id),
          ),
        ),
      )
      return [
        el('span', 'activity', swatch, a.activity),
        formatCount(a.events),
        formatCount(a.events_with_predecessors),
        median(a.sojourn),
        median(a.synchronization),
        median(a.flow),
        d === null ? '—' : `${d.object_type} (${formatCount(d.delaying)} of ${formatCount(a.events_with_predecessors)})`,
        slow,
      ]
    }),
    [1, 2, 3, 4, 5],
  )
}
