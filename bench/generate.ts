/**
 * A seeded, generated object-centric event log for the bench at scale (`npm run bench:scale`) and
 * for anyone who needs a large dataset without shared data: API-shaped items (the bodies of
 * `POST /v1/object/upsert` and `POST /v1/event`, see the OpenAPI document), in arrival order.
 *
 * The process is an order-to-cash: each order is placed by a customer with its items, confirmed,
 * its items picked, packed into a package that is sent, and invoiced; the invoice is paid, some
 * after a reminder. About 300 orders run at once, so their events interleave. Its shape:
 * - five object types: customer, order, item, package, invoice;
 * - 1 to 50 objects per event, most with 2 to 4 (an order has 1 item in 40%, 2 in 35%, 3 in 15%,
 *   4 to 10 in 9.5% and 11 to 48 in 0.5% of cases; only the reminder has one object);
 * - 30% of events carry an `end_timestamp` (1 minute to 2 hours after `timestamp`);
 * - 5% arrive out of time order: their `timestamp` lies 1 minute to 2 days before the latest
 *   timestamp sent so far (they arrive late);
 * - O2O relationships: an object is upserted before the first event that names it, an order with
 *   `placed by` its customer and `contains` its items, a package `contains` its items, an invoice
 *   `bills` its order;
 * - times start on 2025-01-01T00:00:00Z, about 20 s apart (exponential gaps).
 *
 * The same seed and count give the same items (the PRNG is sfc32, seeded by splitmix32). Memory
 * stays bounded: the open orders and a bit per customer.
 */
import type { EventInput, ObjectUpsertInput } from '../src/schemas/api.js'

/** One item of the generated log, as a client would send it. */
export type GeneratedItem = { kind: 'object'; item: ObjectUpsertInput } | { kind: 'event'; item: EventInput }

export interface GenerateOptions {
  /** Events to generate (object upserts come in addition). */
  events: number
  /** Seed of the PRNG (any 32-bit integer). */
  seed: number
}

/** Share of events that arrive out of time order. */
export const OUT_OF_ORDER_SHARE = 0.05
/** Share of events with an `end_timestamp`. */
export const END_TIMESTAMP_SHARE = 0.3
/** The object types, in the order the process first names them. */
export const OBJECT_TYPES = ['customer', 'order', 'item', 'package', 'invoice'] as const
/** Time of the first event, epoch ms. */
export const START_MS = Date.UTC(2025, 0, 1)

const OPEN_ORDERS = 300
const MEAN_GAP_MS = 20_000
const MINUTE = 60_000

/** sfc32 (PractRand's small fast counter), seeded by splitmix32: uniform floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad)
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97)
    return (z ^ (z >>> 15)) >>> 0
  }
  let a = split()
  let b = split()
  let c = split()
  let d = split()
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0
    d = (d + 1) >>> 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) >>> 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) >>> 0
    return t / 4294967296
  }
}

type Step = 'place order' | 'confirm order' | 'pick item' | 'pack items' | 'send package' | 'create invoice' | 'send reminder' | 'receive payment'

interface OpenOrder {
  n: number
  customer: number
  items: number
  /** The steps still to come, in order; `pick item` once per item. */
  steps: Step[]
  picked: number
}

const ref = (type: string, id: string, qualifier?: string) => (qualifier === undefined ? { type, id } : { type, id, qualifier })
const orderId = (n: number) => `o-${String(n)}`
const itemId = (n: number, i: number) => `i-${String(n)}-${String(i)}`
const customerId = (n: number) => `c-${String(n)}`

/** The generator's draws from its seeded PRNG: a uniform float in [0, 1), and a whole number in [lo, hi]. */
interface Draws {
  random: () => number
  int: (lo: number, hi: number) => number
}

/** Items of an order: 1 in 40%, 2 in 35%, 3 in 15%, 4 to 10 in 9.5% and 11 to 48 in 0.5% of cases. */
function itemCount({ random, int }: Draws): number {
  const r = random()
  if (r < 0.4) return 1
  if (r < 0.75) return 2
  if (r < 0.9) return 3
  if (r < 0.995) return int(4, 10)
  return int(11, 48)
}

/** Order number `n`, placed by one of `customers`, with its steps to come (a reminder before the payment in 20% of orders). */
function newOrder(draws: Draws, n: number, customers: number): OpenOrder {
  const { random } = draws
  const items = itemCount(draws)
  // Customers come back: a few place many orders (the square skews the draw toward low numbers).
  const customer = Math.floor(random() * random() * customers)
  const steps: Step[] = [
    'place order',
    'confirm order',
    ...Array.from({ length: items }, (): Step => 'pick item'),
    'pack items',
    'send package',
    'create invoice',
  ]
  if (random() < 0.2) steps.push('send reminder')
  steps.push('receive payment')
  return { n, customer, items, steps, picked: 0 }
}

const itemRefs = (o: OpenOrder, qualifier?: string) => Array.from({ length: o.items }, (_, i) => ref('item', itemId(o.n, i), qualifier))

/**
 * The event of `step` of order `o`: yields the object upserts that must come before it (a
 * customer's first, an order's, its items', a package's, an invoice's), then returns the event's
 * objects and properties. `customerSent` marks the customers already upserted.
 */
