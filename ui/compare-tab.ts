/**
 * The compare tab: window a against window b for the chosen object types from
 * `GET /v1/process/compare` (docs/analysis.md "Compare"); the panel is built by compare.ts.
 * README § The web page.
 */
import type { CompareResponse } from '../src/schemas/analysis.js'
import { getJson } from './api.js'
import { comparePanel } from './compare.js'
import { formatCount } from './dot.js'
import { knownTypes, noTypeChosen, report, selectedTypes, setStatus, ui, utcParam } from './page.js'

/** Fetches the comparison of window a and window b for the chosen types, and shows it. */
export async function drawCompare(): Promise<void> {
  if (noTypeChosen(ui.compare)) return
  const params = new URLSearchParams()
  const selected = selectedTypes()
  if (selected.length < knownTypes().length) for (const t of selected) params.append('object_type', t)
  for (const [name, input] of [
    ['a_from', ui.aFrom],
    ['a_to', ui.aTo],
    ['b_from', ui.bFrom],
    ['b_to', ui.bTo],
  ] as const) {
    const value = utcParam(input)
    if (value !== undefined) params.set(name, value)
  }
  setStatus('Comparing the two windows…')
  try {
    const query = params.toString()
    const c = await getJson<CompareResponse>(`/v1/process/compare${query === '' ? '' : `?${query}`}`)
    ui.compare.replaceChildren(comparePanel(c))
    setStatus(`Dataset ${c.dataset_id}, as of log position ${formatCount(c.as_of)}: window a against window b.`)
  } catch (error) {
    ui.compare.replaceChildren()
    report(error)
  }
}
