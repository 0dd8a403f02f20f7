import { describe, expect, it } from 'vitest'
import { cutPage, nextCursor, probeLimit } from '../../src/core/page.js'

describe('pages read one row past their limit', () => {
  it('keeps the limit, says whether the list went on, and gives the next cursor only then', () => {
    expect(probeLimit(100)).toBe(101)
    const rows = [1, 2, 3, 4]
    expect(cutPage(rows, 3)).toEqual({ items: [1, 2, 3], truncated: true })
    expect(nextCursor(cutPage(rows, 3), (last) => ({ after: last }))).toEqual({ after: 3 })
    expect(cutPage(rows, 4)).toEqual({ items: [1, 2, 3, 4], truncated: false })
    expect(nextCursor(cutPage(rows, 4), (last) => ({ after: last }))).toBeNull()
    expect(nextCursor(cutPage([], 1), (last: number) => last)).toBeNull()
  })
})
