/** The round-trip check (test/helpers/ocel-round-trip.ts): what an export must give back, and that differences show. */
import { describe, expect, it } from 'vitest'
import { newNotes, type OcelLog } from '../../src/ocel/import/model.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'

const source: OcelLog = {
  format: 'json',
  eventTypes: [],
  objectTypes: [],
  notes: newNotes('UTC'),
  objects: [
    {
      id: '1',
      type: 'order',
      attributes: [
        { name: 'total', time: 0, value: 10 },
        { name: 'total', time: 5000, value: 12.5 },
      ],
      relationships: [
        { objectId: 'c7', qualifier: 'placed by' },
        { objectId: 'phantom', qualifier: null },
        { objectId: 'phantom', qualifier: null },
      ],
    },
    { id: '1', type: 'item', attributes: [], relationships: [] },
    { id: 'c7', type: 'customer', attributes: [], relationships: [] },
  ],
  events: [
    {
      id: 'e1',
      type: 'pay',
      time: 1000,
      attributes: { by: 'card', ok: true },
      relationships: [
        { objectId: '1', qualifier: 'paid' },
        { objectId: 'ghost', qualifier: null },
      ],
    },
    { id: 'e2', type: 'pay', time: 2000, attributes: {}, relationships: [{ objectId: 'ghost', qualifier: null }] },
  ],
}

/** What the exporter writes for `source` after an import: ids shared by two types become type/id. */
function exported(): OcelJsonStrict {
  return {
    eventTypes: [{ name: 'pay', attributes: [] }],
    objectTypes: [],
    events: [
      {
        id: 'u1',
        type: 'pay',
        time: '1970-01-01T00:00:01.000Z',
        attributes: [
          { name: 'by', value: 'card' },
          { name: 'ok', value: 'true' },
        ],
        relationships: [
          { objectId: 'ghost', qualifier: '' },
          { objectId: 'order/1', qualifier: 'paid' },
        ],
      },
      { id: 'u2', type: 'pay', time: '1970-01-01T00:00:02.000Z', attributes: [], relationships: [{ objectId: 'ghost', qualifier: '' }] },
    ],
    objects: [
      { id: 'ghost', type: 'ocelog:undefined', attributes: [], relationships: [] },
      { id: 'phantom', type: 'ocelog:undefined', attributes: [], relationships: [] },
      { id: 'item/1', type: 'item', attributes: [], relationships: [] },
      {
        id: 'order/1',
        type: 'order',
        attributes: [
          { name: 'total', time: '1970-01-01T00:00:00.000Z', value: '10' },
          { name: 'total', time: '1970-01-01T00:00:05.000Z', value: '12.5' },
        ],
        relationships: [
          { objectId: 'c7', qualifier: 'placed by' },
          { objectId: 'phantom', qualifier: '' },
        ],
      },
      { id: 'c7', type: 'customer', attributes: [], relationships: [] },
    ],
  }
}

describe('round-trip views', () => {
  it('match for a faithful export, undoing type/id and comparing values as OCEL text', () => {
    expect(diffViews(expectedView(source), exportedView(exported()))).toEqual([])
  })

  it('expect every event, naming objects the log never defines with the placeholder type', () => {
    const v = expectedView(source)
    expect(v.eventsPerType).toEqual({ pay: 2 })
    expect(v.e2o).toBe(3)
    expect(v.objectsPerType).toEqual({ order: 1, item: 1, customer: 1, 'ocelog:undefined': 2 })
    expect(v.objects.get('ocelog:undefined\u0000ghost')).toEqual({})
    expect(v.o2oCount).toBe(2)
    expect(v.o2o.get('order\u00001')).toEqual(['["customer","c7","placed by"]', '["ocelog:undefined","phantom",""]'])
  })

  it('expect the type of --unknown-object-type for objects the log never defines', () => {
    expect(expectedView(source, 'Handling Unit').objectsPerType).toEqual({ order: 1, item: 1, customer: 1, 'Handling Unit': 2 })
  })

  it('show a changed qualifier', () => {
    const doc = exported()
    const e = doc.events[0]
    if (e !== undefined)
      e.relationships = [
        { objectId: 'ghost', qualifier: '' },
        { objectId: 'order/1', qualifier: '' },
      ]
    expect(diffViews(expectedView(source), exportedView(doc))).toHaveLength(2)
  })

  it('show a final attribute value that differs', () => {
    const doc = exported()
    doc.objects[3]?.attributes.reverse()
    expect(diffViews(expectedView(source), exportedView(doc))).toEqual(['object order/1: expected {"total":"12.5"}, exported {"total":"10"}'])
  })

  it('show a missing event and an event time off by a millisecond', () => {
    const missing = { ...exported(), events: [] }
    expect(diffViews(expectedView(source), exportedView(missing))).toContain('events of type "pay": expected 2, exported 0')
    const late = exported()
    const e = late.events[0]
    if (e !== undefined) e.time = '1970-01-01T00:00:01.001Z'
    expect(diffViews(expectedView(source), exportedView(late))).toHaveLength(2)
  })

  it('show an attribute value whose time moved, and a lost O2O relationship', () => {
    const doc = exported()
    const order = doc.objects[3]
    if (order !== undefined) {
      order.attributes = order.attributes.map((a) => ({ ...a, time: a.value === '10' ? '2024-05-01T00:00:00.000Z' : a.time }))
      order.relationships = order.relationships?.slice(0, 1)
    }
    expect(diffViews(expectedView(source), exportedView(doc))).toEqual([
      'O2O relationships: expected 2, exported 1',
      'object order/1 history: expected ["[\\"total\\",\\"1970-01-01T00:00:00.000Z\\",\\"10\\"]","[\\"total\\",\\"1970-01-01T00:00:05.000Z\\",\\"12.5\\"]"], exported ["[\\"total\\",\\"1970-01-01T00:00:05.000Z\\",\\"12.5\\"]","[\\"total\\",\\"2024-05-01T00:00:00.000Z\\",\\"10\\"]"]',
      'object order/1 o2o: expected ["[\\"customer\\",\\"c7\\",\\"placed by\\"]","[\\"ocelog:undefined\\",\\"phantom\\",\\"\\"]"], exported ["[\\"customer\\",\\"c7\\",\\"placed by\\"]"]',
    ])
  })
})
