/**
 * The `/ui/` page: asks for an API key (kept in this tab's sessionStorage only, sent as a Bearer
 * header to this server only), shows the dataset summary from `GET /v1/process/summary`, draws
 * the process map from `GET /v1/process/map` with Graphviz compiled to WebAssembly, and below it
 * where the process waits (`GET /v1/process/performance`) and the main paths of one object type
 * (`GET /v1/process/variants`; docs/analysis.md). Its other views, as tabs: performance
 * (performance.ts), variants (variants.ts), compare (compare.ts) and one object (object-view.ts).
 */
import type { CompareResponse, PerformanceResponse, VariantsResponse } from '../src/schemas/analysis.js'
import type { Problem } from '../src/schemas/api.js'
import type { ObjectResponse, ProcessMapResponse, SummaryResponse } from '../src/schemas/process.js'
import { comparePanel, splitSpan } from './compare.js'
import { parseObjectHash } from './dom.js'
import { type EdgeMeasure, formatCount, formatDuration, processMapDot, typeColour } from './dot.js'
import { objectPanel } from './object-view.js'
import { performanceTable, sojournLegend, sojournLooks } from './performance.js'
import { appendPage, variantsHeadline, variantsTable } from './variants.js'
import { Graphviz } from './vendor/graphviz.js'

const KEY_STORAGE = 'ocelog.apiKey'

function element<T extends HTMLElement>(id: string, kind: new () => T): T {
  const found = document.getElementById(id)
  if (!(found instanceof kind)) throw new Error(`the page has no #${id}`)
  return found
}

const ui = {
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

/** The page's views: each is a section `#view-<name>`; `object` is opened by `#object/<type>/<id>` links. */
type View = 'map' | 'performance' | 'variants' | 'compare' | 'object'
const VIEWS: readonly View[] = ['map', 'performance', 'variants', 'compare', 'object']
let view: View = 'map'
/** The view to return to from the object view. */
let previousView: Exclude<View, 'object'> = 'map'

/** A failed request, with the problem's detail when the server sent one. */
class RequestFailed extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail)
  }
}

let apiKey: string | null = sessionStorage.getItem(KEY_STORAGE)
let allTypes: string[] = []
let lastMap: ProcessMapResponse | null = null
const graphviz = Graphviz.load()

function setStatus(text: string, error = false): void {
  ui.status.textContent = text
  ui.status.classList.toggle('error', error)
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'detail' in value && typeof value.detail === 'string'
}

