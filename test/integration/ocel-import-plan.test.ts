/**
 * The import plan (src/ocel/import/action-planner.ts, cutter.ts, memory-plan.ts): the mapping of events and object attributes to API
 * items, the skips and their counts, and the per-object order of batches, checked on small logs, on
 * the generated log (every form) and on the real logs with the most timed attribute changes
 * (skipped when the shared folder is absent).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newNotes, type OcelEvent, type OcelLog, type OcelObject } from '../../src/ocel/import/model.js'
import { eventKey } from '../../src/ocel/import/action-planner.js'
import { planImport as planWithKeys } from '../../src/ocel/import/memory-plan.js'
import { UNDEFINED_OBJECT_TYPE, type ImportPlan, type PlanOptions } from '../../src/ocel/import/plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { itWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel, type GeneratedOcelFiles } from '../helpers/generated-ocel.js'

/**
 * The plan without its idempotency keys, so that the mapping tests compare items as the API's
 * fields; every item must have had a key derived from the log (the keys have tests of their own).
 */
function planImport(log: OcelLog, options: PlanOptions = {}): ImportPlan {
  const plan = planWithKeys(log, options)
  for (const b of plan.batches) {
    for (const item of b.items) {
      expect(item.idempotency_key).toMatch(/^ocel:/)
      delete item.idempotency_key
    }
  }
  return plan
}

const DATA = OCEL_DIR
const T = (h: number) => Date.UTC(2024, 0, 1, h)

function log(objects: OcelObject[], events: OcelEvent[]): OcelLog {
  return { format: 'json', eventTypes: [], objectTypes: [], objects, events, notes: newNotes('UTC') }
}

const order = (id: string, attributes: OcelObject['attributes'] = [], relationships: OcelObject['relationships'] = []): OcelObject => ({
  id,
  type: 'order',
  attributes,
  relationships,
})
const event = (id: string, time: number, objectIds: string[], attributes: Record<string, unknown> = {}): OcelEvent => ({
  id,
  type: 'pay',
  time,
  attributes,
  relationships: objectIds.map((objectId) => ({ objectId, qualifier: null })),
})

describe('planImport mapping', () => {
  it('maps an event to a batch item: type, time with ms, attributes, E2O with type and qualifier', () => {
    const plan = planImport(
      log(
        [order('o1'), { id: 'c1', type: 'customer', attributes: [], relationships: [] }],
        [
          {
            id: 'e1',
            type: 'place order',
            time: T(9) + 5,
            attributes: { channel: 'web', total: 12.5 },
            relationships: [
              { objectId: 'o1', qualifier: 'order' },
              { objectId: 'c1', qualifier: null },
            ],
          },
        ],
      ),
    )
    const events = plan.batches.filter((b) => b.kind === 'events')
    expect(events).toHaveLength(1)
    expect(events[0]?.items).toEqual([
      {
        event: 'place order',
        timestamp: '2024-01-01T09:00:00.005Z',
        properties: { channel: 'web', total: 12.5 },
        objects: [
          { type: 'order', id: 'o1', qualifier: 'order' },
          { type: 'customer', id: 'c1' },
        ],
      },
    ])
    expect(events[0]?.sources).toEqual(['e1'])
  })

  it('turns an attribute history into one upsert per time, initial values first', () => {
    const plan = planImport(
      log(
        [
          order('o1', [
            { name: 'status', time: T(12), value: 'paid' },
            { name: 'status', time: 0, value: 'open' },
            { name: 'total', time: 0, value: 10 },
          ]),
        ],
        [],
      ),
    )
    expect(plan.batches.flatMap((b): unknown[] => b.items)).toEqual([
      { type: 'order', id: 'o1', properties: { status: 'open', total: 10 }, timestamp: '1970-01-01T00:00:00.000Z' },
      { type: 'order', id: 'o1', properties: { status: 'paid' }, timestamp: '2024-01-01T12:00:00.000Z' },
    ])
    expect(plan.upserts).toBe(2)
    expect(plan.objects).toBe(1)
  })

  it('upserts an object without attributes once, without properties, so that it exists', () => {
    const plan = planImport(log([order('o1')], []))
    expect(plan.batches.flatMap((b): unknown[] => b.items)).toEqual([{ type: 'order', id: 'o1' }])
  })

  it('cuts batches of at most 100 items of one kind', () => {
    const objects = Array.from({ length: 250 }, (_, i) => order(`o${String(i)}`))
    const events = Array.from({ length: 250 }, (_, i) => event(`e${String(i)}`, T(1) + i, [`o${String(i)}`]))
    const plan = planImport(log(objects, events))
    // The third upsert batch stays open until e200 names o200; the event batches that need not wait for it close before it.
    expect(plan.batches.map((b) => `${b.kind}:${String(b.items.length)}`)).toEqual([
      'objects:100',
      'objects:100',
      'events:100',
      'events:100',
      'objects:50',
      'events:50',
    ])
  })
})

