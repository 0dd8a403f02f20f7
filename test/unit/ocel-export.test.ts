import { describe, expect, it } from 'vitest'
import { Compile } from 'typebox/compile'
import { ocelValue, summarize, toOcelJson, type ExportRows } from '../../src/ocel/export.js'
import { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRow } from '../../src/schemas/read-models.js'

const D = 'ds1'
const T0 = '2024-05-01T10:00:00.000Z'

function event(id: string, type: string, position: number, extra: Partial<EventRow> = {}): EventRow {
  return {
    dataset_id: D,
    event_id: id,
    event_type: type,
    timestamp: T0,
    end_timestamp: null,
    properties: {},
    objects_count: 0,
    received_at: T0,
    position,
    ...extra,
  }
}

function object(objectId: string, type: string, externalId: string): ObjectRow {
  return { dataset_id: D, object_id: objectId, type, external_id: externalId, properties: {}, created_at: T0, updated_at: T0, position: 1 }
}

function e2o(eventId: string, o: ObjectRow, qualifier: string | null, position = 1): EventObjectRow {
  return { dataset_id: D, event_id: eventId, object_id: o.object_id, qualifier, object_type: o.type, external_id: o.external_id, event_time: T0, position }
}

function change(o: ObjectRow, position: number, time: string, attributes: Record<string, unknown>): ObjectChangeRow {
  return { dataset_id: D, object_id: o.object_id, position, time, attributes }
}

function typeRow(name: string): EventTypeRow {
  return { dataset_id: D, name, source: 'public_api', first_seen_at: T0, last_seen_at: T0, count: 1, position: 1 }
}

function rows(partial: Partial<ExportRows>): ExportRows {
  return { eventTypes: [], objectTypes: [], objects: [], objectChanges: [], events: [], eventObjects: [], objectRelationships: [], ...partial }
}

const order1 = object('oid-order-1', 'order', '1')
const item1 = object('oid-item-1', 'item', '1')
const item2 = object('oid-item-2', 'item', '2')

