/**
 * The byte budget of a read answer (docs/analysis.md#answers-that-fit-an-agents-context): every MCP
 * tool answer fits ANSWER_BYTES_DEFAULT bytes of JSON unless its `max_bytes` says otherwise (up to
 * ANSWER_BYTES_MAX), and an HTTP read fits `max_bytes` when it is given. Each read cuts what can be
 * continued or narrowed, keeping the top of the answer: a page ends earlier and its `next_cursor`
 * continues after the last item kept; the process map keeps each type's most frequent edges; the
 * other lists lose their ends. Every budgeted answer says `truncated` and `approx_tokens` (its JSON's
 * characters / 4, rounded up: a rough estimate, not a tokenizer's count). Pure: no I/O.
 */
import { InvalidParameterError } from '../core/errors.js'
import type { CompareResponse, PerformanceResponse, TypeRelationsResponse, VariantsResponse } from '../schemas/analysis.js'
import {
  ANSWER_BYTES_MAX,
  ANSWER_BYTES_MIN,
  type EventsResponse,
  type ObjectResponse,
  type ObjectTypesResponse,
  type EventTypesResponse,
  type ProcessMapResponse,
} from '../schemas/process.js'
import { encodeOffsetCursor } from './output-contract.js'
import { encodeCursor, encodeVariantsCursor, mostFrequentEdges } from './process-reader.js'

/** The most characters of an MCP tool's text (`content`), whatever the byte budget. */
export const TEXT_CHARS_MAX = 10_000

/** Bytes of the budget kept for what is set after the cut: `truncated` and `approx_tokens`. */
const RESERVE_BYTES = 64

/** The fields every budgeted answer carries. */
export interface Budgeted {
  truncated?: boolean
  approx_tokens?: number
}

/** Cuts an answer in place to fit `maxBytes` bytes of JSON. @returns whether anything was cut. */
export type Fit<B> = (body: B, maxBytes: number) => boolean

/**
 * Reads `max_bytes`: absent gives undefined (no budget).
 * @throws InvalidParameterError on `max_bytes` unless it is an integer from ANSWER_BYTES_MIN to ANSWER_BYTES_MAX (a number or decimal digits).
 */
export function parseMaxBytes(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = typeof value === 'number' ? value : /^\d{1,8}$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isInteger(n) || n < ANSWER_BYTES_MIN || n > ANSWER_BYTES_MAX) {
    throw new InvalidParameterError('max_bytes', `an integer from ${String(ANSWER_BYTES_MIN)} to ${String(ANSWER_BYTES_MAX)} (bytes of JSON)`)
  }
  return n
}