describe('planImport idempotency keys', () => {
  const keysOf = (plan: ImportPlan) => plan.batches.flatMap((b) => b.items.map((i) => i.idempotency_key))

  it('derives keys from the log: the same log planned twice gives the same keys, one per item', () => {
    const source = log(
      [
        order('o1', [
          { name: 'status', value: 'open', time: 0 },
          { name: 'status', value: 'paid', time: 5000 },
          { name: 'status', value: 'open', time: 9000 },
        ]),
      ],
      [event('e1', 1000, ['o1']), event('e2', 2000, ['o1'])],
    )
    const [a, b] = [planWithKeys(source), planWithKeys(source)]
    expect(keysOf(a)).toEqual(keysOf(b))
    expect(new Set(keysOf(a)).size).toBe(5)
    expect(keysOf(a).filter((k) => k?.startsWith('ocel:event:'))).toEqual(['ocel:event:e1', 'ocel:event:e2'])
  })

  it('gives equal values of one object at two times two keys, and keeps logs apart by the key prefix', () => {
    const source = log(
      [
        order('o1', [
          { name: 'status', value: 'open', time: 1000 },
          { name: 'status', value: 'open', time: 2000 },
        ]),
      ],
      [event('e1', 1500, ['o1'])],
    )
    const upserts = (plan: ImportPlan) => keysOf(plan).filter((k) => k?.includes('object:'))
    expect(new Set(upserts(planWithKeys(source))).size).toBe(2)
    expect(keysOf(planWithKeys(source, { keyPrefix: 'march/' }))).toContain('ocel:march/event:e1')
  })

  it('hashes an event id too long for a key, within the 255 characters of a key', () => {
    const long = eventKey('', 'x'.repeat(300))
    expect([long.length <= 255, long.startsWith('ocel:event-sha256:'), eventKey('', 'x'.repeat(300))]).toEqual([true, true, long])
  })

  it('hashes an event id holding U+0000, which a key may not hold', () => {
    const key = eventKey('', 'e\u00001')
    expect([key.startsWith('ocel:event-sha256:'), key.includes('\u0000'), key === eventKey('', 'e\u00002')]).toEqual([true, false, false])
  })
})

