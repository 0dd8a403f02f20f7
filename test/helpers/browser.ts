/**
 * Debian's chromium driven by playwright-core, for the `/ui/` e2e tests: whether it is installed
 * (tests skip with the printed reason when not), how to launch it headless, and how to open the
 * page with a key pasted.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { loadReadDataset } from './read-dataset.js'
import { type RunningService, startService } from './service.js'

export const CHROMIUM = '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)
/** Where the tests' screenshots go (outside the repository; UI_SHOTS overrides): they are looked at, not compared. */
export const SHOTS = process.env.UI_SHOTS ?? join(tmpdir(), 'ui-shots')
/** How long a drawing may take to appear (Graphviz runs in the page). */
export const DRAWN = { timeout: 20_000 }

if (!HAVE_CHROMIUM) process.stdout.write(`skip: /ui/ in a browser: ${CHROMIUM} is missing (apt-get install chromium)\n`)

/** Launches chromium headless, without sandbox, GPU or background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

/** Opens `${url}/ui/`, pastes `key`, and waits until the process map is drawn; fails on any page error. */
export async function openUi(browser: Browser, url: string, key: string, viewport = { width: 1400, height: 1000 }): Promise<Page> {
  const page = await browser.newPage({ viewport })
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${url}/ui/`)
  await page.fill('#key', key)
  await page.click('button[type=submit]')
  await page.waitForSelector('#graph svg', DRAWN)
  expect(errors).toEqual([])
  return page
}

/** The texts of the SVG drawn in `selector` (nodes and edge labels). */
export async function svgTexts(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(`${selector} svg text`, (nodes) => nodes.map((n) => n.textContent ?? ''))
}

/** The cells of the table in `selector`, row by row (the header row excluded). */
export async function tableRows(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => (c.textContent ?? '').trim())))
}

/** What a `/ui/` test file shares: the built service, chromium, and a key whose dataset holds read-dataset.ts's events. */
export interface UiSuite {
  service: RunningService
  browser: Browser
  key: string
}

/**
 * Registers the file's beforeAll (start the service and chromium, create the key `name`, load the
 * read dataset) and afterAll (close both); the answer is filled in by beforeAll. Nothing starts
 * without chromium (the tests skip).
 */
export function uiSuite(name: string): UiSuite {
  const suite = {} as UiSuite
  beforeAll(async () => {
    if (!HAVE_CHROMIUM) return
    mkdirSync(SHOTS, { recursive: true })
    suite.service = await startService()
    suite.browser = await launchChromium()
    suite.key = (await suite.service.createKey({ name })).key
    await loadReadDataset(suite.service.url, suite.key)
  })
  afterAll(async () => {
    await suite.browser?.close()
    await suite.service?.stop()
  })
  return suite
}