describe('toOcelJson', () => {
  it('writes the qualifier "" when none was sent and keeps a sent one', () => {
    const doc = toOcelJson(
      rows({ events: [event('e1', 'place', 1)], objects: [order1, item2], eventObjects: [e2o('e1', order1, null), e2o('e1', item2, 'line')] }),
    )
    expect(doc.events[0]?.relationships).toEqual([
      { objectId: '1', qualifier: '' },
      { objectId: '2', qualifier: 'line' },
    ])
  })

  it('writes type/id for every object whose external id several object types share, and E2O uses it', () => {
    const doc = toOcelJson(
      rows({
        events: [event('e1', 'place', 1)],
        objects: [order1, item1, item2],
        eventObjects: [e2o('e1', order1, null), e2o('e1', item1, null), e2o('e1', item2, null)],
      }),
    )
    expect(doc.objects.map((o) => [o.type, o.id])).toEqual([
      ['item', '2'],
      ['item', 'item/1'],
      ['order', 'order/1'],
    ])
    expect(doc.events[0]?.relationships.map((r) => r.objectId)).toEqual(['2', 'item/1', 'order/1'])
  })

  it("falls back to Ocelog's object_id when type/id collides with another external id", () => {
    const tricky = object('oid-x', 'x', 'order/1')
    const doc = toOcelJson(rows({ objects: [order1, item1, tricky] }))
    expect(doc.objects.map((o) => o.id)).toEqual(['item/1', 'oid-order-1', 'oid-x'])
  })

  it('drops a repeated (object, qualifier) pair of one event', () => {
    const doc = toOcelJson(
      rows({ events: [event('e1', 'place', 1)], objects: [item2], eventObjects: [e2o('e1', item2, 'a'), e2o('e1', item2, 'a'), e2o('e1', item2, 'b')] }),
    )
    expect(doc.events[0]?.relationships).toEqual([
      { objectId: '2', qualifier: 'a' },
      { objectId: '2', qualifier: 'b' },
    ])
  })

  it('infers attribute types from the values seen', () => {
    const doc = toOcelJson(
      rows({
        events: [
          event('e1', 'pay', 1, { properties: { n: 1, amount: 2, ok: true, note: 'x', mixed: 1, nested: { a: 1 }, list: [1], maybe: 3 } }),
          event('e2', 'pay', 2, { properties: { n: 7, amount: 2.5, ok: false, note: 'y', mixed: 'one', nested: { a: 2 }, list: [], maybe: null } }),
        ],
      }),
    )
    expect(doc.eventTypes).toEqual([
      {
        name: 'pay',
        attributes: [
          { name: 'amount', type: 'float' },
          { name: 'list', type: 'string' },
          { name: 'maybe', type: 'string' },
          { name: 'mixed', type: 'string' },
          { name: 'n', type: 'integer' },
          { name: 'nested', type: 'string' },
          { name: 'note', type: 'string' },
          { name: 'ok', type: 'boolean' },
        ],
      },
    ])
  })

  it('infers object attribute types from the attribute history', () => {
    const doc = toOcelJson(rows({ objects: [item2], objectChanges: [change(item2, 1, T0, { weight: 2 }), change(item2, 2, T0, { weight: 2.25 })] }))
    expect(doc.objectTypes).toEqual([{ name: 'item', attributes: [{ name: 'weight', type: 'float' }] }])
  })

  it('declares every read-model type, with attributes: [] when none was seen', () => {
    const doc = toOcelJson(
      rows({
        eventTypes: [typeRow('ping')],
        objectTypes: [typeRow('order')],
        events: [event('e1', 'ping', 1)],
        objects: [order1],
      }),
    )
    expect([doc.eventTypes, doc.objectTypes]).toEqual([[{ name: 'ping', attributes: [] }], [{ name: 'order', attributes: [] }]])
  })

  it('writes attribute values as strings', () => {
    const doc = toOcelJson(rows({ events: [event('e1', 'pay', 1, { properties: { i: 3, f: 0.5, t: true, n: null, o: { a: [1, 'b'] }, s: 'text' } })] }))
    expect(doc.events[0]?.attributes).toEqual([
      { name: 'i', value: '3' },
      { name: 'f', value: '0.5' },
      { name: 't', value: 'true' },
      { name: 'n', value: '' },
      { name: 'o', value: '{"a":[1,"b"]}' },
      { name: 's', value: 'text' },
    ])
  })

  it('adds end_timestamp as an attribute of type time', () => {
    const end = '2024-05-01T11:00:00.000Z'
    const doc = toOcelJson(rows({ events: [event('e1', 'ship', 1, { end_timestamp: end })] }))
    expect([doc.events[0]?.attributes, doc.eventTypes[0]?.attributes]).toEqual([
      [{ name: 'end_timestamp', value: end }],
      [{ name: 'end_timestamp', type: 'time' }],
    ])
  })

  it('names it ocelog:end_timestamp for a type whose events carry a property end_timestamp', () => {
    const end = '2024-05-01T11:00:00.000Z'
    const doc = toOcelJson(
      rows({
        events: [event('e1', 'ship', 1, { properties: { end_timestamp: 'client value' } }), event('e2', 'ship', 2, { end_timestamp: end })],
      }),
    )
    expect([doc.events[1]?.attributes, doc.eventTypes[0]?.attributes]).toEqual([
      [{ name: 'ocelog:end_timestamp', value: end }],
      [
        { name: 'end_timestamp', type: 'string' },
        { name: 'ocelog:end_timestamp', type: 'time' },
      ],
    ])
  })

  it('writes every declared type, used or not, and prefers the declared attribute types to the values', () => {
    const doc = toOcelJson(
      rows({
        events: [event('e1', 'ship', 1, { properties: { weight: 3 } })],
        declared: {
          event_types: [
            { name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] },
            { name: 'ship', attributes: [{ name: 'weight', type: 'float' }] },
          ],
          object_types: [{ name: 'warehouse', attributes: [] }],
        },
      }),
    )
    expect([doc.eventTypes, doc.objectTypes]).toEqual([
      [
        { name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] },
        { name: 'ship', attributes: [{ name: 'weight', type: 'float' }] },
      ],
      [{ name: 'warehouse', attributes: [] }],
    ])
  })

  it('writes the end time under a declared end_timestamp of type time (an exported log imported again), and beside one of another type', () => {
    const end = '2024-05-01T11:00:00.000Z'
    const declared = (type: 'time' | 'string') => ({ event_types: [{ name: 'ship', attributes: [{ name: 'end_timestamp', type }] }], object_types: [] })
    const asTime = toOcelJson(rows({ events: [event('e1', 'ship', 1, { end_timestamp: end })], declared: declared('time') }))
    const asString = toOcelJson(rows({ events: [event('e1', 'ship', 1, { end_timestamp: end })], declared: declared('string') }))
    expect([asTime.events[0]?.attributes, asTime.eventTypes[0]?.attributes]).toEqual([
      [{ name: 'end_timestamp', value: end }],
      [{ name: 'end_timestamp', type: 'time' }],
    ])
    expect([asString.events[0]?.attributes, asString.eventTypes[0]?.attributes]).toEqual([
      [{ name: 'ocelog:end_timestamp', value: end }],
      [
        { name: 'end_timestamp', type: 'string' },
        { name: 'ocelog:end_timestamp', type: 'time' },
      ],
    ])
  })

  it('writes the object attribute history in log position order, one entry per attribute per change', () => {
    const doc = toOcelJson(
      rows({
        objects: [item2],
        objectChanges: [
          change(item2, 9, '2024-05-03T00:00:00.000Z', { status: 'sent' }),
          change(item2, 4, '2024-05-02T00:00:00.000Z', { status: 'packed', weight: 2 }),
        ],
      }),
    )
    expect(doc.objects[0]?.attributes).toEqual([
      { name: 'status', time: '2024-05-02T00:00:00.000Z', value: 'packed' },
      { name: 'weight', time: '2024-05-02T00:00:00.000Z', value: '2' },
      { name: 'status', time: '2024-05-03T00:00:00.000Z', value: 'sent' },
    ])
  })

  it('orders events by time, then position', () => {
    const doc = toOcelJson(
      rows({ events: [event('late', 'a', 1, { timestamp: '2024-05-02T00:00:00.000Z' }), event('second', 'a', 3), event('first', 'a', 2)] }),
    )
    expect(doc.events.map((e) => e.id)).toEqual(['first', 'second', 'late'])
  })

  it('writes no O2O relationships', () => {
    const doc = toOcelJson(rows({ objects: [order1, item2] }))
    expect(doc.objects.map((o) => o.relationships)).toEqual([[], []])
  })

  it('produces a document that passes the strict OCEL 2.0 schema', () => {
    const doc = toOcelJson(
      rows({
        events: [event('e1', 'place', 1, { properties: { n: 1 }, end_timestamp: '2024-05-01T10:30:00.000Z' })],
        objects: [order1, item1],
        eventObjects: [e2o('e1', order1, null), e2o('e1', item1, 'line')],
        objectChanges: [change(item1, 1, T0, { w: 1.5 })],
      }),
    )
    expect(Compile(OcelJsonStrict).Errors(doc)).toEqual([])
  })
})