describe('planImport end_timestamp', () => {
  const items = (plan: ImportPlan) => plan.batches.flatMap((b) => (b.kind === 'events' ? b.items : []))

  it('maps the end_timestamp attribute that ocelog export writes back to the API’s end_timestamp', () => {
    const plan = planImport(log([order('o1')], [event('e1', T(9), ['o1'], { end_timestamp: '2024-01-01T09:30:00.250Z', channel: 'web' })]))
    expect(items(plan)).toEqual([
      {
        event: 'pay',
        timestamp: '2024-01-01T09:00:00.000Z',
        end_timestamp: '2024-01-01T09:30:00.250Z',
        properties: { channel: 'web' },
        objects: [{ type: 'order', id: 'o1' }],
      },
    ])
    expect(plan.skipped).toEqual({})
  })

  it('normalizes an end_timestamp with an offset to UTC and sends no empty properties', () => {
    const plan = planImport(log([order('o1')], [event('e1', T(9), ['o1'], { end_timestamp: '2024-01-01T11:00:00+01:00' })]))
    expect(items(plan)).toEqual([
      { event: 'pay', timestamp: '2024-01-01T09:00:00.000Z', end_timestamp: '2024-01-01T10:00:00.000Z', objects: [{ type: 'order', id: 'o1' }] },
    ])
  })

  it('takes ocelog:end_timestamp when the type has its own end_timestamp property, keeping that one', () => {
    const plan = planImport(log([order('o1')], [event('e1', T(9), ['o1'], { end_timestamp: 'whenever', 'ocelog:end_timestamp': '2024-01-01T09:05:00.000Z' })]))
    expect(items(plan)[0]).toMatchObject({ end_timestamp: '2024-01-01T09:05:00.000Z', properties: { end_timestamp: 'whenever' } })
  })

  it('keeps an unusable end_timestamp as a property and counts it', () => {
    const plan = planImport(
      log(
        [order('o1')],
        [
          event('e1', T(9), ['o1'], { end_timestamp: 'soon' }),
          event('e2', T(9), ['o1'], { end_timestamp: '2024-01-01T08:00:00.000Z' }),
          event('e3', T(9), ['o1'], { end_timestamp: 12 }),
        ],
      ),
    )
    expect(items(plan).map((i) => [i.end_timestamp, i.properties])).toEqual([
      [undefined, { end_timestamp: 'soon' }],
      [undefined, { end_timestamp: '2024-01-01T08:00:00.000Z' }],
      [undefined, { end_timestamp: 12 }],
    ])
    expect(plan.skipped.end_timestamp_unusable?.count).toBe(3)
  })
})

describe('planImport of objects the log never defines', () => {
  it('sends a reference to an undefined object with the placeholder type, keeping the event whole, and counts it', () => {
    const plan = planImport(log([order('o1')], [event('e1', T(1), ['o1', 'ghost'])]))
    expect(plan.batches.find((b) => b.kind === 'events')?.items).toEqual([
      {
        event: 'pay',
        timestamp: '2024-01-01T01:00:00.000Z',
        objects: [
          { type: 'order', id: 'o1' },
          { type: 'ocelog:undefined', id: 'ghost' },
        ],
      },
    ])
    expect([plan.undefinedObjects, plan.skipped]).toEqual([{ type: UNDEFINED_OBJECT_TYPE, objects: 1, events: 1 }, {}])
  })

  it('sends an event that names only undefined objects', () => {
    const plan = planImport(log([], [event('e1', T(1), ['ghost']), event('e2', T(2), ['ghost', 'other'])]))
    expect(plan.events).toBe(2)
    expect(plan.undefinedObjects).toEqual({ type: 'ocelog:undefined', objects: 2, events: 2 })
  })

  it('gives undefined objects the type of the unknownObjectType option', () => {
    const plan = planImport(log([], [event('e1', T(1), ['hu1'])]), { unknownObjectType: 'Handling Unit' })
    expect(plan.batches.flatMap((b) => (b.kind === 'events' ? b.items.flatMap((i) => i.objects) : []))).toEqual([{ type: 'Handling Unit', id: 'hu1' }])
    expect(plan.undefinedObjects).toEqual({ type: 'Handling Unit', objects: 1, events: 1 })
  })

  it('does not count the undefined objects of an event it cannot send', () => {
    const objects = Array.from({ length: 50 }, (_, i) => order(`o${String(i)}`))
    const plan = planImport(log(objects, [event('big', T(1), [...objects.map((o) => o.id), 'ghost'])]))
    expect([plan.events, plan.undefinedObjects]).toEqual([0, { type: 'ocelog:undefined', objects: 0, events: 0 }])
  })
})

