/**
 * Attribute names as MongoDB field names (src/adapters/mongodb/field-names.ts), against the BSON
 * serializer that the MongoDB driver writes documents with: it refuses U+0000 in a field name, and
 * takes every name encodeKey writes. And the idempotency claims' `_id`s, which are stored, keep the
 * form earlier builds wrote. Runs without a MongoDB server (the serializer is the driver's own).
 */
import fc from 'fast-check'
import { BSON } from 'mongodb'
import { describe, expect, it } from 'vitest'
import { decodeKeys, encodeKeys } from '../../src/adapters/mongodb/field-names.js'
import { claimId } from '../../src/adapters/mongodb/mongodb-idempotency-claims.js'

describe('encodeKeys against BSON', () => {
  it('refuses a raw U+0000 in a field name, and serializes the encoded one', () => {
    expect(() => BSON.serialize({ 'st\u0000atus': 1 })).toThrow(/null bytes/)
    expect(BSON.deserialize(BSON.serialize(encodeKeys({ 'st\u0000atus': 1 })))).toStrictEqual({ 'st%00atus': 1 })
  })

  it('serializes any attributes with their names encoded, and decodes them back as sent', () => {
    const name = fc.string({ unit: fc.constantFrom('\u0000', '%', '.', '$', 'a', '0', 'é'), maxLength: 8 })
    fc.assert(
      fc.property(fc.dictionary(name, fc.oneof(fc.string(), fc.integer(), fc.dictionary(name, fc.boolean(), { maxKeys: 3 })), { maxKeys: 5 }), (attributes) => {
        const stored = BSON.deserialize(BSON.serialize(encodeKeys(attributes)))
        expect(decodeKeys(stored)).toEqual(attributes)
      }),
    )
  })
})

describe('the idempotency claims’ stored _id', () => {
  it('is the dataset and the key joined by NUL as they are, a key holding U+0001 included', () => {
    expect(claimId('ds-1', 'order-7')).toBe('ds-1\u0000order-7')
    expect(claimId('ds-1', 'a\u0001b')).toBe('ds-1\u0000a\u0001b')
  })
})