async function getJson<T>(path: string): Promise<T> {
  if (apiKey === null) throw new RequestFailed(401, 'no API key')
  const res = await fetch(path, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' } })
  const body: unknown = await res.json().catch(() => null)
  if (!res.ok) throw new RequestFailed(res.status, isProblem(body) ? body.detail : `${path} answered ${String(res.status)}`)
  return body as T
}

/** `datetime-local` value (read as UTC) → ISO 8601 with Z, or undefined when empty. */
function utcParam(input: HTMLInputElement): string | undefined {
  if (input.value === '') return undefined
  const withSeconds = input.value.length === 16 ? `${input.value}:00` : input.value
  return `${withSeconds}Z`
}

/** ISO 8601 date-time → `datetime-local` value in UTC (to the second). */
function localValue(iso: string | null): string {
  return iso === null ? '' : iso.slice(0, 19)
}

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

function showSummary(s: SummaryResponse): void {
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
  if (ui.from.value === '' && ui.to.value === '') {
    ui.from.placeholder = localValue(s.first_event_time)
    ui.to.placeholder = localValue(s.last_event_time)
  }
}

function selectedTypes(): string[] {
  return [...ui.types.querySelectorAll<HTMLInputElement>('input[type=checkbox]')].filter((c) => c.checked).map((c) => c.value)
}

function showTypes(types: string[]): void {
  allTypes = types
  ui.types.replaceChildren(
    ...types.map((t, i) => {
      const label = document.createElement('label')
      label.className = 'chip'
      const box = document.createElement('input')
      box.type = 'checkbox'
      box.value = t
      box.checked = true
      box.addEventListener('change', () => void refresh())
      const dot = document.createElement('span')
      dot.className = 'dot'
      dot.style.background = typeColour(i)
      label.append(box, dot, document.createTextNode(t))
      return label
    }),
  )
  ui.variantType.replaceChildren(
    ...types.map((t) => {
      const option = document.createElement('option')
      option.value = t
      option.textContent = t
      return option
    }),
  )
  ui.controls.hidden = false
  ui.tabs.hidden = false
}

function showLegend(map: ProcessMapResponse, selected: string[], colourOf: (type: string) => string): void {
  ui.legend.replaceChildren(
    ...map.object_types
      .filter((t) => selected.includes(t.object_type))
      .map(({ object_type: t, objects }) => {
        const span = document.createElement('span')
        const line = document.createElement('i')
        line.style.background = colourOf(t)
        span.append(line, document.createTextNode(`${t} (${formatCount(objects)} ${objects === 1 ? 'object' : 'objects'})`))
        return span
      }),
  )
}

/** The query of the chosen window (`from`, `to`) and, when `withTypes`, the chosen object types. */
function windowQuery(withTypes: boolean, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams()
  // Every type is the endpoints' default; name them only when some are left out.
  const selected = selectedTypes()
  if (withTypes && selected.length < allTypes.length) for (const t of selected) params.append('object_type', t)
  const from = utcParam(ui.from)
  const to = utcParam(ui.to)
  if (from !== undefined) params.set('from', from)
  if (to !== undefined) params.set('to', to)
  for (const [k, v] of Object.entries(extra)) params.set(k, v)
  const query = params.toString()
  return query === '' ? '' : `?${query}`
}

/** Empties `panels` and says why when no object type is chosen. @returns whether none is. */
function noTypeChosen(...panels: HTMLElement[]): boolean {
  if (selectedTypes().length > 0) return false
  for (const p of panels) p.replaceChildren()
  setStatus('Choose at least one object type.')
  return true
}

/** Fetches the map for the chosen types and window, and draws it. */
async function drawMap(): Promise<void> {
  if (noTypeChosen(ui.graph, ui.legend)) return
  setStatus('Computing the process map…')
  try {
    lastMap = await getJson<ProcessMapResponse>(`/v1/process/map${windowQuery(true)}`)
    await render()
    await showAnalysis()
  } catch (error) {
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

/** A table row of text cells. */
function row(cells: string[]): HTMLTableRowElement {
  const tr = document.createElement('tr')
  for (const text of cells) {
    const td = document.createElement('td')
    td.textContent = text
    tr.append(td)
  }
  return tr
}

/** The window and types of the map as query parameters (types only when some are left out). */
function windowParams(): URLSearchParams {
  const params = new URLSearchParams()
  const from = utcParam(ui.from)
  const to = utcParam(ui.to)
  if (from !== undefined) params.set('from', from)
  if (to !== undefined) params.set('to', to)
  return params
}

/** Fills "Where it waits" from `GET /v1/process/performance` (chosen types and window), slowest activities first. */
async function showWaits(): Promise<void> {
  const params = windowParams()
  const selected = selectedTypes()
  if (selected.length < allTypes.length) for (const t of selected) params.append('object_type', t)
  params.set('slowest', '1')
  const perf = await getJson<PerformanceResponse>(`/v1/process/performance?${params.toString()}`)
  const rows = [...perf.activities]
    .sort((a, b) => (b.sojourn?.median ?? -1) - (a.sojourn?.median ?? -1))
    .map((a) => {
      const delaying = [...a.object_types].sort((x, y) => y.delaying - x.delaying)[0]
      const slow = a.slowest[0]
      return row([
        a.activity,
        formatCount(a.events),
        a.sojourn === null ? '–' : formatDuration(a.sojourn.median),
        a.synchronization === null ? '–' : formatDuration(a.synchronization.median),
        delaying === undefined || delaying.delaying === 0 ? '–' : `${delaying.object_type} (${formatCount(delaying.delaying)}×)`,
        slow === undefined
          ? '–'
          : `${formatDuration(slow.sojourn)} at ${slow.timestamp.slice(0, 19)}Z, waiting for ${slow.delaying_object.type} ${slow.delaying_object.id}`,
      ])
    })
  ui.waits.tBodies[0]?.replaceChildren(...rows)
}

/** Fills "Main paths" from `GET /v1/process/variants` for the chosen type (window of the map): the 10 most frequent. */
async function showVariants(): Promise<void> {
  const type = ui.pathsType.value
  if (type === '') return
  const params = windowParams()
  params.set('object_type', type)
  params.set('limit', '10')
  const page = await getJson<VariantsResponse>(`/v1/process/variants?${params.toString()}`)
  const rows = page.variants.map((v) =>
    row([formatCount(v.objects), `${(v.share * 100).toFixed(1)}%`, formatDuration(v.duration.median), v.activities.join(' → ')]),
  )
  if (page.truncated) rows.push(row(['…', '', '', `${formatCount(page.total - page.variants.length)} more variants`]))
  ui.variants.tBodies[0]?.replaceChildren(...rows)
}

/** Both analysis tables; a failure shows in the status line. */
async function showAnalysis(): Promise<void> {
  try {
    await Promise.all([showWaits(), showVariants()])
    ui.analysis.hidden = view !== 'map'
  } catch (error) {
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

/** Draws DOT source into `container` with Graphviz, scaled to the panel's width (never above its natural size). */
async function drawInto(container: HTMLElement, dot: string): Promise<void> {
  container.innerHTML = (await graphviz).dot(dot)
  const drawn = container.querySelector('svg')
  if (drawn !== null) {
    const natural = drawn.getAttribute('width')
    drawn.removeAttribute('width')
    drawn.removeAttribute('height')
    drawn.style.width = '100%'
    if (natural !== null) drawn.style.maxWidth = natural
  }
}

/** Fetches the map and the performance of the chosen types and window, and draws the map coloured by median sojourn with the table below. */
async function drawPerformance(): Promise<void> {
  if (noTypeChosen(ui.perfGraph, ui.perfTable, ui.perfLegend)) return
  const selected = selectedTypes()
  setStatus('Computing the performance…')
  try {
    const [map, perf] = await Promise.all([
      getJson<ProcessMapResponse>(`/v1/process/map${windowQuery(true)}`),
      getJson<PerformanceResponse>(`/v1/process/performance${windowQuery(true)}`),
    ])
    const shown = selected.filter((t) => map.object_types.some((m) => m.object_type === t))
    const colourOf = (type: string) => typeColour(Math.max(0, allTypes.indexOf(type)))
    if (shown.length === 0) {
      ui.perfGraph.replaceChildren()
      ui.perfTable.replaceChildren()
      ui.perfLegend.replaceChildren()
      setStatus('No events of the chosen object types in this time range.')
      return
    }
    await drawInto(ui.perfGraph, processMapDot(map, 'frequency', shown, colourOf, sojournLooks(perf)))
    ui.perfLegend.replaceChildren(sojournLegend(perf))
    ui.perfTable.replaceChildren(performanceTable(perf))
    const measured = perf.activities.reduce((n, a) => n + a.events_with_predecessors, 0)
    setStatus(
      `Dataset ${perf.dataset_id}, as of log position ${formatCount(perf.as_of)}: ${String(perf.activities.length)} activities, ${formatCount(measured)} events with a predecessor measured.`,
    )
  } catch (error) {
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

let shownVariants: VariantsResponse | null = null

/** Fetches the first page of variants of the chosen object type (or the next page when `more`) and shows them. */
async function drawVariants(more = false): Promise<void> {
  const type = ui.variantType.value
  if (type === '') return
  const cursor = more ? shownVariants?.next_cursor : null
  setStatus(`Grouping the traces of ${type}…`)
  try {
    const page = await getJson<VariantsResponse>(
      `/v1/process/variants${windowQuery(false, { object_type: type, limit: '50', ...(cursor == null ? {} : { cursor }) })}`,
    )
    const first = more && shownVariants !== null ? shownVariants.variants.length + 1 : 1
    shownVariants = more ? appendPage(shownVariants, page) : page
    const table = variantsTable(type, page.variants, first)
    if (more) ui.variantsTable.querySelector('tbody')?.append(...(table.tBodies[0]?.rows ?? []))
    else ui.variantsTable.replaceChildren(table)
    ui.variantsHead.textContent = variantsHeadline(type, page.objects, page.total, shownVariants.variants.length)
    ui.variantsMore.hidden = !page.truncated
    setStatus(`Dataset ${page.dataset_id}, as of log position ${formatCount(page.as_of)}.`)
  } catch (error) {
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

/** Fetches one object and shows it. */
async function drawObject(type: string, id: string): Promise<void> {
  setStatus(`Looking up ${type} ${id}…`)
  try {
    const o = await getJson<ObjectResponse>(`/v1/process/objects/${encodeURIComponent(type)}/${encodeURIComponent(id)}`)
    ui.object.replaceChildren(objectPanel(o))
    setStatus(`Dataset ${o.dataset_id}, as of log position ${formatCount(o.as_of)}.`)
  } catch (error) {
    ui.object.replaceChildren()
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

/** Fetches the comparison of window a and window b for the chosen types, and shows it. */
async function drawCompare(): Promise<void> {
  if (noTypeChosen(ui.compare)) return
  const params = new URLSearchParams()
  const selected = selectedTypes()
  if (selected.length < allTypes.length) for (const t of selected) params.append('object_type', t)
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
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

/** Shows view `next` (hiding the others) and loads its data. */
async function show(next: View): Promise<void> {
  if (next !== 'object') previousView = next
  view = next
  // The tables below the map belong to the map view.
  if (next !== 'map') ui.analysis.hidden = true
  for (const v of VIEWS) {
    const section = document.getElementById(`view-${v}`)
    if (section !== null) section.hidden = v !== next
  }
  for (const b of ui.tabs.querySelectorAll<HTMLButtonElement>('button[data-view]')) b.classList.toggle('active', b.dataset.view === next)
  await refresh()
}

/** Reloads the current view (after the types or the window changed). */
async function refresh(): Promise<void> {
  switch (view) {
    case 'map':
      return drawMap()
    case 'performance':
      return drawPerformance()
    case 'variants':
      return drawVariants()
    case 'compare':
      return drawCompare()
    case 'object': {
      const target = parseObjectHash(location.hash)
      if (target !== null) return drawObject(target.type, target.id)
    }
  }
}

/** Draws `lastMap` with the chosen edge labels (no request). */
async function render(): Promise<void> {
  const map = lastMap
  if (map === null) return
  // The map answers only types with events in the window; colours follow the full list of types.
  const colourOf = (type: string) => typeColour(Math.max(0, allTypes.indexOf(type)))
  const selected = selectedTypes().filter((t) => map.object_types.some((m) => m.object_type === t))
  if (selected.length === 0) {
    ui.graph.replaceChildren()
    ui.legend.replaceChildren()
    setStatus('No events of the chosen object types in this time range.')
    return
  }
  await drawInto(ui.graph, processMapDot(map, ui.measure.value as EdgeMeasure, selected, colourOf))
  showLegend(map, selected, colourOf)
  const activities = new Set(map.object_types.filter((t) => selected.includes(t.object_type)).flatMap((t) => t.activities.map((a) => a.activity)))
  setStatus(
    `Dataset ${map.dataset_id}, as of log position ${formatCount(map.as_of)}: ${String(activities.size)} activities across ${String(selected.length)} object type(s).`,
  )
}

async function connect(): Promise<void> {
  setStatus('Loading the dataset…')
  try {
    const [summary, types] = await Promise.all([
      getJson<SummaryResponse>('/v1/process/summary'),
      getJson<{ object_types: { name: string }[] }>('/v1/process/object-types'),
    ])
    ui.forget.hidden = false
    showSummary(summary)
    showTypes(types.object_types.map((t) => t.name))
    ui.pathsType.replaceChildren(
      ...types.object_types.map((t) => {
        const option = document.createElement('option')
        option.value = t.name
        option.textContent = t.name
        return option
      }),
    )
    await show(parseObjectHash(location.hash) === null ? view : 'object')
  } catch (error) {
    if (error instanceof RequestFailed && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(KEY_STORAGE)
      apiKey = null
      ui.forget.hidden = true
    }
    setStatus(error instanceof Error ? error.message : String(error), true)
  }
}

ui.keyForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const key = ui.key.value.trim()
  if (key === '') return
  apiKey = key
  sessionStorage.setItem(KEY_STORAGE, key)
  ui.key.value = ''
  void connect()
})

ui.forget.addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE)
  apiKey = null
  lastMap = null
  ui.forget.hidden = true
  ui.summary.hidden = true
  ui.controls.hidden = true
  ui.tabs.hidden = true
  ui.graph.replaceChildren()
  ui.legend.replaceChildren()
  ui.analysis.hidden = true
  setStatus('Key forgotten. Paste an API key to continue.')
})

ui.measure.addEventListener('change', () => void render())
ui.pathsType.addEventListener(
  'change',
  () => void showVariants().catch((error: unknown) => setStatus(error instanceof Error ? error.message : String(error), true)),
)
ui.apply.addEventListener('click', () => void refresh())
ui.reset.addEventListener('click', () => {
  ui.from.value = ''
  ui.to.value = ''
  void refresh()
})
for (const b of ui.tabs.querySelectorAll<HTMLButtonElement>('button[data-view]')) {
  b.addEventListener('click', () => {
    const next = VIEWS.find((v) => v === b.dataset.view)
    if (next !== undefined) void show(next)
  })
}
ui.variantType.addEventListener('change', () => void drawVariants())
ui.compareRun.addEventListener('click', () => void drawCompare())
ui.variantsMore.addEventListener('click', () => void drawVariants(true))
window.addEventListener('hashchange', () => {
  if (apiKey === null) return
  if (parseObjectHash(location.hash) !== null) void show('object')
  else if (view === 'object') void show(previousView)
})
ui.objectBack.addEventListener('click', () => {
  history.pushState(null, '', location.pathname)
  void show(previousView)
})

if (apiKey !== null) void connect()
