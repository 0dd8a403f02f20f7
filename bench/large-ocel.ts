/**
 * A large OCEL 2.0 JSON log of any size, written as a stream (never held in memory), seeded so that
 * every run writes the same file: for the import's bounded-memory test (test/e2e/import-large.test.ts)
 * and the bench's import row (`npm run bench`, README § Performance).
 *
 * An order-to-delivery process over `orders` orders. Order i has 1 + (i mod 3) items and is placed
 * by one of `orders / 20` customers; its events are `place order` (order, customer, items), one
 * `pick item` per item (item, order), `pay order` (order) and `ship order` (order, items): 5 events
 * per order on average, E2O with qualifiers. O2O: order → customer (`placed by`), order → each item
 * (`contains`). Attribute history: every object has initial values at the epoch; the `status` of one
 * order in 10 changes to `shipped` at that event's time (the running example has about as many
 * changes per object). Values are written as text, typed by the
 * declarations (`lines` integer, `amount` and `weight` float), as the OCEL 2.0 JSON schema writes them.
 */
import { BufferedFile } from './buffered-file.js'

/** What the written log holds. */
export interface LargeOcelCounts {
  events: number
  objects: number
  e2o: number
  o2o: number
  objectAttributeValues: number
  bytes: number
}

const MINUTE = 60_000
const BASE = Date.UTC(2024, 0, 1)

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Order {
  id: string
  customer: string
  items: string[]
  channel: string
  amount: string
  /** Times (ms) of place, picks, pay and ship. */
  place: number
  picks: number[]
  pay: number
  ship: number
}

/** Order `i` of the log, the same on every call (its own seeded PRNG). */
function orderOf(i: number, customers: number, seed: number): Order {
  const r = random(seed * 1_000_003 + i)
  const items = Array.from({ length: 1 + (i % 3) }, (_, k) => `i-${String(i)}-${String(k)}`)
  const place = BASE + i * 7 * MINUTE + Math.floor(r() * 5) * MINUTE
  const picks = items.map((_, k) => place + (10 + k * 3) * MINUTE + Math.floor(r() * 3) * MINUTE)
  const pay = place + 60 * MINUTE + Math.floor(r() * 600) * MINUTE
  const ship = Math.max(pay, picks[picks.length - 1] ?? place) + Math.floor(1 + r() * 1000) * MINUTE
  return {
    id: `o-${String(i)}`,
    customer: `c-${String(Math.floor(r() * customers))}`,
    items,
    channel: r() < 0.5 ? 'web' : 'shop',
    amount: (10 + Math.floor(r() * 99_000) / 100).toFixed(2),
    place,
    picks,
    pay,
    ship,
  }
}

const iso = (ms: number) => new Date(ms).toISOString()
const EPOCH = '1970-01-01T00:00:00.000Z'

/** The log's object and event types with their attribute declarations, as the OCEL 2.0 JSON document opens. */
const TYPES =
  '{"objectTypes":[' +
  [
    { name: 'order', attributes: [{ name: 'status', type: 'string' }] },
    { name: 'customer', attributes: [{ name: 'segment', type: 'string' }] },
    { name: 'item', attributes: [{ name: 'weight', type: 'float' }] },
  ]
    .map((d) => JSON.stringify(d))
    .join(',') +
  '],"eventTypes":[' +
  [
    {
      name: 'place order',
      attributes: [
        { name: 'channel', type: 'string' },
        { name: 'lines', type: 'integer' },
      ],
    },
    { name: 'pick item', attributes: [] },
    { name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] },
    { name: 'ship order', attributes: [] },
  ]
    .map((d) => JSON.stringify(d))
    .join(',') +
  ']'

/** The items of one JSON array written to `file`, one a line: `add` writes the separator and the item. */
class JsonList {
  private first = true
  constructor(private readonly file: BufferedFile) {}
  add(value: unknown): void {
    this.file.put(`${this.first ? '\n' : ',\n'}${JSON.stringify(value)}`)
    this.first = false
  }
}

/** The log's shape: its orders and customers, and the PRNG seed of its orders (orderOf). */
interface Shape {
  orders: number
  customers: number
  seed: number
}

