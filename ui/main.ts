/**
 * The `/ui/` page: asks for an API key (kept in this tab's sessionStorage only, sent as a Bearer
 * header to this server only), shows the dataset summary from `GET /v1/process/summary`, draws
 * the process map from `GET /v1/process/map` with Graphviz compiled to WebAssembly, and below it
 * where the process waits (`GET /v1/process/performance`) and the main paths of one object type
 * (`GET /v1/process/variants`; docs/analysis.md).
 */
import type { Problem } from '../src/schemas/api.js'
import type { PerformanceResponse, VariantsResponse } from '../src/schemas/analysis.js'
import type { ProcessMapResponse, SummaryResponse } from '../src/schemas/process.js'
import { type EdgeMeasure, formatCount, formatDuration, processMapDot, typeColour } from './dot.js'
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
  analysis: element('analysis', HTMLElement),
  waits: element('waits', HTMLTableElement),
  variants: element('variants', HTMLTableElement),
  variantType: element('variant-type', HTMLSelectElement),
}

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
      box.addEventListener('change', () => void drawMap())
      const dot = document.createElement('span')
      dot.className = 'dot'
      dot.style.background = typeColour(i)
      label.append(box, dot, document.createTextNode(t))
      return label
    }),
  )
  ui.controls.hidden = false
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

/** Fetches the map for the chosen types and window, and draws it. */
async function drawMap(): Promise<void> {
  const selected = selectedTypes()
  if (selected.length === 0) {
    ui.graph.replaceChildren()
    ui.legend.replaceChildren()
    setStatus('Choose at least one object type.')
    return
  }
  const params = new URLSearchParams()
  // Every type is the endpoint's default; name them only when some are left out.
  if (selected.length < allTypes.length) for (const t of selected) params.append('object_type', t)
  const from = utcParam(ui.from)
  const to = utcParam(ui.to)
  if (from !== undefined) params.set('from', from)
  if (to !== undefined) params.set('to', to)
  setStatus('Computing the process map…')
  try {
    const query = params.toString()
    lastMap = await getJson<ProcessMapResponse>(`/v1/process/map${query === '' ? '' : `?${query}`}`)
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
  const type = ui.variantType.value
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
    ui.analysis.hidden = false
  } catch (error) {
    setStatus(error instanceof Error ? error.message : String(error), true)
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
  const dot = processMapDot(map, ui.measure.value as EdgeMeasure, selected, colourOf)
  const svg = (await graphviz).dot(dot)
  ui.graph.innerHTML = svg
  // Scale the drawing to the panel's width (never above its natural size), keeping its aspect ratio.
  const drawn = ui.graph.querySelector('svg')
  if (drawn !== null) {
    const natural = drawn.getAttribute('width')
    drawn.removeAttribute('width')
    drawn.removeAttribute('height')
    drawn.style.width = '100%'
    if (natural !== null) drawn.style.maxWidth = natural
  }
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
    ui.variantType.replaceChildren(
      ...types.object_types.map((t) => {
        const option = document.createElement('option')
        option.value = t.name
        option.textContent = t.name
        return option
      }),
    )
    await drawMap()
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
  ui.graph.replaceChildren()
  ui.legend.replaceChildren()
  ui.analysis.hidden = true
  setStatus('Key forgotten. Paste an API key to continue.')
})

ui.measure.addEventListener('change', () => void render())
ui.variantType.addEventListener(
  'change',
  () => void showVariants().catch((error: unknown) => setStatus(error instanceof Error ? error.message : String(error), true)),
)
ui.apply.addEventListener('click', () => void drawMap())
ui.reset.addEventListener('click', () => {
  ui.from.value = ''
  ui.to.value = ''
  void drawMap()
})

if (apiKey !== null) void connect()