/** About how many tokens `chars` characters take: chars / 4, rounded up (a rough rule for English text and JSON, not a tokenizer). */
export function approxTokens(chars: number): number {
  return Math.ceil(chars / 4)
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8')

/**
 * Cuts `list`, which `body` holds, from its end until the JSON of `body` fits in `maxBytes`, keeping
 * at least `keepAtLeast` items; `mark` runs after each cut (to set `truncated` and a cursor from the
 * last item kept, which may lengthen the JSON: the fit is checked after it).
 * @returns how many items were left out.
 */
export function cutList<T>(body: object, list: T[], maxBytes: number, mark: () => void, keepAtLeast = 0): number {
  let bytes = bytesOf(body)
  if (bytes <= maxBytes) return 0
  const all = list.length
  let keep = all
  // First from each item's own size (one serialization each), then checked on the whole.
  while (keep > keepAtLeast && bytes > maxBytes) {
    keep -= 1
    bytes -= bytesOf(list[keep]) + 1
  }
  list.length = keep
  mark()
  while (list.length > keepAtLeast && bytesOf(body) > maxBytes) {
    list.length -= 1
    mark()
  }
  return all - list.length
}

/**
 * Cuts `body` to its budget with `cutToFit`, then sets `truncated` (a page that continues stays
 * truncated) and `approx_tokens`.
 * @returns whether `cutToFit` cut anything.
 */
export function withBudget<B extends Budgeted>(body: B, maxBytes: number, cutToFit: Fit<B>): boolean {
  const cut = cutToFit(body, maxBytes - RESERVE_BYTES)
  body.truncated = cut || body.truncated === true
  // Counted with its own digits: a second pass settles it (a third only at a power of ten).
  body.approx_tokens = 0
  for (let pass = 0; pass < 3; pass++) {
    const tokens = approxTokens(JSON.stringify(body).length)
    if (tokens === body.approx_tokens) break
    body.approx_tokens = tokens
  }
  return cut
}

/** The summary: nothing to cut. */
export const fitNothing: Fit<object> = () => false

/** A page that ends earlier: `next_cursor` continues after the last item kept (one item is always kept). */
function fitPage<B extends { truncated: boolean; next_cursor: string | null }, T>(list: (body: B) => T[], cursorAfter: (item: T) => string): Fit<B> {
  return (body, maxBytes) => {
    const items = list(body)
    const mark = () => {
      const last = items[items.length - 1]
      body.truncated = true
      if (last !== undefined) body.next_cursor = cursorAfter(last)
    }
    return cutList(body, items, maxBytes, mark, 1) > 0
  }
}

/** A page of events ends earlier (see fitPage). */
export const fitEvents: Fit<EventsResponse> = fitPage(
  (b) => b.events,
  (e) => encodeCursor({ timestamp: e.timestamp, position: e.position }),
)

/** A page of variants ends earlier (see fitPage). */
export const fitVariants: Fit<VariantsResponse> = fitPage(
  (b) => b.variants,
  (v) => encodeVariantsCursor({ objects: v.objects, activities: v.activities }),
)

/**
 * The event or object types from `start` (an offset in the whole list) end earlier; `next_cursor`
 * continues after the last type kept (HTTP, which has no cursor on these lists, gives `start`
 * undefined: then `next_cursor` stays null).
 */
export function fitTypes(start: number | undefined): Fit<EventTypesResponse | ObjectTypesResponse> {
  return (body, maxBytes) => {
    const list = 'event_types' in body ? body.event_types : body.object_types
    return (
      cutList(body, list, maxBytes, () => {
        body.truncated = true
        if (start !== undefined) body.next_cursor = encodeOffsetCursor(start + list.length)
      }) > 0
    )
  }
}

/** The process map keeps each type's most frequent edges, halving their number until it fits (`edges_left_out`), then fewer types. */
export const fitProcessMap: Fit<ProcessMapResponse> = (body, maxBytes) => {
  if (bytesOf(body) <= maxBytes) return false
  const whole = body.object_types
  let max = Math.max(0, ...whole.map((m) => m.edges.length))
  while (max > 0 && bytesOf(body) > maxBytes) {
    max = Math.floor(max / 2)
    body.object_types = whole.map((m) => ({ ...mostFrequentEdges(m, max), edges_left_out: (m.edges_left_out ?? 0) + Math.max(0, m.edges.length - max) }))
  }
  cutList(body, body.object_types, maxBytes, () => undefined)
  return true
}

/** Performance: the activities (by name) past the budget are left out. */
export const fitPerformance: Fit<PerformanceResponse> = (body, maxBytes) => cutList(body, body.activities, maxBytes, () => undefined) > 0

/** Type relations: the activity × object type pairs, then the O2O relations, lose their ends. */
export const fitTypeRelations: Fit<TypeRelationsResponse> = (body, maxBytes) =>
  cutList(body, body.activity_object_types, maxBytes, () => undefined) + cutList(body, body.o2o, maxBytes, () => undefined) > 0

/** Compare: the edges, then the activities, then the performance rows lose their ends (the highlights are kept). */
export const fitCompare: Fit<CompareResponse> = (body, maxBytes) =>
  cutList(body, body.map_edges, maxBytes, () => undefined) +
    cutList(body, body.map_activities, maxBytes, () => undefined) +
    cutList(body, body.performance, maxBytes, () => undefined) >
  0

/** The lists of an object answer with their `…_truncated` flags; `keepEnd` for the attribute history, whose latest changes come last. */
const OBJECT_LISTS = [
  ['trace', 'trace_truncated', false],
  ['related', 'related_truncated', false],
  ['attribute_history', 'attribute_history_truncated', true],
  ['relationships', 'relationships_truncated', false],
  ['incoming_relationships', 'incoming_relationships_truncated', false],
] as const

/**
 * One object: its largest list is halved (and its `…_truncated` flag set) until the answer fits;
 * the trace keeps its first events (page the rest with find_events), the attribute history its
 * latest changes. The object itself is never cut.
 */
export const fitObject: Fit<ObjectResponse> = (body, maxBytes) => {
  let cut = false
  while (bytesOf(body) > maxBytes) {
    const sized = OBJECT_LISTS.map((l) => ({ l, bytes: bytesOf(body[l[0]]) })).sort((x, y) => y.bytes - x.bytes)
    const largest = sized[0]
    if (largest === undefined || body[largest.l[0]].length === 0) break
    const [name, flag, keepEnd] = largest.l
    const list: unknown[] = body[name]
    const keep = Math.floor(list.length / 2)
    if (keepEnd) list.splice(0, list.length - keep)
    else list.length = keep
    body[flag] = true
    cut = true
  }
  return cut
}

/**
 * `text` within `maxChars` characters with `tail` (e.g. how to narrow the question) kept whole at
 * its end: the text is cut at a line end, and a line `…` marks the cut.
 */
export function fitText(text: string, tail: string, maxChars: number = TEXT_CHARS_MAX): string {
  const whole = tail === '' ? text : `${text}\n${tail}`
  if (whole.length <= maxChars) return whole
  const room = maxChars - tail.length - 3
  const head = text.slice(0, Math.max(0, room))
  const lineEnd = head.lastIndexOf('\n')
  const kept = lineEnd > 0 ? head.slice(0, lineEnd) : head
  return tail === '' ? `${kept}\n…` : `${kept}\n…\n${tail}`
}

/** Each read's cut, for the HTTP routes and the MCP tools alike. */
export const FIT = {
  summary: fitNothing,
  types: fitTypes,
  object: fitObject,
  events: fitEvents,
  processMap: fitProcessMap,
  performance: fitPerformance,
  variants: fitVariants,
  typeRelations: fitTypeRelations,
  compare: fitCompare,
} as const
