/**
 * What every list answer carries for AI agents and scripts (docs/analysis.md#every-list-total-truncated-next_cursor):
 * `total`, `truncated` and `next_cursor`; pages of in-memory lists with an opaque offset cursor. The
 * cut of an answer to a byte budget is answer-budget.ts. Pure: no I/O.
 */
import { InvalidParameterError } from '../core/errors.js'

/** A page of a list, with the list's size and where the next page starts. */
export interface ListPage<T> {
  items: T[]
  /** Items in the whole list. */
  total: number
  /** True when items follow this page. */
  truncated: boolean
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null
}

const OFFSET_CURSOR_RULE = 'an opaque cursor exactly as a previous answer’s next_cursor gave it'

/** The opaque cursor of the page that starts at `offset`: base64url of `{"o": offset}`. */
export function encodeOffsetCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset }), 'utf8').toString('base64url')
}

/**
 * Reads a cursor of encodeOffsetCursor.
 * @throws InvalidParameterError on `cursor` unless it is one.
 */
export function decodeOffsetCursor(cursor: string): number {
  let o: unknown
  try {
    o = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown }).o
  } catch {
    throw new InvalidParameterError('cursor', OFFSET_CURSOR_RULE)
  }
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0) throw new InvalidParameterError('cursor', OFFSET_CURSOR_RULE)
  return o
}

/**
 * The page of `list` of at most `limit` items that starts at `cursor` (the first page without one).
 * @throws InvalidParameterError on `cursor` (see decodeOffsetCursor).
 */
export function pageOf<T>(list: readonly T[], limit: number, cursor: string | undefined): ListPage<T> {
  const start = cursor === undefined ? 0 : decodeOffsetCursor(cursor)
  const items = list.slice(start, start + limit)
  const truncated = start + items.length < list.length
  return { items, total: list.length, truncated, next_cursor: truncated ? encodeOffsetCursor(start + items.length) : null }
}
