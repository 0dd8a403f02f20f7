/**
 * What the page's views share: its elements by id, the status line, the chosen object types and
 * time range as query parameters of `/v1/process/*` (docs/api.md), and how a failure is shown.
 */
import { hasKey, Stale } from './api.js'
import { typeColour } from './dot.js'
import { showGraph } from './graph-view.js'
import { Graphviz } from './vendor/graphviz.js'

const graphviz = Graphviz.load()

/** Lays out DOT source with Graphviz (WebAssembly) and shows it in `container` with zoom buttons (graph-view.ts). */
export async function drawInto(container: HTMLElement, dot: string): Promise<void> {
  const svg = (await graphviz).dot(dot)
  // The key may have been forgotten while Graphviz loaded.
  if (hasKey()) showGraph(container, svg)
}

function element<T extends HTMLElement>(id: string, kind: new () => T): T {
  const found = document.getElementById(id)
  if (!(found instanceof kind)) throw new Error(`the page has no #${id}`)
  return found
}

/** The page's elements (ui/index.html). */
export const ui = {
  keyForm: element('key-form', HTMLFormElement),
  key: element('key', HTMLInputElement),
  forget: element('forget', HTMLButtonElement),
  status: element('status', HTMLParagraphElement),
  summary: element('summary', HTMLElement),
  controls: element('controls', HTMLElement),
  types: element('types', HTMLDivElement),
  measure: element('measure', HTMLSelectElement),
  from: element('from', HTMLInputElement),
  to: element('to', HTMLInputElement),
  apply: element('apply', HTMLButtonElement),
  reset: element('reset', HTMLButtonElement),
  legend: element('legend', HTMLDivElement),
  graph: element('graph', HTMLDivElement),
  tabs: element('tabs', HTMLElement),
  perfLegend: element('perf-legend', HTMLDivElement),
  perfGraph: element('perf-graph', HTMLDivElement),
  perfTable: element('perf-table', HTMLDivElement),
  variantType: element('variant-type', HTMLSelectElement),
  variantsHead: element('variants-head', HTMLSpanElement),
  variantsTable: element('variants-table', HTMLDivElement),
  variantsMore: element('variants-more', HTMLButtonElement),
  object: element('object', HTMLDivElement),
  aFrom: element('a-from', HTMLInputElement),
  aTo: element('a-to', HTMLInputElement),
  bFrom: element('b-from', HTMLInputElement),
  bTo: element('b-to', HTMLInputElement),
  compareRun: element('compare-run', HTMLButtonElement),
  compare: element('compare', HTMLDivElement),
  objectBack: element('object-back', HTMLButtonElement),
  analysis: element('analysis', HTMLElement),
  waits: element('waits', HTMLTableElement),
  variants: element('variants', HTMLTableElement),
  pathsType: element('paths-type', HTMLSelectElement),
}

/** Shows `text` in the status line (red when `error`). */
export function setStatus(text: string, error = false): void {
  ui.status.textContent = text
  ui.status.classList.toggle('error', error)
}

/** Shows a failure in the status line; an answer for a forgotten key (Stale) is dropped silently. */
export function report(error: unknown): void {
  if (error instanceof Stale) return
  setStatus(error instanceof Error ? error.message : String(error), true)
}

let allTypes: string[] = []

/** The dataset's object types, in the order of `GET /v1/process/object-types` (colours follow it). */
export function knownTypes(): readonly string[] {
  return allTypes
}

/** Sets the dataset's object types (empty after the key is forgotten). */
export function setKnownTypes(types: string[]): void {
  allTypes = types
}

/** The colour of an object type: by its place among all the dataset's types, so it stays when others are left out. */
export function colourOf(type: string): string {
  return typeColour(Math.max(0, allTypes.indexOf(type)))
}

/** The object types whose boxes are ticked. */
export function selectedTypes(): string[] {
  return [...ui.types.querySelectorAll<HTMLInputElement>('input[type=checkbox]')].filter((c) => c.checked).map((c) => c.value)
}

/** `datetime-local` value (read as UTC) → ISO 8601 with Z, or undefined when empty. */
export function utcParam(input: HTMLInputElement): string | undefined {
  if (input.value === '') return undefined
  const withSeconds = input.value.length === 16 ? `${input.value}:00` : input.value
  return `${withSeconds}Z`
}

/** The chosen time range as `from` / `to` and, when `withTypes`, the chosen types as repeated `object_type` (only when some are left out: all is the default). */
export function windowParams(withTypes: boolean): URLSearchParams {
  const params = new URLSearchParams()
  const selected = selectedTypes()
  if (withTypes && selected.length < allTypes.length) for (const t of selected) params.append('object_type', t)
  const from = utcParam(ui.from)
  const to = utcParam(ui.to)
  if (from !== undefined) params.set('from', from)
  if (to !== undefined) params.set('to', to)
  return params
}

/** `windowParams(withTypes)` with `extra` set, as a query string (`?…`, or empty). */
export function windowQuery(withTypes: boolean, extra: Record<string, string> = {}): string {
  const params = windowParams(withTypes)
  for (const [k, v] of Object.entries(extra)) params.set(k, v)
  const query = params.toString()
  return query === '' ? '' : `?${query}`
}

/** Empties `panels` and says why when no object type is chosen. @returns whether none is. */
export function noTypeChosen(...panels: HTMLElement[]): boolean {
  if (selectedTypes().length > 0) return false
  for (const p of panels) p.replaceChildren()
  setStatus('Choose at least one object type.')
  return true
}

/** `<option>`s of `values` for a select. */
export function options(values: readonly string[]): HTMLOptionElement[] {
  return values.map((v) => {
    const option = document.createElement('option')
    option.value = v
    option.textContent = v
    return option
  })
}