describe('planImport skips', () => {
  it('skips and counts an event without objects', () => {
    const plan = planImport(log([], [event('e1', T(1), [])]))
    expect(plan.events).toBe(0)
    expect(plan.skipped.event_without_objects).toEqual({ count: 1, examples: ['e1'] })
  })

  it('skips and counts an event with more than 50 objects', () => {
    const objects = Array.from({ length: 51 }, (_, i) => order(`o${String(i)}`))
    const plan = planImport(
      log(objects, [
        event(
          'big',
          T(1),
          objects.map((o) => o.id),
        ),
        event('ok', T(2), ['o1']),
      ]),
    )
    expect(plan.events).toBe(1)
    expect(plan.skipped.event_over_50_objects).toEqual({ count: 1, examples: ['big (51 objects)'] })
  })

  it('sends a repeated (object, qualifier) once and counts the repeat', () => {
    const plan = planImport(log([order('o1')], [event('e1', T(1), ['o1', 'o1'])]))
    expect(plan.batches.find((b) => b.kind === 'events')?.items[0]?.objects).toEqual([{ type: 'order', id: 'o1' }])
    expect(plan.skipped.e2o_duplicate?.count).toBe(1)
  })

  it('keeps apart (object, qualifier) pairs whose texts run together, and no qualifier from an empty one', () => {
    const objects = ['a', 'ba', 'b', ''].map((id) => order(id))
    const e: OcelEvent = {
      ...event('e1', T(1), []),
      relationships: [
        { objectId: 'ba', qualifier: 'x' },
        { objectId: 'a', qualifier: 'xb' },
        { objectId: 'b', qualifier: null },
        { objectId: 'b', qualifier: '' },
        { objectId: '', qualifier: 'b' },
        { objectId: 'b', qualifier: null },
      ],
    }
    const plan = planImport(log(objects, [e]))
    expect(plan.batches.find((b) => b.kind === 'events')?.items[0]?.objects).toEqual([
      { type: 'order', id: 'ba', qualifier: 'x' },
      { type: 'order', id: 'a', qualifier: 'xb' },
      { type: 'order', id: 'b' },
      { type: 'order', id: 'b', qualifier: '' },
      { type: 'order', id: '', qualifier: 'b' },
    ])
    expect(plan.skipped).toEqual({ e2o_duplicate: { count: 1, examples: ['e1 → b'] } })
  })

  it('sends O2O relationships on the first upsert, the target typed as the log defines it, a repeated one once', () => {
    const customer: OcelObject = { id: 'c1', type: 'customer', attributes: [], relationships: [] }
    const o1 = order(
      'o1',
      [
        { name: 'status', time: T(3), value: 'paid' },
        { name: 'status', time: T(1), value: 'open' },
      ],
      [
        { objectId: 'c1', qualifier: 'placed by' },
        { objectId: 'o2', qualifier: null },
        { objectId: 'c1', qualifier: 'placed by' },
        { objectId: 'nowhere', qualifier: 'ghost' },
      ],
    )
    const plan = planImport(log([o1, order('o2'), customer], []))
    const items = plan.batches.flatMap((b): unknown[] => b.items)
    expect(items).toContainEqual({
      type: 'order',
      id: 'o1',
      properties: { status: 'open' },
      timestamp: '2024-01-01T01:00:00.000Z',
      relationships: [
        { type: 'customer', id: 'c1', qualifier: 'placed by' },
        { type: 'order', id: 'o2' },
        { type: 'ocelog:undefined', id: 'nowhere', qualifier: 'ghost' },
      ],
    })
    expect(items).toContainEqual({ type: 'order', id: 'o1', properties: { status: 'paid' }, timestamp: '2024-01-01T03:00:00.000Z' })
    expect(plan.skipped).toEqual({ o2o_duplicate: { count: 1, examples: ['o1 → c1'] } })
    expect(plan.undefinedObjects).toEqual({ type: 'ocelog:undefined', objects: 1, events: 0 })
  })

  it('sends more than 100 O2O relationships of one object in upserts of at most 100, at the time of its first', () => {
    const targets = Array.from({ length: 250 }, (_, i) => order(`t${String(i)}`))
    const hub = order(
      'hub',
      [{ name: 'size', time: T(2), value: 250 }],
      targets.map((t) => ({ objectId: t.id, qualifier: 'has' })),
    )
    const items = planImport(log([hub, ...targets], [])).batches.flatMap((b) => (b.kind === 'objects' ? b.items.filter((i) => i.id === 'hub') : []))
    expect(items.map((i) => [i.timestamp, i.properties, i.relationships?.length])).toEqual([
      ['2024-01-01T02:00:00.000Z', { size: 250 }, 100],
      ['2024-01-01T02:00:00.000Z', undefined, 100],
      ['2024-01-01T02:00:00.000Z', undefined, 50],
    ])
    expect(new Set(items.flatMap((i) => i.relationships?.map((r) => r.id) ?? [])).size).toBe(250)
  })

  itWithSharedOcel('keeps every event of the ocpa logistics log, whose Collect Goods events name only undefined Handling Units (SOURCES.md)', () => {
    const plan = planImport(readOcelFile(join(DATA, 'raw/ocpa__logistics.sqlite'), parseTimeZone('UTC')))
    expect(plan.events).toBe(8727)
    // 2,540 Handling Units, each named by its Collect Goods event and by one other event.
    expect(plan.undefinedObjects).toEqual({ type: 'ocelog:undefined', objects: 2540, events: 5080 })
    expect(plan.skipped).toEqual({})
    const o2o = plan.batches.flatMap((b) => (b.kind === 'objects' ? b.items : [])).reduce((n, i) => n + (i.relationships?.length ?? 0), 0)
    expect(o2o).toBe(3960)
  })
})

