/**
 * Request bodies of the benchmark scenarios (docs/performance.md#method, Scenarios). Deterministic: the same scenario and seed
 * give the same bodies, so the service and the bare-Fastify baseline are driven with the same
 * bytes. Bodies are pre-serialised JSON strings; the load generator cycles through a pool.
 */

/** The scenarios of `npm run bench` that send HTTP load (docs/performance.md#method). */
export const SCENARIOS = ['single', 'batch', 'objects', 'worst'] as const
export type Scenario = (typeof SCENARIOS)[number]

export interface ScenarioShape {
  /** Route under the service's base URL. */
  path: string
  /** Items (events or objects) per request: turns req/s into events/s or objects/s. */
  itemsPerRequest: number
  /** What an item is, for the table. */
  item: 'event' | 'object'
}

export const SCENARIO_SHAPES: Record<Scenario, ScenarioShape> = {
  single: { path: '/v1/event', itemsPerRequest: 1, item: 'event' },
  batch: { path: '/v1/event/batch', itemsPerRequest: 100, item: 'event' },
  objects: { path: '/v1/object/batch', itemsPerRequest: 100, item: 'object' },
  worst: { path: '/v1/event/batch', itemsPerRequest: 100, item: 'event' },
}

/** mulberry32: a small seeded PRNG, so bodies do not depend on Math.random. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const EVENT_TYPES = ['Create Order', 'Confirm Order', 'Pick Item', 'Pack Items', 'Send Package', 'Receive Payment']
const STATUSES = ['open', 'confirmed', 'picked', 'packed', 'sent', 'paid']
const CUSTOMERS = 1000
const ITEMS = 5000
const BASE_TIME = Date.parse('2024-05-01T08:00:00.000Z')

interface EventItem {
  event: string
  timestamp: string
  properties: Record<string, unknown>
  objects: { type: string; id: string; qualifier?: string; properties?: Record<string, unknown> }[]
}

/**
 * One event as a sender of an order-management log would post it: an order (with a status
 * attribute), its customer and `objectCount - 2` items, drawn from pools so that objects recur
 * across events and the object-to-object links grow as they do in real logs.
 * @param n the event's sequence number (timestamps advance 1 s per event; order ids advance every 4 events).
 */
function eventItem(rand: () => number, seed: number, n: number, objectCount: number): EventItem {
  const kind = n % EVENT_TYPES.length
  const objects: EventItem['objects'] = [
    { type: 'order', id: `o-${String(seed)}-${String(Math.floor(n / 4))}`, qualifier: 'target', properties: { status: STATUSES[kind] ?? 'open' } },
    { type: 'customer', id: `c-${String(Math.floor(rand() * CUSTOMERS))}`, qualifier: 'initiator' },
  ]
  for (let i = 2; i < objectCount; i++) objects.push({ type: 'item', id: `i-${String(Math.floor(rand() * ITEMS))}`, qualifier: 'line' })
  return {
    event: EVENT_TYPES[kind] ?? 'Create Order',
    timestamp: new Date(BASE_TIME + n * 1000).toISOString(),
    properties: { amount: Math.round(rand() * 100_000) / 100, channel: rand() < 0.5 ? 'web' : 'shop' },
    objects,
  }
}

/** Bodies of POST /v1/event: `count` single events with 3 objects each. */
export function singleEventBodies(count: number, seed: number): string[] {
  const rand = prng(seed)
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(JSON.stringify(eventItem(rand, seed, i, 3)))
  return out
}

/** Bodies of POST /v1/event/batch: `count` batches of `eventsPerBatch` events with `objectsPerEvent` objects each. */
export function eventBatchBodies(count: number, eventsPerBatch: number, objectsPerEvent: number, seed: number): string[] {
  const rand = prng(seed)
  const out: string[] = []
  let n = 0
  for (let b = 0; b < count; b++) {
    const events: EventItem[] = []
    for (let i = 0; i < eventsPerBatch; i++) events.push(eventItem(rand, seed, n++, objectsPerEvent))
    out.push(JSON.stringify({ events }))
  }
  return out
}

