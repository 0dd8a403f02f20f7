/**
 * The variants tab: the trace variants of the chosen object type over the chosen time range from
 * `GET /v1/process/variants`, 50 a page, "More variants" for the next page (docs/analysis.md). The
 * table is built by variants.ts. README § The web page.
 */
import type { VariantsResponse } from '../src/schemas/analysis.js'
import { getJson } from './api.js'
import { formatCount } from './dot.js'
import { report, setStatus, ui, windowQuery } from './page.js'
import { appendPage, variantsHeadline, variantsTable } from './variants.js'

let shownVariants: VariantsResponse | null = null

/** Forgets the variants shown (after the key is forgotten). */
export function forgetVariants(): void {
  shownVariants = null
}

/** Fetches the first page of variants of the chosen object type (or the next page when `more`) and shows them. */
export async function drawVariants(more = false): Promise<void> {
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
    report(error)
  }
}
