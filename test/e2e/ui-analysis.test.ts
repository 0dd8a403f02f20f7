/**
 * e2e: the analysis views of the `/ui/` page of the built service in chromium (playwright-core):
 * performance (activities coloured by median sojourn, the delaying object type, the slowest events
 * linking to the object view), variants of a chosen object type, and the object view. Values come
 * from test/helpers/read-dataset.ts, computed by hand in each test. Screenshots go to
 * /tmp/ui-shots/ (test/helpers/browser.ts SHOTS). Skipped, with the reason printed, without /usr/bin/chromium.
 */
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { DRAWN, HAVE_CHROMIUM, openUi, SHOTS, svgTexts, tableRows, uiSuite } from '../helpers/browser.js'
import type { PerformanceResponse, VariantsResponse } from '../../src/schemas/analysis.js'
import { formatCount, formatDuration } from '../../ui/dot.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { waitForEvents } from '../helpers/read-dataset.js'

const suite = uiSuite('ui-analysis')

describe.skipIf(!HAVE_CHROMIUM)('/ui/ performance view', () => {
  it('colours activities by median sojourn, names the delaying object type, and links the slowest events to their delaying object', async () => {
    const page = await openUi(suite.browser, suite.service.url, suite.key)
    await page.click('button[data-view=performance]')
    await page.waitForSelector('#perf-graph svg', DRAWN)
    // Cancel Order o3 at 15:00 after Create at 09:00: 6 h. Pay Order: o1 waits 10:10 → 11:00 (50 min),
    // o2 09:00 → 10:00 (60 min): median 55 min. Ship Order 12:00 waits for Pay o1's end 11:05 (55 min)
    // rather than item i1's Create end 10:10, so order holds the delaying object.
    const texts = await svgTexts(page, '#perf-graph')
    expect(texts).toEqual(expect.arrayContaining(['Cancel Order', 'sojourn 6.0 h', 'sojourn 55.0 min', 'waits for order', 'no predecessor']))
    const rows = await tableRows(page, '#perf-table')
    expect(rows.map((r) => r.slice(0, 7))).toEqual([
      ['Cancel Order', '1', '1', '6.0 h', '0 ms', '6.0 h', 'order (1 of 1)'],
      ['Pay Order', '2', '2', '55.0 min', '0 ms', '55.0 min', 'order (2 of 2)'],
      ['Ship Order', '1', '1', '55.0 min', '55.0 min', '1.8 h', 'order (1 of 1)'],
      ['Create Order', '3', '0', '—', '—', '—', '—'],
    ])
    // The longest-waiting box is the darkest colour of the scale; an unmeasured one is grey.
    const fills = await page.$$eval('#perf-table tbody tr .swatch', (nodes) => nodes.map((n) => n.getAttribute('style')))
    expect(fills[0]).toBe('background: rgb(153, 0, 0);')
    expect(fills[3]).toBe('background: rgb(242, 242, 242);')
    // Pay Order's slowest: o2 (60 min) before o1 (50 min).
    const links = await page.$$eval('#perf-table tbody tr:nth-child(2) a.object-link', (nodes) => nodes.map((n) => [n.textContent, n.getAttribute('href')]))
    expect(links).toEqual([
      ['order o2', '#object/order/o2'],
      ['order o1', '#object/order/o1'],
    ])
    await page.screenshot({ path: join(SHOTS, 'ui-performance.png'), fullPage: true })

    await page.click('#perf-table tbody tr:nth-child(2) a.object-link >> nth=0')
    await page.waitForSelector('#view-object:not([hidden]) .object-view')
    expect(await page.textContent('#object h2')).toBe('order o2')
    expect((await tableRows(page, '#object .trace')).map((r) => [r[0], r[2]])).toEqual([
      ['2024-05-02 09:00:00', 'Create Order'],
      ['2024-05-02 10:00:00', 'Pay Order'],
    ])
    await page.screenshot({ path: join(SHOTS, 'ui-object.png'), fullPage: true })
    await page.click('#object-back')
    await page.waitForSelector('#view-performance:not([hidden]) #perf-graph svg', DRAWN)
    await page.close()
  })

  it('measures only the chosen time range', async () => {
    const page = await openUi(suite.browser, suite.service.url, suite.key)
    await page.click('button[data-view=performance]')
    await page.waitForSelector('#perf-graph svg', DRAWN)
    await page.fill('#from', '2024-05-02T00:00:00')
    await page.fill('#to', '2024-05-03T00:00:00')
    await page.click('#apply')
    // Only o2's Create (no predecessor) and Pay (60 min after it) are in the window.
    await expect
      .poll(async () => (await tableRows(page, '#perf-table')).map((r) => r.slice(0, 4)), DRAWN)
      .toEqual([
        ['Pay Order', '1', '1', '1.0 h'],
        ['Create Order', '1', '0', '—'],
      ])
    await page.close()
  })
})

