/**
 * The variants panel: the trace variants of one object type (pm4py's flattened variants: an
 * object's activities in (timestamp, position) order), most objects first, with their share of the
 * type's objects, median trace duration, the path (repeats collapsed and long paths cut:
 * variant-path.ts) and example objects linking to the object view. Reads
 * `GET /v1/process/variants` a page at a time (docs/analysis.md).
 */
import type { Variant, VariantsResponse } from '../src/schemas/analysis.js'
import { type Child, el, objectLink, table } from './dom.js'
import { formatCount, formatDuration } from './dot.js'
import { pathParts, partText } from './variant-path.js'

/** A share in [0, 1] as a percentage with one decimal, e.g. `33.3%`. */
export function formatShare(share: number): string {
  return `${(share * 100).toFixed(1)}%`
}

/** The line above the table: objects, distinct variants, and how many are shown. */
export function variantsHeadline(objectType: string, objects: number, total: number, shown: number): string {
  return `${objectType}: ${formatCount(objects)} ${objects === 1 ? 'object' : 'objects'} in ${formatCount(total)} ${total === 1 ? 'variant' : 'variants'}; ${formatCount(shown)} shown.`
}

function path(activities: string[]): HTMLElement {
  const parts: Child[] = []
  const shown = pathParts(activities)
  shown.forEach((p, i) => {
    if (i > 0) parts.push(el('span', 'arrow', '→'))
    parts.push('skipped' in p ? el('span', 'skipped', partText(p)) : el('span', p.count === 1 ? 'step' : 'step repeated', partText(p)))
  })
  if (shown.length !== activities.length) parts.push(el('span', 'total', `${formatCount(activities.length)} steps`))
  return el('div', 'path', ...parts)
}

/** The rows of `variants` (numbered from `first`): rank, objects, share with a bar, median and max duration, path, examples. */
export function variantsTable(objectType: string, variants: Variant[], first = 1): HTMLTableElement {
  return table(
    ['#', 'Objects', 'Share', 'Median duration', 'Max duration', 'Activities', 'Examples'],
    variants.map((v, i): Child[] => {
      const bar = el('i', 'share-bar')
      bar.style.width = `${(v.share * 100).toFixed(1)}%`
      return [
        String(first + i),
        formatCount(v.objects),
        el('span', 'share', el('span', 'bar-track', bar), formatShare(v.share)),
        formatDuration(v.duration.median),
        formatDuration(v.duration.max),
        path(v.activities),
        el('span', 'examples', ...v.examples.flatMap((id, k) => (k === 0 ? [objectLink(objectType, id, id)] : [', ', objectLink(objectType, id, id)]))),
      ]
    }),
    [0, 1, 3, 4],
  )
}

/** Appends a page to the variants already shown: the answer with both pages' variants. */
export function appendPage(shown: VariantsResponse | null, page: VariantsResponse): VariantsResponse {
  return shown === null ? page : { ...page, variants: [...shown.variants, ...page.variants] }
}
