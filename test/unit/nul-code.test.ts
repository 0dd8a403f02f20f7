/**
 * The code for text without U+0000 (src/core/nul-code.ts), as the PostgreSQL read models store
 * strings in it (src/adapters/postgres/text-codec.ts, docs/read-models.md#control-characters-on-postgresql)
 * and composite keys join their parts in it (src/core/keys.ts): coded text holds no U+0000, decoding
 * gives back what was coded, text compared by its bytes orders coded as it orders plain, and keys of
 * different parts differ.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeStrings, encodeStrings } from '../../src/adapters/postgres/text-codec.js'
import { decodeNul, encodeNul } from '../../src/core/nul-code.js'
import { joinKey } from '../../src/core/keys.js'
import { fillWindowEnds, type MapRow } from '../../src/core/process-map-rows.js'

/** Strings rich in the coded characters and their neighbours. */
const text = fc.string({ unit: fc.constantFrom('\u0000', '\u0001', '\u0002', 'a', 'é', '😀', '\uffff'), maxLength: 12 })

/** Byte order of UTF-8, as `COLLATE "C"` compares text. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))

describe('encodeNul and decodeNul', () => {
  it('code U+0000 and U+0001 as two characters each, and nothing else', () => {
    expect(encodeNul('a\u0000b')).toBe('a\u0001\u0001b')
    expect(encodeNul('\u0001')).toBe('\u0001\u0002')
    expect(encodeNul('\u0002 plain é 😀')).toBe('\u0002 plain é 😀')
    expect(decodeNul('a\u0001\u0001b\u0001\u0002')).toBe('a\u0000b\u0001')
  })

  it('give back every string, and store none with U+0000', () => {
    fc.assert(
      fc.property(text, (s) => {
        const stored = encodeNul(s)
        expect(stored.includes('\u0000')).toBe(false)
        expect(decodeNul(stored)).toBe(s)
      }),
    )
  })

  it('keep the byte order of any two strings, and their equality', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(Math.sign(byBytes(encodeNul(a), encodeNul(b)))).toBe(Math.sign(byBytes(a, b)))
      }),
    )
  })
})

describe('encodeStrings and decodeStrings', () => {
  it('code the strings of arrays, plain objects (keys too), Map values and Sets, not Map keys', () => {
    const sent = {
      name: 'or\u0000der',
      list: ['x\u0000', 1, null],
      attributes: { 'st\u0000atus': 'op\u0001en', n: 2 },
      byKey: new Map([['ds\u0000or\u0000der', { name: 'or\u0000der' }]]),
      tags: new Set(['t\u0000']),
    }
    const stored = encodeStrings(sent)
    expect(stored).toStrictEqual({
      name: 'or\u0001\u0001der',
      list: ['x\u0001\u0001', 1, null],
      attributes: { 'st\u0001\u0001atus': 'op\u0001\u0002en', n: 2 },
      byKey: new Map([['ds\u0000or\u0000der', { name: 'or\u0001\u0001der' }]]),
      tags: new Set(['t\u0001\u0001']),
    })
    expect(decodeStrings(stored)).toStrictEqual(sent)
  })

  it('leave a part without coded strings as the same object, and keep shared parts shared', () => {
    const plain = { name: 'order', rows: [{ id: 'a' }] }
    expect(encodeStrings(plain)).toBe(plain)
    const shared = { type: 'it\u0000em' }
    const stored = encodeStrings({ a: shared, b: [shared], untouched: plain })
    expect(stored.a).toStrictEqual({ type: 'it\u0001\u0001em' })
    expect(stored.b[0]).toBe(stored.a)
    expect(stored.untouched).toBe(plain)
  })
})

describe('joinKey', () => {
  it('makes different keys of different parts (as many), whatever NUL they hold', () => {
    expect(joinKey('a\u0000b', 'c')).not.toBe(joinKey('a', 'b\u0000c'))
    expect(joinKey('plain', 'parts', 3)).toBe('plain\u0000parts\u00003')
    fc.assert(
      fc.property(
        fc.nat({ max: 4 }).chain((n) => fc.tuple(fc.array(text, { minLength: n, maxLength: n }), fc.array(text, { minLength: n, maxLength: n }))),
        ([a, b]) => {
          fc.pre(JSON.stringify(a) !== JSON.stringify(b))
          expect(joinKey(...a)).not.toBe(joinKey(...b))
        },
      ),
    )
  })

  it('keeps the end counts of a window apart for object types and activities whose names meet at a NUL', () => {
    const row = (kind: MapRow['kind'], ot: string, k1: string, c3: number): MapRow => ({
      kind,
      ot,
      k1,
      k2: '',
      c1: 0,
      c2: 0,
      c3,
      c4: 0,
      c5: 0,
      c6: 0,
      c7: null,
    })
    const rows = [row('activity', 'a\u0000b', 'c', 5), row('activity', 'a', 'b\u0000c', 7), row('edge', 'a', 'b\u0000c', 2)]
    fillWindowEnds(rows)
    expect(rows.map((r) => r.c5)).toStrictEqual([5, 5, 0])
  })
})
