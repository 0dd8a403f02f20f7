import { describe, expect, it } from 'vitest'
import { foldRecords } from '../../projections/registry.js'
import { buildEventRecorded, buildObjectUpserted, type RecordContext } from '../../src/core/records.js'
import { objectIdOf } from '../../src/core/ids.js'
import type { NewRecord, StoredRecord } from '../../src/schemas/records.js'

const ctx: RecordContext = { datasetId: 'ds1', keyId: 'k1', requestId: 'r1', receivedAt: '2026-01-01T00:00:00.000Z' }

function stored(records: NewRecord[], start = 1): StoredRecord[] {
  return records.map((r, i) => ({ ...r, position: start + i, stream: 'dataset-ds1', datasetId: 'ds1', appendedAt: ctx.receivedAt }))
}

describe('foldRecords', () => {
  it('counts events per event type', () => {
    const cs = foldRecords(
      stored([
        buildEventRecorded({ event: 'A', objects: [{ type: 'o', id: '1' }] }, 'e1', ctx),
        buildEventRecorded({ event: 'A', objects: [{ type: 'o', id: '1' }] }, 'e2', ctx),
        buildEventRecorded({ event: 'B', objects: [{ type: 'o', id: '1' }] }, 'e3', ctx),
      ]),
    )
    expect([...cs.event_types.values()].map((t) => [t.name, t.added, t.minPosition, t.maxPosition])).toEqual([
      ['A', 2, 1, 2],
      ['B', 1, 3, 3],
    ])
  })

  it('merges object attributes per top-level key in log order', () => {
    const cs = foldRecords(
      stored([
        buildObjectUpserted({ type: 'o', id: '1', properties: { a: 1, nested: { x: 1 } } }, ctx),
        buildEventRecorded({ event: 'E', objects: [{ type: 'o', id: '1', properties: { a: 2, b: null } }] }, 'e1', ctx),
        buildObjectUpserted({ type: 'o', id: '1', properties: { nested: { y: 2 } } }, ctx),
      ]),
    )
    const o = cs.objects.objects.get(`ds1\u0000${objectIdOf('ds1', 'o', '1')}`)
    expect(o?.properties).toEqual({ a: 2, b: null, nested: { y: 2 } })
    expect([o?.minPosition, o?.maxPosition]).toEqual([1, 3])
  })

  it('records attribute history with the event time for inline properties and received_at for upserts', () => {
    const cs = foldRecords(
      stored([
        buildEventRecorded({ event: 'E', timestamp: '2024-01-01T00:00:00Z', objects: [{ type: 'o', id: '1', properties: { s: 'open' } }] }, 'e1', ctx),
        buildObjectUpserted({ type: 'o', id: '1', properties: { s: 'closed' } }, ctx),
        buildObjectUpserted({ type: 'o', id: '1' }, ctx),
      ]),
    )
    expect(cs.objects.changes.map((c) => [c.position, c.time, c.attributes])).toEqual([
      [1, '2024-01-01T00:00:00.000Z', { s: 'open' }],
      [2, ctx.receivedAt, { s: 'closed' }],
    ])
  })

  it('writes one E2O row per object with its qualifier, null when none was sent', () => {
    const cs = foldRecords(
      stored([
        buildEventRecorded(
          {
            event: 'Pay',
            objects: [
              { type: 'order', id: '1', qualifier: 'target' },
              { type: 'customer', id: 'c' },
            ],
          },
          'e1',
          ctx,
        ),
      ]),
    )
    expect(cs.events.eventObjects.map((l) => [l.object_type, l.external_id, l.qualifier])).toEqual([
      ['order', '1', 'target'],
      ['customer', 'c', null],
    ])
  })

  it('throws on a record type it cannot read instead of skipping it', () => {
    const bad = { type: 'Unknown', version: 1, data: {}, position: 1, stream: 'dataset-ds1', datasetId: 'ds1', appendedAt: '' } as unknown as StoredRecord
    expect(() => foldRecords([bad])).toThrow(/unknown record Unknown v1 at position 1/)
  })
})
