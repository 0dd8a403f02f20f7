/**
 * unit: the output contract's pure parts: offset pages with total/truncated/next_cursor, and the
 * cut of a body to a byte budget.
 */
import { describe, expect, it } from 'vitest'
import { InvalidParameterError } from '../../src/core/errors.js'
import { capToFit, pageOf } from '../../src/read/output-contract.js'

describe('pageOf', () => {
  it('pages a list to its end with total, truncated and next_cursor', () => {
    const list = ['a', 'b', 'c', 'd', 'e']
    const first = pageOf(list, 2, undefined)
    expect(first).toMatchObject({ items: ['a', 'b'], total: 5, truncated: true })
    const second = pageOf(list, 2, first.next_cursor ?? undefined)
    const third = pageOf(list, 2, second.next_cursor ?? undefined)
    expect([second.items, third.items]).toEqual([['c', 'd'], ['e']])
    expect([third.truncated, third.next_cursor]).toEqual([false, null])
    expect(pageOf([], 25, undefined)).toEqual({ items: [], total: 0, truncated: false, next_cursor: null })
  })

  it('rejects a cursor it did not make, naming cursor', () => {
    expect(() => pageOf(['a'], 1, 'zzz')).toThrow(InvalidParameterError)
    expect(() => pageOf(['a'], 1, Buffer.from('{"o":-1}').toString('base64url'))).toThrow(/^cursor: /)
  })
})

describe('capToFit', () => {
  it('leaves a body that fits untouched', () => {
    const body: Record<string, unknown> = { list: [1, 2, 3] }
    expect(capToFit(body, 100)).toBe(false)
    expect(body).toEqual({ list: [1, 2, 3] })
  })

  it('halves the largest list, at any depth, until the body fits, and marks it truncated', () => {
    const body: Record<string, unknown> = { small: ['x'], outer: { inner: Array.from({ length: 64 }, () => 'y'.repeat(10)) } }
    expect(capToFit(body, 200)).toBe(true)
    const inner = (body.outer as { inner: string[] }).inner
    expect(inner.length).toBe(8)
    expect(body.small).toEqual(['x'])
    expect(body.truncated).toBe(true)
    expect(JSON.stringify(body).length).toBeLessThanOrEqual(200)
  })
})