/** Writes the `objects` array's items: the customers, then each order followed by its items, each with its attribute history. */
function writeObjects(list: JsonList, { orders, customers, seed }: Shape, counts: LargeOcelCounts): void {
  for (let c = 0; c < customers; c++) {
    list.add({ id: `c-${String(c)}`, type: 'customer', attributes: [{ name: 'segment', time: EPOCH, value: c % 7 === 0 ? 'key account' : 'retail' }] })
    counts.objects += 1
    counts.objectAttributeValues += 1
  }
  for (let i = 0; i < orders; i++) {
    const o = orderOf(i, customers, seed)
    list.add({
      id: o.id,
      type: 'order',
      attributes: [{ name: 'status', time: EPOCH, value: 'open' }, ...(i % 10 === 0 ? [{ name: 'status', time: iso(o.ship), value: 'shipped' }] : [])],
      relationships: [{ objectId: o.customer, qualifier: 'placed by' }, ...o.items.map((id) => ({ objectId: id, qualifier: 'contains' }))],
    })
    counts.objects += 1
    counts.objectAttributeValues += i % 10 === 0 ? 2 : 1
    counts.o2o += 1 + o.items.length
    for (const [k, id] of o.items.entries()) {
      list.add({ id, type: 'item', attributes: [{ name: 'weight', time: EPOCH, value: ((i + k) % 50) / 4 + 0.5 }] })
      counts.objects += 1
      counts.objectAttributeValues += 1
    }
  }
}

/** Writes the `events` array's items: per order, `place order`, a `pick item` per item, `pay order` and `ship order`. */
function writeEvents(list: JsonList, { orders, customers, seed }: Shape, counts: LargeOcelCounts): void {
  for (let i = 0; i < orders; i++) {
    const o = orderOf(i, customers, seed)
    const event = (
      suffix: string,
      type: string,
      time: number,
      attributes: { name: string; value: string }[],
      relationships: { objectId: string; qualifier: string }[],
    ) => {
      list.add({ id: `e-${String(i)}-${suffix}`, type, time: iso(time), attributes, relationships })
      counts.events += 1
      counts.e2o += relationships.length
    }
    const items = o.items.map((id) => ({ objectId: id, qualifier: 'item' }))
    event(
      'place',
      'place order',
      o.place,
      [
        { name: 'channel', value: o.channel },
        { name: 'lines', value: String(o.items.length) },
      ],
      [{ objectId: o.id, qualifier: 'order' }, { objectId: o.customer, qualifier: 'customer' }, ...items],
    )
    for (const [k, id] of o.items.entries()) {
      event(
        `pick-${String(k)}`,
        'pick item',
        o.picks[k] ?? o.place,
        [],
        [
          { objectId: id, qualifier: 'item' },
          { objectId: o.id, qualifier: 'order' },
        ],
      )
    }
    event('pay', 'pay order', o.pay, [{ name: 'amount', value: o.amount }], [{ objectId: o.id, qualifier: 'order' }])
    event('ship', 'ship order', o.ship, [], [{ objectId: o.id, qualifier: 'order' }, ...items])
  }
}

/**
 * Writes the log (see module comment) to `path` as OCEL 2.0 JSON.
 * @param orders orders in the log (5 events each on average).
 * @param seed the PRNG seed (default 1).
 * @returns what the file holds.
 */
export function writeLargeOcelJson(path: string, orders: number, seed = 1): LargeOcelCounts {
  const shape: Shape = { orders, customers: Math.max(1, Math.floor(orders / 20)), seed }
  const counts: LargeOcelCounts = { events: 0, objects: 0, e2o: 0, o2o: 0, objectAttributeValues: 0, bytes: 0 }
  const file = new BufferedFile(path)
  try {
    file.put(TYPES)
    file.put(',"objects":[')
    writeObjects(new JsonList(file), shape, counts)
    file.put('\n],"events":[')
    writeEvents(new JsonList(file), shape, counts)
    file.put('\n]}\n')
  } finally {
    file.close()
  }
  counts.bytes = file.bytes
  return counts
}
