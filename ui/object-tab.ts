/**
 * The object view (`#object/<type>/<id>`): one object from `GET /v1/process/objects/{type}/{id}`
 * (docs/api.md), built by object-view.ts. README § The web page.
 */
import type { ObjectResponse } from '../src/schemas/process.js'
import { getJson } from './api.js'
import { formatCount } from './dot.js'
import { objectPanel } from './object-view.js'
import { report, setStatus, ui } from './page.js'

/** Fetches one object and shows it. */
export async function drawObject(type: string, id: string): Promise<void> {
  setStatus(`Looking up ${type} ${id}…`)
  try {
    const o = await getJson<ObjectResponse>(`/v1/process/objects/${encodeURIComponent(type)}/${encodeURIComponent(id)}`)
    ui.object.replaceChildren(objectPanel(o))
    setStatus(`Dataset ${o.dataset_id}, as of log position ${formatCount(o.as_of)}.`)
  } catch (error) {
    ui.object.replaceChildren()
    report(error)
  }
}
