/**
 * The staged import plan (src/ocel/import/stage.ts, staged-plan.ts: the log streamed into a scratch
 * SQLite file, planned from it a page at a time) against the in-memory plan (planImport over
 * readOcelFile): the same batches, items, idempotency keys, sources and `after` lists, the same
 * totals and skips, on the generated log in its three forms and on every shared log. So a file
 * imported by the in-memory importer and imported again by the staged one records nothing. And the
 * staged plan read while it is still being planned (StagedPlanner, as `ocelog import` sends it): the
 * same batches again, the first of them before planning ends.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import type { PlannedBatch, PlanOptions } from '../../src/ocel/import/plan.js'
import { readOcelFile, streamOcelFile } from '../../src/ocel/import/read.js'
import { Staging } from '../../src/ocel/import/stage.js'
import { planStaged, StagedPlanner } from '../../src/ocel/import/staged-plan.js'
import { parseTimeZone, type TimeZone } from '../../src/ocel/import/time.js'
import { itWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'

const dir = mkdtempSync(join(tmpdir(), 'ocelog-staged-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const generated = writeGeneratedOcel(dir)

async function bothPlans(path: string, zone: TimeZone, options: PlanOptions = {}) {
  const memory = planImport(readOcelFile(path, zone), options)
  const staging = new Staging(dir)
  try {
    const end = await streamOcelFile(path, zone, staging.sink(), undefined, staging.scratch())
    staging.typeText = end.typeText
    const staged = planStaged(staging, options)
    const { batches, ...totals } = staged
    return { memory, staged: { ...totals, batches: [...batches()] } }
  } finally {
    staging.remove()
  }
}

/**
 * The staged plan of `path` read while it is planned: a batch is taken whenever one is final, and a
 * page is planned only when none is (null), the most eager reader there can be.
 * @returns the batches, how many came before planning ended, and the totals at the end.
 */
async function readWhilePlanning(path: string, zone: TimeZone, options: PlanOptions = {}) {
  const staging = new Staging(dir)
  try {
    const end = await streamOcelFile(path, zone, staging.sink(), undefined, staging.scratch())
    staging.typeText = end.typeText
    const planner = new StagedPlanner(staging, options)
    const batches: PlannedBatch[] = []
    let beforeDone = 0
    let duringObjects = 0
    let steps = 0
    for (const batch of planner.batches()) {
      if (batch === null) {
        expect(planner.done).toBe(false)
        planner.step()
        steps += 1
        continue
      }
      if (!planner.done) beforeDone += 1
      if (planner.planning === 'objects') duringObjects += 1
      batches.push(batch)
    }
    return { batches, beforeDone, duringObjects, steps, totals: planner.totals() }
  } finally {
    staging.remove()
  }
}

