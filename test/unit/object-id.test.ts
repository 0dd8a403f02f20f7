import { v5 } from 'uuid'
import { describe, expect, it } from 'vitest'
import { OBJECT_ID_NAMESPACE, objectIdOf } from '../../src/core/ids.js'

const cases: [string, string, string][] = [
  ['ds1', 'order', 'o-1'],
  ['ds1', 'order', 'o-2'],
  ['ds2', 'order', 'o-1'],
  ['ds1', 'Bestellung', 'Größe-ü-€'],
  ['ds1', 'emoji', 'box-📦-😀'],
  ['ds1', 'lone', 'a\ud800b'],
  ['ds1', 'quote', 'say "hi"\\n'],
  ['ds1', 'long', 'x'.repeat(500)],
]

describe('objectIdOf', () => {
  it('is the UUIDv5 of the JSON array [dataset, type, id] in the Ocelog namespace', () => {
    for (const [d, t, id] of cases) expect(objectIdOf(d, t, id)).toBe(v5(JSON.stringify([d, t, id]), OBJECT_ID_NAMESPACE))
  })

  it('gives the same id on a second call (from its cache) as on the first', () => {
    const first = cases.map(([d, t, id]) => objectIdOf(d, t, id))
    expect(cases.map(([d, t, id]) => objectIdOf(d, t, id))).toEqual(first)
  })

  it('keeps the ids already stored: (ds1, order, o-1) is 34d9e017-…', () => {
    expect(objectIdOf('ds1', 'order', 'o-1')).toBe('34d9e017-b738-5d04-ab06-d5a2b26506b6')
  })
})
