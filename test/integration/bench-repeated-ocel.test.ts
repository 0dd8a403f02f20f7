/**
 * The repeated log of the bench's import row (bench/repeated-ocel.ts): `copies` copies of an OCEL
 * 2.0 JSON log, ids suffixed `#k`, times shifted by whole days of the log's span, initial values
 * kept at their time; read back with the importer's own reader, on a small hand-made log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeRepeatedOcelJson } from '../../bench/repeated-ocel.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'

const dir = mkdtempSync(join(tmpdir(), 'ocelog-repeated-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const SOURCE = {
  objectTypes: [{ name: 'order', attributes: [{ name: 'status', type: 'string' }] }],
  eventTypes: [{ name: 'pay', attributes: [] }],
  objects: [
    {
      id: 'o1',
      type: 'order',
      attributes: [
        { name: 'status', time: '1970-01-01T00:00:00Z', value: 'new' },
        { name: 'status', time: '2024-01-02T10:00:00Z', value: 'paid' },
      ],
      relationships: [{ objectId: 'c1', qualifier: 'placed by' }],
    },
    { id: 'c1', type: 'customer', attributes: [], relationships: [] },
  ],
  events: [
    { id: 'e1', type: 'pay', time: '2024-01-01T09:00:00Z', attributes: [], relationships: [{ objectId: 'o1', qualifier: 'order' }] },
    { id: 'e2', type: 'pay', time: '2024-01-02T11:00:00Z', attributes: [], relationships: [{ objectId: 'o1', qualifier: 'order' }] },
  ],
}

describe('writeRepeatedOcelJson', () => {
  it('writes the copies with suffixed ids, E2O and O2O, times shifted by the span in whole days, initial values kept', () => {
    const source = join(dir, 'source.json')
    writeFileSync(source, JSON.stringify(SOURCE))
    const path = join(dir, 'repeated.json')
    const counts = writeRepeatedOcelJson(source, path, 3)
    expect(counts.events).toBe(6)
    expect(counts.objects).toBe(6)
    const log = readOcelFile(path, parseTimeZone('UTC'))
    // The events span 26 hours: copies are 2 days apart.
    const day = 86_400_000
    expect(log.events.map((e) => [e.id, new Date(e.time).toISOString(), e.relationships.map((r) => r.objectId)])).toEqual([
      ['e1#0', '2024-01-01T09:00:00.000Z', ['o1#0']],
      ['e2#0', '2024-01-02T11:00:00.000Z', ['o1#0']],
      ['e1#1', new Date(Date.UTC(2024, 0, 1, 9) + 2 * day).toISOString(), ['o1#1']],
      ['e2#1', new Date(Date.UTC(2024, 0, 2, 11) + 2 * day).toISOString(), ['o1#1']],
      ['e1#2', new Date(Date.UTC(2024, 0, 1, 9) + 4 * day).toISOString(), ['o1#2']],
      ['e2#2', new Date(Date.UTC(2024, 0, 2, 11) + 4 * day).toISOString(), ['o1#2']],
    ])
    const o1 = log.objects.find((o) => o.id === 'o1#2')
    expect(o1?.attributes.map((a) => [a.name, new Date(a.time).toISOString(), a.value])).toEqual([
      ['status', '1970-01-01T00:00:00.000Z', 'new'],
      ['status', new Date(Date.UTC(2024, 0, 2, 10) + 4 * day).toISOString(), 'paid'],
    ])
    expect(o1?.relationships).toEqual([{ objectId: 'c1#2', qualifier: 'placed by' }])
    expect(log.objects.map((o) => o.id)).toEqual(['o1#0', 'c1#0', 'o1#1', 'c1#1', 'o1#2', 'c1#2'])
  })

  it('refuses a file that is not an OCEL 2.0 JSON log', () => {
    const source = join(dir, 'not-ocel.json')
    writeFileSync(source, JSON.stringify({ events: [] }))
    expect(() => writeRepeatedOcelJson(source, join(dir, 'out.json'), 2)).toThrow(/not an OCEL 2.0 JSON log/)
  })
})