/** Objects that the object-batch scenario merges into; `knownObjectBodies` creates them first. */
export const KNOWN_PRODUCTS = 2000

/** Bodies of POST /v1/object/batch that create the `KNOWN_PRODUCTS` products the scenario later merges into. */
export function knownObjectBodies(): string[] {
  const out: string[] = []
  for (let b = 0; b < KNOWN_PRODUCTS; b += 100) {
    const objects = []
    for (let i = b; i < Math.min(b + 100, KNOWN_PRODUCTS); i++)
      objects.push({ type: 'product', id: `p-known-${String(i)}`, properties: { price: 10 + (i % 90), stock: 100 } })
    out.push(JSON.stringify({ objects }))
  }
  return out
}

/**
 * A generator of POST /v1/object/batch bodies: each has 100 upserts, alternating a product never
 * seen before (`p-<tag>-<counter>`, so it is created) and a known product whose stock changes
 * (so it is merged). `tag` must differ between runs against the same data.
 */
export function objectBatchBodies(tag: string, seed: number): () => string {
  const rand = prng(seed)
  let counter = 0
  return () => {
    const parts: string[] = []
    for (let i = 0; i < 50; i++) {
      counter++
      parts.push(
        `{"type":"product","id":"p-${tag}-${String(counter)}","properties":{"price":${String(counter % 97)},"stock":${String(counter % 13)},"origin":"bench"}}`,
      )
      parts.push(`{"type":"product","id":"p-known-${String(Math.floor(rand() * KNOWN_PRODUCTS))}","properties":{"stock":${String(counter % 200)}}}`)
    }
    return `{"objects":[${parts.join(',')}]}`
  }
}

/**
 * The first cycle (bodySource's `firstCycle`) of each live-feed load on the bench's typical scenarios'
 * service (bench/run.ts), so that each load continues the feed in time after the loads before it: the single and
 * batch pools draw on the same customers and items, and a load that started again at cycle 0 would
 * arrive late for most of them (the worst case's arrival, which has a scenario of its own). A load
 * spans about a hundred cycles at most (baseline (a)'s batch at 190,000 events/s for 11 s is 105
 * cycles of 20,000 events), so 1,000 apart keeps the spans apart with room, and the years under 10,000.
 */
export const TYPICAL_FEED_FIRST_CYCLE = { single: 0, batch: 1000, halfRate: 2000 } as const

/** How many pre-built bodies each scenario cycles through. */
const POOL_SIZES: Record<Exclude<Scenario, 'objects'>, number> = { single: 2000, batch: 200, worst: 20 }

/** The year of BASE_TIME, which every pool body's timestamps are in (a pool spans at most 20,000 s from May 1). */
const BASE_YEAR = '"2024-'

/**
 * The body source of a scenario: a function returning the next body. Event scenarios cycle a
 * pre-built pool; the cycle repeats order ids, which then merge. The single and batch scenarios are
 * a live feed: each cycle moves the pool's timestamps one year on (cycle k is in 2024 + k), so
 * events reach every object in time order, as a sender's clock moves. The worst case rewinds time
 * at each cycle instead: after its first cycle every event arrives late for its customer and 48
 * items, the most costly arrival for the directly-follows read model (docs/performance.md). The
 * object batch makes fresh ids. `firstCycle` starts a live feed's timestamps that many years on, so
 * that a later load of the same data continues the feed in time rather than rewinding it.
 */
export function bodySource(scenario: Scenario, seed: number, tag: string, firstCycle = 0): () => string {
  if (scenario === 'objects') return objectBatchBodies(tag, seed)
  const pool =
    scenario === 'single' ? singleEventBodies(POOL_SIZES.single, seed) : eventBatchBodies(POOL_SIZES[scenario], 100, scenario === 'worst' ? 50 : 3, seed)
  const advance = scenario !== 'worst'
  let i = 0
  return () => {
    const body = pool[i % pool.length] ?? ''
    const cycle = firstCycle + Math.floor(i / pool.length)
    i++
    return advance && cycle > 0 ? body.replaceAll(BASE_YEAR, `"${String(2024 + cycle)}-`) : body
  }
}