describe('the staged plan read while it is planned equals the plan planned first', () => {
  for (const form of ['json', 'xml', 'sqlite'] as const) {
    it(`on the generated log (${form}): the same batches and totals, the objects' initial values before planning ends`, async () => {
      // Batches of 10, so that the initial values fill some before the first event.
      const options = { keyPrefix: 'p:', unknownObjectType: 'Geist', batchSize: 10 }
      const { memory } = await bothPlans(generated[form], parseTimeZone('+01:00'), options)
      const early = await readWhilePlanning(generated[form], parseTimeZone('+01:00'), options)
      const { batches, ...totals } = memory
      expect(early.batches).toEqual(batches)
      expect(early.totals).toEqual(totals)
      // The objects' initial values (at the epoch) come before the first event: 5 batches of 10 of them are final before the events
      // are planned (not while the objects are: two objects have no attributes, so their upserts come before all others).
      expect(early.beforeDone).toBeGreaterThanOrEqual(5)
      expect(early.steps).toBeGreaterThan(1)
    })
  }

  /** 1,500 orders (more than a page), each with a status at `valuesAt`, and 3 events, the first at `firstEventAt`. */
  function writeOrders(name: string, valuesAt: string, firstEventAt: string): string {
    const objects = Array.from({ length: 1500 }, (_, i) => ({
      id: `o${String(i)}`,
      type: 'order',
      attributes: [
        { name: 'status', time: valuesAt, value: 'open' },
        { name: 'status', time: '2024-09-01T00:00:00Z', value: 'closed' },
      ],
      relationships: i > 0 ? [{ objectId: `o${String(i - 1)}`, qualifier: 'follows' }] : [],
    }))
    const events = [firstEventAt, '2024-07-01T00:00:00Z', '2024-09-01T00:00:00Z'].map((time, i) => ({
      id: `e${String(i)}`,
      type: 'Check Order',
      time,
      attributes: [],
      relationships: [{ objectId: 'o0', qualifier: 'order' }],
    }))
    const path = join(dir, name)
    writeFileSync(
      path,
      JSON.stringify({
        objectTypes: [{ name: 'order', attributes: [{ name: 'status', type: 'string' }] }],
        eventTypes: [{ name: 'Check Order', attributes: [] }],
        objects,
        events,
      }),
    )
    return path
  }

  it('sends the initial values while the objects are planned, unless an event comes before them', async () => {
    const options = { batchSize: 10 }
    for (const [name, firstEventAt, whileObjects] of [
      ['orders-event-after.json', '2024-06-01T00:00:00Z', true],
      ['orders-event-before.json', '2024-01-01T00:00:00Z', false],
    ] as const) {
      const path = writeOrders(name, '2024-03-01T00:00:00Z', firstEventAt)
      const { memory } = await bothPlans(path, parseTimeZone('UTC'), options)
      const read = await readWhilePlanning(path, parseTimeZone('UTC'), options)
      const { batches, ...totals } = memory
      expect(read.batches).toEqual(batches)
      expect(read.totals).toEqual(totals)
      expect(memory.upserts).toBe(3000)
      // The first page of 1,000 objects makes 100 batches of their values at 2024-03-01, final before the second page is planned.
      if (whileObjects) expect(read.duringObjects).toBeGreaterThanOrEqual(99)
      else expect(read.duringObjects).toBe(0)
    }
  })

  it('holds back an event one millisecond after the first one until the first one, planned a page later, is planned', async () => {
    // The log's first event (at T) is its 1,001st, on the second page; its first, at T + 1 ms, must not be sent before it.
    const at = (ms: number) => new Date(Date.UTC(2024, 5, 1) + ms).toISOString()
    const times = [at(1), ...Array.from({ length: 999 }, (_, i) => at(60_000 * (i + 1))), at(0)]
    const path = join(dir, 'late-first-event.json')
    writeFileSync(
      path,
      JSON.stringify({
        objectTypes: [{ name: 'order', attributes: [] }],
        eventTypes: [{ name: 'Check Order', attributes: [] }],
        objects: [{ id: 'o0', type: 'order', attributes: [], relationships: [] }],
        events: times.map((time, i) => ({ id: `e${String(i)}`, type: 'Check Order', time, attributes: [], relationships: [{ objectId: 'o0' }] })),
      }),
    )
    const options = { batchSize: 10 }
    const { memory } = await bothPlans(path, parseTimeZone('UTC'), options)
    const read = await readWhilePlanning(path, parseTimeZone('UTC'), options)
    expect(memory.batches[0]?.sources).toEqual(['o0 @ initial'])
    expect(memory.batches[1]?.sources.slice(0, 2)).toEqual(['e1000', 'e0'])
    expect(read.batches).toEqual(memory.batches)
  })

  // Whether a batch is final before planning ends: the logs with more than a batch of values before their first event.
  for (const [relative, early] of [
    ['derived/ocpa__running-example.ocel2.json', true],
    ['raw/ocpa__logistics.sqlite', true],
    ['raw/ocpa__ocel20_example.xmlocel', false],
  ] as const) {
    itWithSharedOcel(
      `on ${relative}`,
      async () => {
        const { memory } = await bothPlans(ocelFixture(relative), parseTimeZone('UTC'))
        const read = await readWhilePlanning(ocelFixture(relative), parseTimeZone('UTC'))
        const { batches, ...totals } = memory
        expect(read.batches.length).toBe(batches.length)
        expect(read.batches).toEqual(batches)
        expect(read.totals).toEqual(totals)
        expect(read.beforeDone > 0).toBe(early)
      },
      120_000,
    )
  }
})

describe('the staged plan equals the in-memory plan', () => {
  for (const form of ['json', 'xml', 'sqlite'] as const) {
    it(`on the generated log (${form}), with a key prefix and an unknown object type`, async () => {
      const { memory, staged } = await bothPlans(generated[form], parseTimeZone('+01:00'), { keyPrefix: 'p:', unknownObjectType: 'Geist' })
      expect(staged).toEqual(memory)
      expect(memory.events).toBe(7)
      expect(memory.upserts).toBe(61)
    })
  }

  for (const relative of [
    'derived/ocpa__running-example.ocel2.json',
    'raw/ocpa__running-example.sqlite',
    'derived/ocpa__logistics.ocel2.json',
    'raw/ocpa__logistics.sqlite',
    'raw/pm4py__ocel20_example.jsonocel',
    'raw/ocpa__ocel20_example.xmlocel',
    'raw/ocpa__ocel20_example.sqlite',
    'raw/ocelescope__pallet-logistics-v0.9.sqlite',
    'derived/ocelescope__pallet-logistics-v0.9.ocel2.json',
  ]) {
    itWithSharedOcel(
      `on ${relative}`,
      async () => {
        const { memory, staged } = await bothPlans(ocelFixture(relative), parseTimeZone('UTC'))
        expect(staged.batches.length).toBe(memory.batches.length)
        expect(staged).toEqual(memory)
      },
      120_000,
    )
  }

  it('leaves no staging file behind once removed', () => {
    expect(readdirSync(dir).filter((f) => f.startsWith('ocelog-import-'))).toEqual([])
  })
})