describe('ocelValue', () => {
  it('writes large and small numbers as JavaScript does', () => {
    expect([ocelValue(1e21), ocelValue(-0.000001), ocelValue(42)]).toEqual(['1e+21', '-0.000001', '42'])
  })
})

describe('summarize', () => {
  it('counts events, objects, types, E2O and O2O relationships', () => {
    const doc = toOcelJson(
      rows({
        events: [event('e1', 'place', 1), event('e2', 'pay', 2)],
        objects: [order1, item2],
        eventObjects: [e2o('e1', order1, null), e2o('e1', item2, null), e2o('e2', order1, null)],
        objectRelationships: [{ object_id: 'oid-order-1', target_object_id: 'oid-item-2', qualifier: 'contains' }],
      }),
    )
    expect(summarize(doc)).toEqual({ events: 2, objects: 2, eventTypes: 2, objectTypes: 2, relationships: 3, objectRelationships: 1 })
  })
})

describe('toOcelJson O2O', () => {
  it('writes each O2O relationship once under its source object, with the target\'s exported id and the qualifier or ""', () => {
    const doc = toOcelJson(
      rows({
        objects: [order1, item1, item2],
        objectRelationships: [
          { object_id: 'oid-order-1', target_object_id: 'oid-item-2', qualifier: null },
          { object_id: 'oid-order-1', target_object_id: 'oid-item-1', qualifier: 'contains' },
          { object_id: 'oid-order-1', target_object_id: 'oid-item-1', qualifier: 'contains' },
          { object_id: 'oid-order-1', target_object_id: 'oid-unknown', qualifier: 'dangling' },
        ],
      }),
    )
    const order = doc.objects.find((o) => o.type === 'order')
    // item ids 1 and the order id 1 are shared across types, so every "1" is written type/id.
    expect(order?.relationships).toEqual([
      { objectId: '2', qualifier: '' },
      { objectId: 'item/1', qualifier: 'contains' },
    ])
    expect(doc.objects.filter((o) => o.type === 'item').map((o) => o.relationships)).toEqual([[], []])
  })
})

describe('compareUtf8', () => {
  it('orders text as its UTF-8 bytes: code-unit order, except that characters beyond U+FFFF follow U+E000–U+FFFF', async () => {
    const { compareUtf8 } = await import('../../src/ocel/export.js')
    const words = ['\u{1F600}', '\uFF21', 'b', 'a', 'ab', '', '\u00E9', '\uE000']
    const sorted = [...words].sort(compareUtf8)
    expect(sorted).toEqual(['', 'a', 'ab', 'b', '\u00E9', '\uE000', '\uFF21', '\u{1F600}'])
    expect(sorted).toEqual([...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))))
  })
})