describe.skipIf(!HAVE_CHROMIUM)('/ui/ variants panel', () => {
  it('lists the variants of the chosen object type with objects, share, duration, path and examples', async () => {
    const page = await openUi(suite.browser, suite.service.url, suite.key)
    await page.click('button[data-view=variants]')
    await page.selectOption('#variant-type', 'order')
    // order: o3 Create → Cancel (6 h), o2 Create → Pay (1 h), o1 Create → Pay → Ship (2 h); one object each,
    // so by activity sequence in code-unit order.
    await expect
      .poll(() => tableRows(page, '#variants-table'), DRAWN)
      .toEqual([
        ['1', '1', '33.3%', '6.0 h', '6.0 h', 'Create Order→Cancel Order', 'o3'],
        ['2', '1', '33.3%', '1.0 h', '1.0 h', 'Create Order→Pay Order', 'o2'],
        ['3', '1', '33.3%', '2.0 h', '2.0 h', 'Create Order→Pay Order→Ship Order', 'o1'],
      ])
    expect(await page.textContent('#variants-head')).toBe('order: 3 objects in 3 variants; 3 shown.')
    expect(await page.isHidden('#variants-more')).toBe(true)
    await page.screenshot({ path: join(SHOTS, 'ui-variants.png'), fullPage: true })

    await page.selectOption('#variant-type', 'item')
    await expect.poll(() => tableRows(page, '#variants-table'), DRAWN).toEqual([['1', '1', '100.0%', '2.0 h', '2.0 h', 'Create Order→Ship Order', 'i1']])
    await page.click('#variants-table a.object-link')
    await page.waitForSelector('#view-object:not([hidden]) .object-view')
    expect(await page.textContent('#object h2')).toBe('item i1')
    // i1 shares Create Order and Ship Order with o1.
    expect(await tableRows(page, '#object .related')).toEqual([['order o1', '2']])
    await page.close()
  })
})

