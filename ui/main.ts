/**
 * The `/ui/` page: asks for an API key (kept in this tab's sessionStorage only, sent as a Bearer
 * header to this server only: api.ts), shows the dataset summary and the chosen view, and keeps
 * the view in the URL hash (url-state.ts) so that it can be linked and bookmarked. The views, as
 * tabs, each fetch and draw in their own module: the process map (map-tab.ts), performance
 * (perf-tab.ts), variants (variants-tab.ts), compare (compare-tab.ts) and one object
 * (object-tab.ts). README § The web page.
 */
import type { SummaryResponse } from '../src/schemas/process.js'
import { getJson, hasKey, RequestFailed, setKey } from './api.js'
import { drawCompare } from './compare-tab.js'
import { drawMap, forgetMap, renderMap, showMainPaths } from './map-tab.js'
import { drawObject } from './object-tab.js'
import { knownTypes, report, selectedTypes, setKnownTypes, setStatus, ui } from './page.js'
import { drawPerformance } from './perf-tab.js'
import { showSummary, showTypes } from './summary.js'
import { formatHash, parseHash, type View, VIEWS, type ViewState } from './url-state.js'
import { drawVariants, forgetVariants } from './variants-tab.js'

let view: View = 'map'
/** The view to return to from the object view. */
let previousView: View = 'map'
/** The object shown in the object view. */
let objectShown: { type: string; id: string } | null = null
/** The hash the page wrote last (a hashchange to it is the page's own). */
let lastHash = ''

const MEASURES = ['frequency', 'waiting', 'elapsed']
const windows = [ui.from, ui.to, ui.aFrom, ui.aTo, ui.bFrom, ui.bTo]

/** The view and its settings as shown, for the URL hash: only what the view uses and what differs from the defaults. */
function currentState(): ViewState {
  const selected = selectedTypes()
  const on = (v: View, value: string) => (view === v ? value : '')
  // The type selects start at the first type.
  const chosen = (v: View, value: string) => on(v, value === knownTypes()[0] ? '' : value)
  return {
    view,
    object: view === 'object' ? objectShown : null,
    types: selected.length === knownTypes().length ? null : selected,
    from: ui.from.value,
    to: ui.to.value,
    measure: ui.measure.value === 'frequency' ? '' : ui.measure.value,
    pathsType: chosen('map', ui.pathsType.value),
    variantType: chosen('variants', ui.variantType.value),
    aFrom: on('compare', ui.aFrom.value),
    aTo: on('compare', ui.aTo.value),
    bFrom: on('compare', ui.bFrom.value),
    bTo: on('compare', ui.bTo.value),
  }
}

/** Writes the current state into the URL hash: a new history entry when `push` (a view changed), else in place. */
function writeHash(push: boolean): void {
  if (!hasKey()) return
  const hash = formatHash(currentState())
  lastHash = hash
  if (hash === location.hash) return
  const url = `${location.pathname}${location.search}${hash}`
  if (push) history.pushState(null, '', url)
  else history.replaceState(null, '', url)
}

/** Sets the controls from a parsed hash (unknown types and measures are ignored; empty compare windows keep the defaults). */
function applyState(s: ViewState): void {
  for (const box of ui.types.querySelectorAll<HTMLInputElement>('input[type=checkbox]')) box.checked = s.types === null || s.types.includes(box.value)
  ui.from.value = s.from
  ui.to.value = s.to
  ui.measure.value = MEASURES.includes(s.measure) ? s.measure : 'frequency'
  if (knownTypes().includes(s.pathsType)) ui.pathsType.value = s.pathsType
  if (knownTypes().includes(s.variantType)) ui.variantType.value = s.variantType
  for (const [input, value] of [
    [ui.aFrom, s.aFrom],
    [ui.aTo, s.aTo],
    [ui.bFrom, s.bFrom],
    [ui.bTo, s.bTo],
  ] as const)
    if (value !== '') input.value = value
}

/** Shows view `next` (hiding the others), records it in the URL (a new entry when `push`) and loads its data. */
async function show(next: View, object: { type: string; id: string } | null = null, push = false): Promise<void> {
  if (next !== 'object') previousView = next
  view = next === 'object' && object === null ? previousView : next
  objectShown = view === 'object' ? object : null
  // The tables below the map belong to the map view.
  if (view !== 'map') ui.analysis.hidden = true
  for (const v of VIEWS) {
    const section = document.getElementById(`view-${v}`)
    if (section !== null) section.hidden = v !== view
  }
  for (const b of ui.tabs.querySelectorAll<HTMLButtonElement>('button[data-view]')) b.classList.toggle('active', b.dataset.view === view)
  writeHash(push)
  await refresh()
}

