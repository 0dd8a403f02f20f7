/**
 * The performance tab: the map of the chosen types and time range with each activity filled by its
 * median sojourn, and the table of activities (`GET /v1/process/map` and `GET /v1/process/performance`;
 * docs/analysis.md). The pictures are built by performance.ts. README § The web page.
 */
import type { PerformanceResponse } from '../src/schemas/analysis.js'
import type { ProcessMapResponse } from '../src/schemas/process.js'
import { getJson } from './api.js'
import { formatCount, processMapDot } from './dot.js'
import { colourOf, drawInto, noTypeChosen, report, selectedTypes, setStatus, ui, windowQuery } from './page.js'
import { performanceTable, sojournLegend, sojournLooks } from './performance.js'

/** Fetches the map and the performance of the chosen types and window, and draws the map coloured by median sojourn with the table below. */
export async function drawPerformance(): Promise<void> {
  if (noTypeChosen(ui.perfGraph, ui.perfTable, ui.perfLegend)) return
  const selected = selectedTypes()
  setStatus('Computing the performance…')
  try {
    const [map, perf] = await Promise.all([
      getJson<ProcessMapResponse>(`/v1/process/map${windowQuery(true)}`),
      getJson<PerformanceResponse>(`/v1/process/performance${windowQuery(true)}`),
    ])
    const shown = selected.filter((t) => map.object_types.some((m) => m.object_type === t))
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
    report(error)
  }
}
