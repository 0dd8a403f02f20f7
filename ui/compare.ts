/**
 * The comparison view: two time ranges side by side from `GET /v1/process/compare` (the process
 * map's and the performance read's figures of window a and window b, each exactly what those reads
 * answer for that window, with b − a; docs/analysis.md "Compare"). Shows the highlights (largest
 * relative changes), then performance per activity, then the map's activities and edges grouped
 * by object type; each figure is one cell `a → b (b − a)` so that names stay on one line.
 */
import type { CompareResponse, Highlight, Pair } from '../src/schemas/analysis.js'
import { type Child, el } from './dom.js'
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

/** One pair in one cell: `a → b` and the difference (classed up or down for colour; left out where either side is absent). */
function pairCell(p: Pair, kind: Kind): HTMLElement {
  const cell = el('span', 'pair', el('span', 'a', formatFigure(p.a, kind)), ' → ', el('span', 'b', formatFigure(p.b, kind)))
  if (p.diff !== null) cell.append(' ', el('span', p.diff === 0 ? 'diff' : p.diff > 0 ? 'diff up' : 'diff down', formatDiff(p.diff, kind)))
  return cell
}

/** Rows grouped under a heading row each (the object type), so the type needs no column of its own. */
interface Group {
  name: string
  rows: Child[][]
}

/**
 * A table of `headers` whose first column is a name (an activity, an edge) kept on one line and
 * whose other columns are pairs `a → b (b − a)`, right-aligned; one heading row per group.
 */
function pairTable(headers: string[], groups: Group[]): HTMLTableElement {
  const head = el('thead', '', el('tr', '', ...headers.map((h, i) => el('th', i === 0 ? 'name' : 'num', h))))
  const bodies = groups.map((g) =>
    el(
      'tbody',
      '',
      ...(g.name === '' ? [] : [el('tr', 'group', Object.assign(el('th', '', g.name), { colSpan: headers.length }))]),
      ...g.rows.map((r) => el('tr', '', ...r.map((c, i) => el('td', i === 0 ? 'name' : 'num', c)))),
    ),
  )
  return el('table', 'data pairs', head, ...bodies)
}

/** `rows` grouped by their object type, in the order the types first appear. */
function byType<T extends { object_type: string }>(rows: T[], cells: (row: T) => Child[]): Group[] {
  const groups = new Map<string, Child[][]>()
  for (const r of rows) {
    const group = groups.get(r.object_type) ?? []
    group.push(cells(r))
    groups.set(r.object_type, group)
  }
  return [...groups].map(([name, g]) => ({ name, rows: g }))
}

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
    el('h3', '', 'Performance per activity (medians, a → b and b − a)'),
    el(
      'div',
      'compare-performance table-wrap',
      pairTable(
        ['Activity', 'Sojourn', 'Synchronization'],
        [{ name: '', rows: c.performance.map((p) => [p.activity, pairCell(p.sojourn_median, 'seconds'), pairCell(p.synchronization_median, 'seconds')]) }],
      ),
    ),
    el('h3', '', 'Activities per object type'),
    el(
      'div',
      'compare-activities table-wrap',
      pairTable(
        ['Activity', 'Events', 'Median run time'],
        byType(c.map_activities, (r) => [r.activity, pairCell(r.events, 'count'), pairCell(r.run_time_median, 'seconds')]),
      ),
    ),
    el('h3', '', 'Directly-follows edges per object type'),
    el(
      'div',
      'compare-edges table-wrap',
      pairTable(
        ['Edge', 'Occurrences', 'Median elapsed', 'Median waiting'],
        byType(c.map_edges, (r) => [
          `${r.source} → ${r.target}`,
          pairCell(r.total, 'count'),
          pairCell(r.elapsed_median, 'seconds'),
          pairCell(r.waiting_median, 'seconds'),
        ]),
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
