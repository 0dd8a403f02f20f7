/**
 * The replay rule (src/core/read-model-changes.ts), decided once for every read-model store.
 */
import { describe, expect, it } from 'vitest'
import { type ObjectChange, objectChangeToApply, replayPart, type TypeChange, typeChangeToApply } from '../../src/core/read-model-changes.js'

const type: TypeChange = { datasetId: 'd', name: 'Pay', firstSeenAt: 't1', lastSeenAt: 't3', added: 3, addedAt: [10, 12, 14], minPosition: 10, maxPosition: 14 }
const object: ObjectChange = {
  datasetId: 'd',
  objectId: 'o',
  type: 'order',
  externalId: 'o1',
  properties: { a: 2, b: 1, c: 3 },
  deltas: [
    { position: 10, properties: { a: 1, b: 1 } },
    { position: 12, properties: { a: 2 } },
    { position: 14, properties: { c: 3 } },
  ],
  firstSeenAt: 't1',
  lastSeenAt: 't3',
  minPosition: 10,
  maxPosition: 14,
}

describe('replayPart', () => {
  it('applies a change whole to a missing row or one behind it, nothing to one at or past its end, and the rest in between', () => {
    expect([undefined, 9, 10, 13, 14, 20].map((p) => replayPart(p, type))).toEqual(['whole', 'whole', 'after', 'after', 'none', 'none'])
  })
})

describe('typeChangeToApply', () => {
  it("counts only the units after the row's position, as a change its guarded write applies whole", () => {
    expect(typeChangeToApply(type, 9)).toBe(type)
    expect(typeChangeToApply(type, 12)).toEqual({ ...type, added: 1, addedAt: [14], minPosition: 13 })
    expect(typeChangeToApply(type, 14)).toBeNull()
  })
})

describe('objectChangeToApply', () => {
  it("merges only the attribute values set after the row's position, in log order", () => {
    expect(objectChangeToApply(object, undefined)).toBe(object)
    expect(objectChangeToApply(object, 10)).toEqual({ ...object, properties: { a: 2, c: 3 }, deltas: object.deltas.slice(1), minPosition: 11 })
    expect(objectChangeToApply(object, 14)).toBeNull()
  })
})