/**
 * Checks the order contract of cutter.ts on a plan: `after` points backwards, and for every object,
 * its upserts are chained in time order, an event waits for the object's upserts at or before its
 * time, and an upsert waits for the events naming the object before its time (all transitively).
 */
function checkOrder(source: OcelLog, plan: ImportPlan): string[] {
  const problems: string[] = []
  const n = plan.batches.length
  const before: Set<number>[] = []
  plan.batches.forEach((b, i) => {
    const all = new Set<number>()
    for (const a of b.after) {
      if (a >= i) problems.push(`batch ${String(i)} waits for later batch ${String(a)}`)
      all.add(a)
      for (const x of before[a] ?? []) all.add(x)
    }
    before.push(all)
  })
  const ordered = (a: number, b: number) => a === b || (before[b]?.has(a) ?? false)
  // Per object: (time, kind, batch, position in batch), from the plan's items.
  type Touch = { time: number; kind: 'upsert' | 'event'; batch: number; pos: number }
  const touches = new Map<string, Touch[]>()
  const eventTimes = new Map(source.events.map((e) => [e.id, e.time]))
  const typeOf = new Map(source.objects.map((o) => [o.id, o.type]))
  for (let i = 0; i < n; i++) {
    const b = plan.batches[i]
    if (b === undefined) continue
    b.items.forEach((item, pos) => {
      if (b.kind === 'objects') {
        const src = b.sources[pos] ?? ''
        const at = src.slice(src.lastIndexOf(' @ ') + 3)
        const time = at === 'initial' ? Number.NEGATIVE_INFINITY : Date.parse(at)
        const key = `${String(typeOf.get(src.slice(0, src.lastIndexOf(' @ '))))}/${String((item as { id: string }).id)}`
        touches.set(key, [...(touches.get(key) ?? []), { time, kind: 'upsert', batch: i, pos }])
      } else {
        const time = eventTimes.get(b.sources[pos] ?? '') ?? Number.NaN
        for (const o of (item as { objects: { type: string; id: string }[] }).objects) {
          const key = `${o.type}/${o.id}`
          touches.set(key, [...(touches.get(key) ?? []), { time, kind: 'event', batch: i, pos }])
        }
      }
    })
  }
  for (const [key, list] of touches) {
    const upserts = list.filter((t) => t.kind === 'upsert').sort((a, b) => a.time - b.time)
    for (let k = 1; k < upserts.length; k++) {
      const a = upserts[k - 1]
      const b = upserts[k]
      if (a === undefined || b === undefined) continue
      const fine = a.batch === b.batch ? a.pos < b.pos : ordered(a.batch, b.batch)
      if (!fine) problems.push(`${key}: upsert at ${String(b.time)} may land before the one at ${String(a.time)}`)
    }
    for (const e of list.filter((t) => t.kind === 'event')) {
      for (const u of upserts) {
        if (u.time <= e.time && !ordered(u.batch, e.batch)) problems.push(`${key}: event at ${String(e.time)} may land before the upsert at ${String(u.time)}`)
        if (u.time > e.time && !ordered(e.batch, u.batch)) problems.push(`${key}: upsert at ${String(u.time)} may land before the event at ${String(e.time)}`)
      }
    }
  }
  return problems
}