/** Reloads the current view (after the types or the window changed). */
async function refresh(): Promise<void> {
  switch (view) {
    case 'map':
      return drawMap(() => view === 'map')
    case 'performance':
      return drawPerformance()
    case 'variants':
      return drawVariants()
    case 'compare':
      return drawCompare()
    case 'object':
      if (objectShown !== null) return drawObject(objectShown.type, objectShown.id)
  }
}

/** A handler for a changed setting: records it in the URL, then runs `then`. */
function changed(then: () => Promise<void>): () => void {
  return () => {
    writeHash(false)
    void then().catch(report)
  }
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
    showTypes(
      types.object_types.map((t) => t.name),
      changed(refresh),
    )
    const { state } = parseHash(location.hash)
    applyState(state)
    await show(state.view, state.object)
  } catch (error) {
    if (error instanceof RequestFailed && (error.status === 401 || error.status === 403)) {
      setKey(null)
      ui.forget.hidden = true
    }
    report(error)
  }
}

/** Forgets the key and empties every view, so nothing of the dataset stays on the page (nor in the URL). */
function forget(): void {
  setKey(null)
  forgetMap()
  forgetVariants()
  setKnownTypes([])
  for (const node of [
    ui.summary,
    ui.types,
    ui.legend,
    ui.graph,
    ui.perfLegend,
    ui.perfGraph,
    ui.perfTable,
    ui.variantsHead,
    ui.variantsTable,
    ui.object,
    ui.compare,
  ])
    node.replaceChildren()
  for (const select of [ui.variantType, ui.pathsType]) select.replaceChildren()
  for (const body of [ui.waits.tBodies[0], ui.variants.tBodies[0]]) body?.replaceChildren()
  for (const input of windows) {
    input.value = ''
    input.placeholder = ''
  }
  for (const hidden of [ui.forget, ui.summary, ui.controls, ui.tabs, ui.analysis, ui.variantsMore]) hidden.hidden = true
  for (const v of VIEWS) {
    const section = document.getElementById(`view-${v}`)
    if (section !== null) section.hidden = true
  }
  view = 'map'
  previousView = 'map'
  objectShown = null
  lastHash = ''
  history.replaceState(null, '', `${location.pathname}${location.search}`)
  setStatus('Key forgotten. Paste an API key to continue.')
}

/** The URL changed (an object link, the back button, an edited hash): shows what it names. */
function followLocation(): void {
  if (!hasKey() || knownTypes().length === 0 || location.hash === lastHash) return
  const { state, settings } = parseHash(location.hash)
  // A bare link (`#object/<type>/<id>`) keeps the chosen settings.
  if (settings) applyState(state)
  void show(state.view, state.object)
}

ui.keyForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const key = ui.key.value.trim()
  if (key === '') return
  // Another key: nothing of the previous dataset stays.
  if (hasKey()) forget()
  setKey(key)
  ui.key.value = ''
  void connect()
})
ui.forget.addEventListener('click', forget)
ui.measure.addEventListener('change', changed(renderMap))
ui.pathsType.addEventListener('change', changed(showMainPaths))
ui.apply.addEventListener('click', changed(refresh))
ui.reset.addEventListener('click', () => {
  ui.from.value = ''
  ui.to.value = ''
  changed(refresh)()
})
for (const b of ui.tabs.querySelectorAll<HTMLButtonElement>('button[data-view]')) {
  b.addEventListener('click', () => {
    const next = VIEWS.find((v) => v === b.dataset.view)
    if (next !== undefined) void show(next, null, true)
  })
}
ui.variantType.addEventListener(
  'change',
  changed(() => drawVariants()),
)
ui.compareRun.addEventListener('click', changed(drawCompare))
ui.variantsMore.addEventListener('click', () => void drawVariants(true))
window.addEventListener('hashchange', followLocation)
window.addEventListener('popstate', followLocation)
ui.objectBack.addEventListener('click', () => void show(previousView, null, true))

if (hasKey()) void connect()
