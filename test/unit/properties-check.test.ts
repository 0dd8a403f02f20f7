import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits.js'
import { pointerSegment, propertiesErrors } from '../../src/core/properties-check.js'

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
