/**
 * The process map tab: the map of the chosen object types and time range from
 * `GET /v1/process/map`, drawn with Graphviz, with its legend; below it "Where it waits"
 * (`GET /v1/process/performance`) and the main paths of one object type (`GET /v1/process/variants`;
 * docs/analysis.md). README § The web page.
 */
import type { PerformanceResponse, VariantsResponse } from '../src/schemas/analysis.js'
import type { ProcessMapResponse } from '../src/schemas/process.js'
import { getJson } from './api.js'
import { type EdgeMeasure, formatCount, formatDuration, processMapDot } from './dot.js'
import { colourOf, drawInto, noTypeChosen, report, selectedTypes, setStatus, ui, windowParams, windowQuery } from './page.js'
import { pathText } from './variant-path.js'

let lastMap: ProcessMapResponse | null = null

/** Forgets the map drawn last (after the key is forgotten). */
export function forgetMap(): void {
  lastMap = null
}

function showLegend(map: ProcessMapResponse, selected: string[]): void {
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

/** Fills "Where it waits" from `GET /v1/process/performance` (chosen types and window), slowest activities first. */
async function showWaits(): Promise<void> {
  const params = windowParams(true)
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

/** Fills "Main paths" from `GET /v1/process/variants` for the chosen type (window of the map): the 10 most frequent, long paths cut. */
export async function showMainPaths(): Promise<void> {
  const type = ui.pathsType.value
  if (type === '') return
  const params = windowParams(false)
  params.set('object_type', type)
  params.set('limit', '10')
  const page = await getJson<VariantsResponse>(`/v1/process/variants?${params.toString()}`)
  const rows = page.variants.map((v) =>
    row([formatCount(v.objects), `${(v.share * 100).toFixed(1)}%`, formatDuration(v.duration.median), pathText(v.activities)]),
  )
  if (page.truncated) rows.push(row(['…', '', '', `${formatCount(page.total - page.variants.length)} more variants`]))
  ui.variants.tBodies[0]?.replaceChildren(...rows)
}

/** Draws the last fetched map with the chosen edge labels (no request). */
export async function renderMap(): Promise<void> {
  const map = lastMap
  if (map === null) return
  // The map answers only types with events in the window.
  const selected = selectedTypes().filter((t) => map.object_types.some((m) => m.object_type === t))
  if (selected.length === 0) {
    ui.graph.replaceChildren()
    ui.legend.replaceChildren()
    setStatus('No events of the chosen object types in this time range.')
    return
  }
  await drawInto(ui.graph, processMapDot(map, ui.measure.value as EdgeMeasure, selected, colourOf))
  showLegend(map, selected)
  const activities = new Set(map.object_types.filter((t) => selected.includes(t.object_type)).flatMap((t) => t.activities.map((a) => a.activity)))
  setStatus(
    `Dataset ${map.dataset_id}, as of log position ${formatCount(map.as_of)}: ${String(activities.size)} activities across ${String(selected.length)} object type(s).`,
  )
}

/** Fetches the map for the chosen types and window and draws it, then the tables below it (shown while `stillMap()`). */
export async function drawMap(stillMap: () => boolean): Promise<void> {
  if (noTypeChosen(ui.graph, ui.legend)) return
  setStatus('Computing the process map…')
  try {
    lastMap = await getJson<ProcessMapResponse>(`/v1/process/map${windowQuery(true)}`)
    await renderMap()
    await Promise.all([showWaits(), showMainPaths()])
    ui.analysis.hidden = !stillMap()
  } catch (error) {
    report(error)
  }
}
