/**
 * unit: the output contract's pure parts: offset pages with total/truncated/next_cursor (the cut
 * to a byte budget: answer-budget.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { InvalidParameterError } from '../../src/core/errors.js'
import { pageOf } from '../../src/read/output-contract.js'

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
