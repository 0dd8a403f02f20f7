/**
 * The comparison view: two time ranges side by side from `GET /v1/process/compare` (the process
 * map's and the performance read's figures of window a and window b, each exactly what those reads
 * answer for that window, with b − a; docs/analysis.md "Compare"). Shows the highlights (largest
 * relative changes), then performance per activity, then the map's activities and edges.
 */
import type { CompareResponse, Highlight, Pair } from '../src/schemas/analysis.js'
import { type Child, el, table } from './dom.js'
import { formatCount, formatDuration } from './dot.js'

/** How a figure reads: a count or a duration in seconds. */
type Kind = 'count' | 'seconds'

/** A figure of one window, or — where it is absent. */
export function formatFigure(value: number | null, kind: Kind): string {
  if (value === null) return '—'
  return kind === 'count' ? formatCount(value) : formatDuration(value)
}

/** A difference b − a with its sign (+, − or ±0), or — where either side is absent. */
export function formatDiff(diff: number | null, kind: Kind): string {
  if (diff === null) return '—'
  if (diff === 0) return '±0'
  const sign = diff > 0 ? '+' : '−'
  return `${sign}${formatFigure(Math.abs(diff), kind)}`
}

/** A relative change as a signed percentage, e.g. `+20.0%`. */
export function formatRelative(relative: number): string {
  return `${relative > 0 ? '+' : relative < 0 ? '−' : '±'}${(Math.abs(relative) * 100).toFixed(1)}%`
}

/** The three cells of a pair: a, b and the difference (classed up or down for colour). */
function pairCells(p: Pair, kind: Kind): Child[] {
  const diff = el('span', p.diff === null || p.diff === 0 ? 'diff' : p.diff > 0 ? 'diff up' : 'diff down', formatDiff(p.diff, kind))
  return [formatFigure(p.a, kind), formatFigure(p.b, kind), diff]
}

const pairHeads = (name: string): string[] => [`${name} a`, `${name} b`, 'b − a']

/** Columns of `count` pairs after `lead` leading columns: the indices to align right. */
const numericAfter = (lead: number, pairs: number): number[] => Array.from({ length: pairs * 3 }, (_, i) => lead + i)

/** The highlights as a list: what changed, a → b, and the relative change. */
export function highlightList(highlights: Highlight[]): HTMLElement {
  if (highlights.length === 0) return el('p', 'muted', 'No figure present in both windows changed.')
  return el(
    'ol',
    'highlights',
    ...highlights.map((h) => {
      const kind: Kind = h.what.endsWith('_median') ? 'seconds' : 'count'
      return el(
        'li',
        '',
        el('span', 'what', h.what),
        `: ${formatFigure(h.a, kind)} → ${formatFigure(h.b, kind)} `,
        el('span', h.relative > 0 ? 'diff up' : 'diff down', `(${formatRelative(h.relative)})`),
      )
    }),
  )
}

/** The comparison's sections: highlights, performance per activity, map activities, map edges. */
export function comparePanel(c: CompareResponse): HTMLElement {
  return el(
    'div',
    'compare-view',
    el('h3', '', 'Largest relative changes'),
    highlightList(c.highlights),
    el('h3', '', 'Performance per activity (medians)'),
    el(
      'div',
      'compare-performance table-wrap',
      table(
        ['Activity', ...pairHeads('Sojourn'), ...pairHeads('Synchronization')],
        c.performance.map((p) => [p.activity, ...pairCells(p.sojourn_median, 'seconds'), ...pairCells(p.synchronization_median, 'seconds')]),
        numericAfter(1, 2),
      ),
    ),
    el('h3', '', 'Activities per object type'),
    el(
      'div',
      'compare-activities table-wrap',
      table(
        ['Object type', 'Activity', ...pairHeads('Events'), ...pairHeads('Median run time')],
        c.map_activities.map((r) => [r.object_type, r.activity, ...pairCells(r.events, 'count'), ...pairCells(r.run_time_median, 'seconds')]),
        numericAfter(2, 2),
      ),
    ),
    el('h3', '', 'Directly-follows edges per object type'),
    el(
      'div',
      'compare-edges table-wrap',
      table(
        ['Object type', 'Edge', ...pairHeads('Occurrences'), ...pairHeads('Median elapsed'), ...pairHeads('Median waiting')],
        c.map_edges.map((r) => [
          r.object_type,
          `${r.source} → ${r.target}`,
          ...pairCells(r.total, 'count'),
          ...pairCells(r.elapsed_median, 'seconds'),
          ...pairCells(r.waiting_median, 'seconds'),
        ]),
        numericAfter(2, 3),
      ),
    ),
  )
}

/**
 * Two halves of the dataset's time span as default windows: a = [first, middle), b = [middle, last + 1 s),
 * as `datetime-local` values (UTC, to the second); null when the dataset has no events.
 */
export function splitSpan(first: string | null, last: string | null): { aFrom: string; aTo: string; bFrom: string; bTo: string } | null {
  if (first === null || last === null) return null
  const start = Date.parse(first)
  const end = Date.parse(last) + 1000
  const middle = Math.floor((start + (end - start) / 2) / 1000) * 1000
  const local = (ms: number) => new Date(ms).toISOString().slice(0, 19)
  return { aFrom: local(start), aTo: local(middle), bFrom: local(middle), bTo: local(end) }
}
