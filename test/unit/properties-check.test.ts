import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits.js'
import { pointerSegment, propertiesErrors, propertiesPass } from '../../src/core/properties-check.js'

/** `{a: [[…]]}` with `arrays` arrays: the properties object is level 1, so it nests 1 + arrays levels. */
function nested(arrays: number): Record<string, unknown> {
  let v: unknown[] = []
  for (let i = 1; i < arrays; i++) v = [v]
  return { a: v }
}

describe('propertiesErrors', () => {
  it('accepts exactly the documented depth', () => {
    expect(propertiesErrors(nested(LIMITS.propertiesDepthMax - 1), '/properties')).toEqual([])
  })

  it('names the path of the first level past the limit', () => {
    expect(propertiesErrors(nested(LIMITS.propertiesDepthMax), '/properties')).toEqual([
      { path: `/properties/a${'/0'.repeat(LIMITS.propertiesDepthMax - 1)}`, message: expect.stringContaining('64 levels') },
    ])
  })

  it('walks a million levels without overflowing the call stack', () => {
    expect(propertiesErrors(nested(1_000_000), '/properties')).toHaveLength(1)
  })

  it('reports a non-finite number by its path', () => {
    expect(propertiesErrors({ n: [1, Number.POSITIVE_INFINITY] }, '/p')).toEqual([{ path: '/p/n/1', message: expect.stringContaining('finite') }])
  })

  it('reports a lone surrogate in a key and in a value', () => {
    expect(propertiesErrors({ '\ud800': 1, ok: 'x\udc00' }, '').map((e) => e.path)).toEqual(['/\ud800', '/ok'])
  })

  it('accepts a surrogate pair (an astral character)', () => {
    expect(propertiesErrors({ '😀': '😀' }, '')).toEqual([])
  })

  it('escapes ~ and / in the path (RFC 6901)', () => {
    expect(propertiesErrors({ 'a/b~c': Number.NaN }, '').map((e) => e.path)).toEqual(['/a~1b~0c'])
    expect(pointerSegment('~/')).toBe('~0~1')
  })

  it('stops after 10 findings', () => {
    expect(
      propertiesErrors(
        Array.from({ length: 50 }, () => Number.NaN),
        '',
      ),
    ).toHaveLength(10)
  })

  it('says nothing of a value that is not an object (the schema reports it)', () => {
    expect(propertiesErrors('x', '/properties')).toEqual([])
  })
})

/** A properties value: JSON with what the rules refuse mixed in (non-finite numbers, lone surrogates in strings and keys), at any depth. */
const leafArb = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('a\ud800', '\udc00b', '😀', null, true),
)
const { valueArb } = fc.letrec<{ valueArb: unknown }>((tie) => ({
  valueArb: fc.oneof(
    { depthSize: 'small' },
    leafArb,
    fc.array(tie('valueArb'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('\ud800', 'k\udfff')), tie('valueArb'), { maxKeys: 4 }),
  ),
}))
/** `value` inside `levels` arrays: reaches the depth limit with few nodes. */
const deepArb = fc.tuple(fc.integer({ min: LIMITS.propertiesDepthMax - 3, max: LIMITS.propertiesDepthMax + 1 }), valueArb).map(([levels, value]) => {
  let v: unknown = value
  for (let i = 0; i < levels; i++) v = [v]
  return { deep: v }
})

describe('propertiesPass', () => {
  it('passes exactly the values in which propertiesErrors finds nothing', () => {
    let refused = 0
    fc.assert(
      fc.property(fc.oneof(valueArb, deepArb), (value) => {
        const pass = propertiesPass(value)
        if (!pass) refused++
        expect(pass).toBe(propertiesErrors(value, '/properties').length === 0)
      }),
      { seed: 20_261_207, numRuns: 5_000 },
    )
    // Both answers were drawn, many times each.
    expect(refused).toBeGreaterThan(500)
    expect(refused).toBeLessThan(4_500)
  })

  it('passes the documented depth and refuses one level more', () => {
    expect(propertiesPass(nested(LIMITS.propertiesDepthMax - 1))).toBe(true)
    expect(propertiesPass(nested(LIMITS.propertiesDepthMax))).toBe(false)
    expect(propertiesPass(nested(1_000_000))).toBe(false)
  })

  it('refuses a lone surrogate in a key, and passes a surrogate pair in a key and a value', () => {
    expect(propertiesPass({ '\ud800': 1 })).toBe(false)
    expect(propertiesPass({ '😀': ['😀'] })).toBe(true)
  })
})