describe.skipIf(!HAVE_CHROMIUM)('/ui/ variants paging', () => {
  it('shows 50 variants, then the rest with More variants', async () => {
    // 51 cases, each with one event of its own activity: 51 variants of one object each.
    const paged = (await suite.service.createKey({ name: 'ui-variants-paging' })).key
    const events = Array.from({ length: 51 }, (_, i) => ({
      event: `A${String(i).padStart(2, '0')}`,
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      objects: [{ type: 'case', id: `c${String(i).padStart(2, '0')}` }],
    }))
    const res = await fetch(`${suite.service.url}/v1/event/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${paged}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    })
    expect(res.status).toBe(200)
    await waitForEvents(suite.service.url, paged, events.length)
    const page = await openUi(suite.browser, suite.service.url, paged)
    await page.click('button[data-view=variants]')
    await expect.poll(async () => (await tableRows(page, '#variants-table')).length, DRAWN).toBe(50)
    expect(await page.textContent('#variants-head')).toBe('case: 51 objects in 51 variants; 50 shown.')
    expect(await page.isVisible('#variants-more')).toBe(true)
    await page.click('#variants-more')
    await expect.poll(async () => (await tableRows(page, '#variants-table')).length, DRAWN).toBe(51)
    // One object each, so by activity: the page goes on where the first one stopped.
    expect((await tableRows(page, '#variants-table')).slice(48).map((r) => [r[0], r[5], r[6]])).toEqual([
      ['49', 'A48', 'c48'],
      ['50', 'A49', 'c49'],
      ['51', 'A50', 'c50'],
    ])
    expect(await page.textContent('#variants-head')).toBe('case: 51 objects in 51 variants; 51 shown.')
    expect(await page.isHidden('#variants-more')).toBe(true)
    await page.close()
  })
})

/** The rows of a table grouped by object type (a heading row per type), each led by its type. */
function groupedRows(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody`, (bodies) =>
    bodies.flatMap((b) => {
      const type = (b.querySelector('tr.group th')?.textContent ?? '').trim()
      return [...b.querySelectorAll('tr:not(.group)')].map((r) => [type, ...[...r.querySelectorAll('td')].map((c) => (c.textContent ?? '').trim())])
    }),
  )
}

describe.skipIf(!HAVE_CHROMIUM)('/ui/ comparison of two time ranges', () => {
  it('shows both windows’ figures side by side with b − a, and the endpoint’s highlights', async () => {
    const page = await openUi(suite.browser, suite.service.url, suite.key)
    await page.click('button[data-view=compare]')
    // The windows start as the two halves of the dataset's span (2024-05-01 10:00 to 2024-05-03 15:00:01).
    expect(await page.inputValue('#a-from')).toBe('2024-05-01T10:00')
    expect(await page.inputValue('#b-to')).toBe('2024-05-03T15:00:01')
    await page.fill('#a-from', '2024-05-01T00:00:00')
    await page.fill('#a-to', '2024-05-02T00:00:00')
    await page.fill('#b-from', '2024-05-02T00:00:00')
    await page.fill('#b-to', '2024-05-04T00:00:00')
    await page.click('#compare-run')
    // a holds o1's Create (10:00–10:10), Pay (11:00–11:05) and Ship (12:00, with item i1); b holds o2 and o3.
    // Pay Order waits 50 min in a (10:10 → 11:00) and 1 h in b (o2: 09:00 → 10:00).
    // Each figure is one cell: a → b, then b − a where both are present.
    await expect
      .poll(async () => (await tableRows(page, '#compare .compare-performance')).find((r) => r[0] === 'Pay Order'), DRAWN)
      .toEqual(['Pay Order', '50.0 min → 1.0 h +10.0 min', '0 ms → 0 ms ±0'])
    const performance = await tableRows(page, '#compare .compare-performance')
    expect(performance.find((r) => r[0] === 'Ship Order')).toEqual(['Ship Order', '55.0 min → —', '55.0 min → —'])
    expect(performance.find((r) => r[0] === 'Cancel Order')).toEqual(['Cancel Order', '— → 6.0 h', '— → 0 ms'])
    // Activities and edges are grouped under a heading row per object type.
    const activities = await groupedRows(page, '#compare .compare-activities')
    expect(activities.find((r) => r[0] === 'order' && r[1] === 'Create Order')).toEqual(['order', 'Create Order', '1 → 2 +1', '10.0 min → —'])
    const edges = await groupedRows(page, '#compare .compare-edges')
    expect(edges.find((r) => r[0] === 'order' && r[1] === 'Create Order → Pay Order')).toEqual([
      'order',
      'Create Order → Pay Order',
      '1 → 1 ±0',
      '1.0 h → 1.0 h ±0',
      '50.0 min → —',
    ])
    const res = await fetch(
      `${suite.service.url}/v1/process/compare?a_from=2024-05-01T00:00:00Z&a_to=2024-05-02T00:00:00Z&b_from=2024-05-02T00:00:00Z&b_to=2024-05-04T00:00:00Z`,
      { headers: { authorization: `Bearer ${suite.key}` } },
    )
    const { highlights } = (await res.json()) as { highlights: { what: string }[] }
    expect(highlights.length).toBeGreaterThan(0)
    expect(await page.$$eval('#compare ol.highlights .what', (nodes) => nodes.map((n) => n.textContent))).toEqual(highlights.map((h) => h.what))
    expect(await page.textContent('#compare ol.highlights')).toContain('Pay Order, sojourn_median: 50.0 min → 1.0 h (+20.0%)')
    await page.screenshot({ path: join(SHOTS, 'ui-compare.png'), fullPage: true })
    await page.close()
  })
})

describeWithSharedOcel('/ui/ analysis tabs with the order-management running example', () => {
  it.skipIf(!HAVE_CHROMIUM)(
    'shows what the endpoints answer: the longest median sojourn first, the variants of orders, and a comparison of two halves',
    async () => {
      const created = await suite.service.createKey({ name: 'running-example-analysis' })
      const summary = await suite.service.importOcel(ocelFixture('derived/ocpa__running-example.ocel2.json'), created.key)
      await waitForEvents(suite.service.url, created.key, summary.sent.events, 120_000)
      const get = async <T>(path: string): Promise<T> =>
        (await (await fetch(`${suite.service.url}${path}`, { headers: { authorization: `Bearer ${created.key}` } })).json()) as T
      const page = await openUi(suite.browser, suite.service.url, created.key, { width: 1600, height: 1150 })

      await page.click('button[data-view=performance]')
      await page.waitForSelector('#perf-table tbody tr', DRAWN)
      const perf = await get<PerformanceResponse>('/v1/process/performance')
      const longest = [...perf.activities].sort((x, y) => (y.sojourn?.median ?? -1) - (x.sojourn?.median ?? -1))[0]
      const first = (await tableRows(page, '#perf-table'))[0]
      expect(first?.[0]).toBe(longest?.activity)
      expect(first?.[3]).toBe(longest?.sojourn === null || longest === undefined ? '—' : formatDuration(longest.sojourn.median))
      await page.screenshot({ path: join(SHOTS, 'ui-performance-running-example.png'), fullPage: true })

      await page.click('button[data-view=variants]')
      await page.selectOption('#variant-type', 'orders')
      const variants = await get<VariantsResponse>('/v1/process/variants?object_type=orders&limit=50')
      await expect.poll(async () => (await tableRows(page, '#variants-table')).length, DRAWN).toBe(variants.variants.length)
      expect(await page.textContent('#variants-head')).toBe(
        `orders: ${formatCount(variants.objects)} objects in ${formatCount(variants.total)} variants; ${formatCount(variants.variants.length)} shown.`,
      )
      await page.screenshot({ path: join(SHOTS, 'ui-variants-running-example.png'), fullPage: true })

      await page.click('button[data-view=compare]')
      await page.click('#compare-run')
      await page.waitForSelector('#compare .compare-performance tbody tr', DRAWN)
      await page.screenshot({ path: join(SHOTS, 'ui-compare-running-example.png'), fullPage: true })
      await page.close()
    },
    300_000,
  )
})
