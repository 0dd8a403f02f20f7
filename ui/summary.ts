/**
 * The dataset summary cards from `GET /v1/process/summary` (docs/api.md), and the object type
 * chips and selects filled from `GET /v1/process/object-types`. README § The web page.
 */
import type { SummaryResponse } from '../src/schemas/process.js'
import { splitSpan } from './compare.js'
import { formatCount } from './dot.js'
import { colourOf, options, setKnownTypes, ui } from './page.js'

function card(name: string, value: string, wide = false): HTMLElement {
  const div = document.createElement('div')
  div.className = wide ? 'card wide' : 'card'
  const v = document.createElement('div')
  v.className = 'value'
  v.textContent = value
  const n = document.createElement('div')
  n.className = 'name'
  n.textContent = name
  div.append(v, n)
  return div
}

/** ISO 8601 date-time → `datetime-local` value in UTC (to the second). */
function localValue(iso: string | null): string {
  return iso === null ? '' : iso.slice(0, 19)
}

/** Shows the summary's cards; sets the compare windows to the two halves of the span when they are empty. */
export function showSummary(s: SummaryResponse): void {
  const range =
    s.first_event_time === null ? '—' : `${s.first_event_time.replace('T', ' ').slice(0, 19)} → ${(s.last_event_time ?? '').replace('T', ' ').slice(0, 19)} UTC`
  ui.summary.replaceChildren(
    card('events', formatCount(s.events)),
    card('objects', formatCount(s.objects)),
    card('event types', formatCount(s.event_types)),
    card('object types', formatCount(s.object_types)),
    card('E2O links', formatCount(s.e2o)),
    card('first → last event', range, true),
    card('as of log position', formatCount(s.as_of)),
  )
  ui.summary.hidden = false
  const halves = splitSpan(s.first_event_time, s.last_event_time)
  if (halves !== null && ui.aFrom.value === '' && ui.aTo.value === '' && ui.bFrom.value === '' && ui.bTo.value === '') {
    ui.aFrom.value = halves.aFrom
    ui.aTo.value = halves.aTo
    ui.bFrom.value = halves.bFrom
    ui.bTo.value = halves.bTo
  }
  ui.from.placeholder = localValue(s.first_event_time)
  ui.to.placeholder = localValue(s.last_event_time)
}

/** Shows a chip per object type (all ticked; `onChange` runs when one is toggled) and fills the type selects. */
export function showTypes(types: string[], onChange: () => void): void {
  setKnownTypes(types)
  ui.types.replaceChildren(
    ...types.map((t) => {
      const label = document.createElement('label')
      label.className = 'chip'
      const box = document.createElement('input')
      box.type = 'checkbox'
      box.value = t
      box.checked = true
      box.addEventListener('change', onChange)
      const dot = document.createElement('span')
      dot.className = 'dot'
      dot.style.background = colourOf(t)
      label.append(box, dot, document.createTextNode(t))
      return label
    }),
  )
  ui.variantType.replaceChildren(...options(types))
  ui.pathsType.replaceChildren(...options(types))
  ui.controls.hidden = false
  ui.tabs.hidden = false
}