describe('planImport order', () => {
  it('makes an event wait for the upsert that precedes it, and the next upsert wait for the event', () => {
    const plan = planImport(
      log(
        [
          order('o1', [
            { name: 'status', time: 0, value: 'open' },
            { name: 'status', time: T(5), value: 'paid' },
          ]),
          order('o2'),
        ],
        [event('e1', T(1), ['o1']), event('e2', T(2), ['o2']), event('e3', T(6), ['o1'])],
      ),
    )
    expect(plan.batches.map((b) => [b.kind, b.sources, b.after])).toEqual([
      ['objects', ['o2 @ initial', 'o1 @ 1970-01-01T00:00:00.000Z'], []],
      ['events', ['e1', 'e2'], [0]],
      ['objects', ['o1 @ 2024-01-01T05:00:00.000Z'], [0, 1]],
      ['events', ['e3'], [2]],
    ])
  })

  it('keeps unrelated upserts out of the way of an event batch', () => {
    const plan = planImport(log([order('o1'), order('o2', [{ name: 'x', time: T(2), value: 1 }])], [event('e1', T(1), ['o1']), event('e2', T(3), ['o1'])]))
    // o2's upsert joins the open upsert batch (nothing it waits for comes after it), and the events stay in one batch.
    expect(plan.batches.map((b) => [b.kind, b.sources])).toEqual([
      ['objects', ['o1 @ initial', 'o2 @ 2024-01-01T02:00:00.000Z']],
      ['events', ['e1', 'e2']],
    ])
  })

  it('keeps batches full when objects change between their events (an upsert waits behind the open event batch)', () => {
    // 300 orders placed in turn, each changed 5 minutes after its placing, all shipped later: every change
    // must wait for its placing and come before its shipping, which cut batches of 1 to 2 items when a
    // conflict closed the open batch. (Events keep their order in the log, so an order shipped between
    // two placings would still cut them: its change must land between them.)
    const minute = 60_000
    const objects = Array.from({ length: 300 }, (_, i) =>
      order(`o${String(i)}`, [
        { name: 'status', time: 0, value: 'open' },
        { name: 'status', time: T(1) + i * 10 * minute + 5 * minute, value: 'confirmed' },
      ]),
    )
    const events = objects.flatMap((o, i) => [
      event(`place ${o.id}`, T(1) + i * 10 * minute, [o.id]),
      event(`ship ${o.id}`, T(1) + 3000 * minute + i * minute, [o.id]),
    ])
    const source = log(objects, events)
    const plan = planImport(source)
    expect(checkOrder(source, plan)).toEqual([])
    // 600 upserts and 600 events: 12 full batches.
    expect(plan.batches.map((b) => b.items.length)).toEqual(Array.from({ length: 12 }, () => 100))
  })

  itWithSharedOcel('holds the order contract on the pm4py example', () => {
    const source = readOcelFile(join(DATA, 'raw/pm4py__ocel20_example.jsonocel'), parseTimeZone('UTC'))
    expect(checkOrder(source, planImport(source))).toEqual([])
  })

  itWithSharedOcel('holds the order contract on the ocpa logistics log (1,420 timed attribute changes)', () => {
    const source = readOcelFile(join(DATA, 'derived/ocpa__logistics.ocel2.json'), parseTimeZone('UTC'))
    const plan = planImport(source)
    expect(checkOrder(source, plan)).toEqual([])
    expect(plan.batches.every((b) => b.items.length <= 100 && b.items.length === b.sources.length)).toBe(true)
    expect(plan.batches.reduce((n, b) => n + (b.kind === 'events' ? b.items.length : 0), 0)).toBe(plan.events)
  })

  it('finds a broken order (the checker can fail)', () => {
    const source = log([order('o1', [{ name: 's', time: 0, value: 'a' }])], [event('e1', T(1), ['o1'])])
    const plan = planImport(source)
    const broken: ImportPlan = { ...plan, batches: plan.batches.map((b) => ({ ...b, after: [] })) }
    expect(checkOrder(source, broken)).toEqual(['order/o1: event at 1704070800000 may land before the upsert at 0'])
  })
})