function* stepItems(
  step: Step,
  o: OpenOrder,
  { random, int }: Draws,
  customerSent: Uint8Array,
): Generator<GeneratedItem, Pick<EventInput, 'objects' | 'properties'>> {
  const order = ref('order', orderId(o.n))
  const customer = ref('customer', customerId(o.customer))
  const pkg = ref('package', `p-${String(o.n)}`)
  const invoice = ref('invoice', `inv-${String(o.n)}`)
  switch (step) {
    case 'place order':
      if (customerSent[o.customer] === 0) {
        customerSent[o.customer] = 1
        yield {
          kind: 'object',
          item: { type: 'customer', id: customer.id, properties: { segment: ['retail', 'wholesale', 'online'][o.customer % 3] ?? 'retail' } },
        }
      }
      for (let i = 0; i < o.items; i++) {
        yield { kind: 'object', item: { type: 'item', id: itemId(o.n, i), properties: { sku: `sku-${String(int(1, 500))}`, price: int(1, 400) } } }
      }
      yield {
        kind: 'object',
        item: {
          type: 'order',
          id: order.id,
          properties: { channel: random() < 0.5 ? 'web' : 'store' },
          relationships: [ref('customer', customer.id, 'placed by'), ...itemRefs(o, 'contains')],
        },
      }
      return { objects: [order, ref('customer', customer.id, 'buyer'), ...itemRefs(o)], properties: { items: o.items } }
    case 'confirm order':
      return { objects: [order, customer] }
    case 'pick item': {
      const objects = [ref('item', itemId(o.n, o.picked)), order]
      o.picked += 1
      return { objects }
    }
    case 'pack items':
      yield { kind: 'object', item: { type: 'package', id: pkg.id, properties: { weight: int(1, 30) }, relationships: itemRefs(o, 'contains') } }
      return { objects: [pkg, order, ...itemRefs(o)] }
    case 'send package':
      return { objects: [pkg, order] }
    case 'create invoice':
      yield {
        kind: 'object',
        item: { type: 'invoice', id: invoice.id, properties: { amount: int(10, 5000) }, relationships: [ref('order', order.id, 'bills')] },
      }
      return { objects: [invoice, order, customer] }
    case 'send reminder':
      return { objects: [invoice] }
    case 'receive payment':
      return { objects: [invoice, customer] }
  }
}

/**
 * The generated log: `options.events` events and the object upserts before them, in arrival
 * order. A plain generator, so `for` and `for await` both read it; nothing is kept of what was
 * yielded.
 */
export function* generateItems(options: GenerateOptions): Generator<GeneratedItem> {
  const random = seededRandom(options.seed)
  const draws: Draws = { random, int: (lo, hi) => lo + Math.floor(random() * (hi - lo + 1)) }
  const { int } = draws
  const customers = Math.max(10, Math.ceil(options.events / 40))
  const customerSent = new Uint8Array(customers)
  const open: OpenOrder[] = []
  let nextOrder = 0
  let clock = START_MS
  let sent = 0

  while (sent < options.events) {
    while (open.length < OPEN_ORDERS) {
      nextOrder += 1
      open.push(newOrder(draws, nextOrder, customers))
    }
    const at = Math.floor(random() * open.length)
    const o = open[at]
    if (o === undefined) break
    const step = o.steps.shift() ?? 'receive payment'
    if (o.steps.length === 0) {
      const last = open.pop()
      if (last !== undefined && at < open.length) open[at] = last
    }
    clock += Math.max(1, Math.round(-Math.log(1 - random()) * MEAN_GAP_MS))
    const late = random() < OUT_OF_ORDER_SHARE
    const time = late ? clock - int(MINUTE, 2 * 24 * 60 * MINUTE) : clock
    const { objects, properties } = yield* stepItems(step, o, draws, customerSent)
    const event: EventInput = { event: step, objects, timestamp: new Date(time).toISOString() }
    if (random() < END_TIMESTAMP_SHARE) event.end_timestamp = new Date(time + int(MINUTE, 120 * MINUTE)).toISOString()
    if (properties !== undefined) event.properties = properties
    yield { kind: 'event', item: event }
    sent += 1
  }
}

/** A time window of the generated log: `from` inclusive, `to` exclusive (as the process map reads them), and its events. */
export interface GeneratedWindow {
  from: string
  to: string
  events: number
}

/**
 * The window from the latest timestamp sent when the event at `start` (a share of the events, e.g.
 * 0.45) arrives to the latest sent when the event at `start + share` arrives, with the count of
 * events inside it (late ones included). Reads the generated log twice, keeping nothing of it.
 */
export function generatedWindow(options: GenerateOptions, start: number, share: number): GeneratedWindow {
  const at = [Math.floor(options.events * start), Math.floor(options.events * (start + share))]
  const bounds: number[] = []
  let latest = START_MS
  let i = 0
  for (const g of generateItems(options)) {
    if (g.kind !== 'event') continue
    latest = Math.max(latest, Date.parse(g.item.timestamp ?? ''))
    if (i === at[bounds.length]) bounds.push(latest)
    i += 1
    if (bounds.length === 2) break
  }
  const [from = START_MS, to = latest + 1] = bounds
  let events = 0
  for (const g of generateItems(options)) {
    if (g.kind !== 'event') continue
    const t = Date.parse(g.item.timestamp ?? '')
    if (t >= from && t < to) events += 1
  }
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), events }
}
