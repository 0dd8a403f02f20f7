/**
 * Pages of the read side (docs/api.md#read-endpoints: each list at most `limit` with a
 * `…_truncated` flag; pages that go on give a `next_cursor`): a reader asks its engine for one row
 * past the limit (`probeLimit`), then `cutPage` keeps `limit` rows and tells whether more were
 * there, so no count of the whole list is ever needed.
 */

/** The rows to read for a page of `limit`: one more, which only tells that the list goes on. */
export const probeLimit = (limit: number): number => limit + 1

/** A page cut from a read of probeLimit(limit) rows. */
export interface PageCut<T> {
  /** At most `limit` rows, in the read's order. */
  items: T[]
  /** Whether the read held more than `limit` rows: the list goes on past `items`. */
  truncated: boolean
}

/** The first `limit` of `rows` (read with probeLimit), and whether there were more. */
export function cutPage<T>(rows: readonly T[], limit: number): PageCut<T> {
  return { items: rows.slice(0, limit), truncated: rows.length > limit }
}

/** Where the page after `page` starts: `key` of its last row, or null when `page` is the last. */
export function nextCursor<T, K>(page: PageCut<T>, key: (last: T) => K): K | null {
  const last = page.items[page.items.length - 1]
  return page.truncated && last !== undefined ? key(last) : null
}
