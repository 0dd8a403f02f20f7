/**
 * The SQLite window map's statistics and distinct counts (src/adapters/sqlite/read-models/sqlite-df-query.ts)
 * against their definitions (docs/process-map.md#definitions): the median of an even count is
 * the mean of the two middle values, as SQLite's `median()` gives it; distinct counts equal a
 * Set's, whether the range of values is stamped or sorted. Seeded random lists, with many ties.
 * No file is opened, but the module loads better-sqlite3, so the test is of the integration tier.
 */
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../bench/generate.js'
import { DistinctCounter, statsColumns } from '../../src/adapters/sqlite/read-models/sqlite-df-query.js'

const random = seededRandom(26)
const list = (n: number, range: number) => Array.from({ length: n }, () => Math.floor(random() * range))

describe('window map statistics', () => {
  it('gives count, sum, min, max and the median by sorting, for odd and even counts', () => {
    expect(statsColumns([7])).toEqual({ c3: 1, c4: 7, c5: 7, c6: 7, c7: 7 })
    expect(statsColumns([4, 1, 3, 2])).toEqual({ c3: 4, c4: 10, c5: 1, c6: 4, c7: 2.5 })
    expect(statsColumns([5, 5, 5, 1, 9, 9])).toEqual({ c3: 6, c4: 34, c5: 1, c6: 9, c7: 5 })
    for (const n of [2, 3, 10, 11, 100, 1001, 5000]) {
      for (const range of [3, 1000, 2_000_000_000]) {
        const values = list(n, range)
        const sorted = [...values].sort((a, b) => a - b)
        const low = sorted[Math.floor((n - 1) / 2)] ?? 0
        const high = sorted[Math.ceil((n - 1) / 2)] ?? 0
        expect(statsColumns(values)).toEqual({
          c3: n,
          c4: values.reduce((s, v) => s + v, 0),
          c5: sorted[0],
          c6: sorted[n - 1],
          c7: (low + high) / 2,
        })
      }
    }
  })

  it('counts distinct values as a Set does, with stamps and by sorting', () => {
    const lists = [list(1, 50), list(200, 50), list(1000, 5000), [], list(300, 3)].map((l) => l.map((v) => v + 1000))
    const stamped = new DistinctCounter(1000, 6000, 10_000)
    const sorted = new DistinctCounter(1000, 6000, 10)
    for (const l of lists) {
      expect(stamped.count(l)).toBe(new Set(l).size)
      expect(sorted.count(l)).toBe(new Set(l).size)
    }
  })
})
