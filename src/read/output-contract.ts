/**
 * What every list answer carries for AI agents and scripts (README "MCP tools", docs/analysis.md
 * "Answers an agent can use"): `total`, `truncated` and `next_cursor`; pages of in-memory lists
 * with an opaque offset cursor; a cut of any answer to a byte budget. Pure: no I/O.
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

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8')

/** The array inside `value` (at any depth) whose JSON is largest, or null when there is none with items. */
function largestArray(value: unknown): unknown[] | null {
  let best: unknown[] | null = null
  let bestBytes = 0
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      const n = bytesOf(v)
      if (v.length > 0 && n > bestBytes) {
        best = v
        bestBytes = n
      }
      for (const item of v) if (typeof item === 'object' && item !== null) visit(item)
    } else if (typeof v === 'object' && v !== null) {
      for (const child of Object.values(v)) visit(child)
    }
  }
  visit(value)
  return best
}

/**
 * Cuts `body` in place until its JSON holds at most `maxBytes` bytes: the largest list in it (at
 * any depth) is halved, again and again, and `truncated: true` is set on `body`.
 * @returns whether anything was cut (false, and `body` untouched, when it fitted).
 */
export function capToFit(body: Record<string, unknown>, maxBytes: number): boolean {
  if (bytesOf(body) <= maxBytes) return false
  for (let i = 0; i < 200 && bytesOf(body) > maxBytes; i++) {
    const list = largestArray(body)
    if (list === null) break
    list.length = Math.floor(list.length / 2)
  }
  body.truncated = true
  return true
}