describe('planImport on the generated log', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'ocelog-plan-'))
  let files: GeneratedOcelFiles
  beforeAll(() => {
    files = writeGeneratedOcel(tmp)
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))
  const read = (form: keyof GeneratedOcelFiles) => readOcelFile(files[form], parseTimeZone('UTC'))

  it('counts what it cannot send (the event with 51 objects) and the undefined objects (E2O and O2O targets) it sends with the placeholder type', () => {
    const plan = planImport(read('json'))
    expect({ events: plan.events, upserts: plan.upserts, objects: plan.objects }).toEqual({ events: 7, upserts: 61, objects: 57 })
    expect(plan.undefinedObjects).toEqual({ type: 'ocelog:undefined', objects: 3, events: 2 })
    expect(plan.skipped).toEqual({ event_over_50_objects: { count: 1, examples: ['e5 (51 objects)'] } })
    const o2o = plan.batches.flatMap((b) => (b.kind === 'objects' ? b.items.flatMap((i) => (i.relationships ?? []).map((r) => [i.id, r])) : []))
    expect(o2o).toEqual([
      ['o-1', { type: 'Kunde 客户', id: '客户-1', qualifier: 'placed by' }],
      ['o-1', { type: 'ocelog:undefined', id: 'ghost-order' }],
      ['item-1', { type: 'order', id: 'o-1', qualifier: 'part of' }],
    ])
  })

  it('sends the event with exactly 50 objects, with their types and qualifiers', () => {
    const plan = planImport(read('json'))
    const e4 = plan.batches.flatMap((b) => (b.kind === 'events' ? b.items.filter((_, i) => b.sources[i] === 'e4') : []))
    expect(e4).toHaveLength(1)
    expect(e4[0]?.objects).toHaveLength(50)
    expect(e4[0]?.objects.slice(0, 2)).toEqual([
      { type: 'order', id: 'o-1', qualifier: 'order' },
      { type: 'item', id: 'item-1', qualifier: 'packed' },
    ])
    expect(e4[0]?.timestamp).toBe('2024-03-02T07:00:00.000Z')
  })

  it('maps unicode types, ids, attributes and offsets to API items, and "" to no qualifier', () => {
    const items = planImport(read('json')).batches.flatMap((b): unknown[] => b.items)
    expect(items).toContainEqual({
      event: 'place order',
      timestamp: '2024-03-01T15:00:00.123Z',
      properties: { channel: 'phone', lines: 1 },
      objects: [
        { type: 'order', id: 'o-2' },
        { type: 'Kunde 客户', id: '😀-2', qualifier: 'customer' },
      ],
    })
    expect(items).toContainEqual({
      type: 'Kunde 客户',
      id: '客户-1',
      properties: { name: 'Zoë Müller & Söhne <GmbH> "Ost"', größe: 'XL' },
      timestamp: '1970-01-01T00:00:00.000Z',
    })
  })

  for (const form of ['json', 'xml', 'sqlite'] as const) {
    it(`holds the order contract on the ${form} form`, () => {
      const source = read(form)
      const plan = planImport(source)
      expect(checkOrder(source, plan)).toEqual([])
      expect(plan.events).toBe(7)
    })
  }
})
