/**
 * The one query layer of the read side (scope `process:read`, docs/api.md#authentication-and-scopes):
 * `/v1/process/*`, the MCP tools and `/ui/` all call this class. It checks the parameters
 * (InvalidParameterError naming the parameter, 422), turns them into a ReadModelQuery filter,
 * encodes and decodes the opaque events cursor, and wraps each answer in its envelope:
 * `dataset_id`, `as_of` and, for the summary, `log_position`. `as_of` is read in the same snapshot
 * of the read models as the answer (ReadModelQuery.consistentRead: one transaction on SQLite and
 * PostgreSQL), so what the projector applies meanwhile is neither in the answer nor in `as_of`
 * (docs/architecture.md#projection-runners-and-leases).
 *
 * Parameter rules:
 * - `from` / `to`: ISO 8601 date-times with `Z` or an offset (one parser for the whole service);
 *   `from` inclusive, `to` exclusive; when both are given `to` must be later than `from` (an empty
 *   or reversed window is a caller's mistake, reported on `to`).
 * - `object_type`, `event_type`, `object_id`: non-empty strings.
 * - `limit`: an integer from 1 to READ_LIMIT_MAX (default READ_LIMIT_DEFAULT), as a number or decimal text.
 * - `cursor`: exactly what a previous `next_cursor` held.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { InvalidParameterError, NotFoundError } from '../core/errors.js'
import { parseTimestamp } from '../core/timestamp.js'
import type { EventLog } from '../ports/event-log.js'
import type { EventsAfter, ReadModelQuery, TimeWindow } from '../ports/read-model-query.js'
import type { VariantsAfter } from '../ports/read-model-query.js'
import { compareWindows, mostFrequentComparedEdges } from './compare.js'
import {
  type CompareResponse,
  type PerformanceResponse,
  SLOWEST_DEFAULT,
  SLOWEST_MAX,
  type TypeRelationsResponse,
  VARIANTS_LIMIT_DEFAULT,
  type VariantsResponse,
} from '../schemas/analysis.js'
import {
  type EventsResponse,
  type EventTypesResponse,
  type ObjectResponse,
  type ObjectTypesResponse,
  type ProcessMapResponse,
  MAX_EDGES_LIMIT,
  type ObjectTypeMap,
  READ_LIMIT_DEFAULT,
  READ_LIMIT_MAX,
  type SummaryResponse,
} from '../schemas/process.js'

/** What the read routes and the MCP tools need of the reader. */
export type ProcessReads = Pick<
  ProcessReader,
  'processMap' | 'summary' | 'eventTypes' | 'objectTypes' | 'object' | 'events' | 'performance' | 'variants' | 'typeRelations' | 'compare'
>

export interface ProcessMapParams {
  object_type?: string | string[]
  from?: string
  to?: string
}

export interface ProcessMapReadParams extends ProcessMapParams {
  max_edges?: string | number
}

export interface EventsParams {
  event_type?: string
  object_type?: string
  object_id?: string
  from?: string
  to?: string
  limit?: string | number
  cursor?: string
}

export interface PerformanceParams extends ProcessMapParams {
  slowest?: string | number
}

export interface CompareParams {
  object_type?: string | string[]
  max_edges?: string | number
  a_from?: string
  a_to?: string
  b_from?: string
  b_to?: string
}

export interface VariantsParams {
  object_type?: string
  from?: string
  to?: string
  limit?: string | number
  cursor?: string
}

const CURSOR_RULE = 'an opaque cursor exactly as a previous answer’s next_cursor gave it'
const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * Encodes where the next page of events starts: base64url of the JSON `{"t": timestamp, "p": position}`.
 * Opaque to callers; only `decodeCursor` reads it.
 */
export function encodeCursor(after: EventsAfter): string {
  return Buffer.from(JSON.stringify({ t: after.timestamp, p: after.position }), 'utf8').toString('base64url')
}

/** The JSON object a cursor holds, or null when it is not base64url of a JSON object. */
function cursorObject(cursor: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/**
 * Decodes a cursor made by `encodeCursor`.
 * @throws InvalidParameterError on `cursor` when it is not base64url of `{"t": UTC ISO 8601 with ms, "p": integer ≥ 0}`.
 */
export function decodeCursor(cursor: string): EventsAfter {
  const value = cursorObject(cursor)
  if (value === null) throw new InvalidParameterError('cursor', CURSOR_RULE)
  const { t, p } = value
  if (Object.keys(value).length !== 2 || typeof t !== 'string' || !CANONICAL_TIME.test(t) || !parseTimestamp(t).ok) {
    throw new InvalidParameterError('cursor', CURSOR_RULE)
  }
  if (typeof p !== 'number' || !Number.isSafeInteger(p) || p < 0) throw new InvalidParameterError('cursor', CURSOR_RULE)
  return { timestamp: t, position: p }
}

/** A variants cursor longer than this is deflated (a variant of thousands of steps would otherwise give a cursor of tens of KB). */
const VARIANTS_CURSOR_PLAIN_MAX = 512
/** `z.` + base64url of the deflated JSON: `.` is not a base64url character, so the two forms cannot be confused. */
const DEFLATED_PREFIX = 'z.'
/** The most bytes a deflated cursor may inflate to. */
const CURSOR_INFLATED_MAX = 16 * 1024 * 1024

/**
 * Encodes where the next page of variants starts: base64url of the JSON `{"n": objects, "a": activities}`,
 * or, past VARIANTS_CURSOR_PLAIN_MAX characters, `z.` and base64url of that JSON deflated (RFC 1951).
 * Opaque to callers.
 */
export function encodeVariantsCursor(after: VariantsAfter): string {
  const json = JSON.stringify({ n: after.objects, a: after.activities })
  const plain = Buffer.from(json, 'utf8').toString('base64url')
  if (plain.length <= VARIANTS_CURSOR_PLAIN_MAX) return plain
  return `${DEFLATED_PREFIX}${deflateRawSync(Buffer.from(json, 'utf8'), { level: 9 }).toString('base64url')}`
}

/** A deflated variants cursor as the plain one (undefined when it does not inflate). */
function inflatedCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined
  try {
    return inflateRawSync(Buffer.from(cursor, 'base64url'), { maxOutputLength: CURSOR_INFLATED_MAX }).toString('base64url')
  } catch {
    return undefined
  }
}

/**
 * Decodes a cursor made by `encodeVariantsCursor`.
 * @throws InvalidParameterError on `cursor` unless it is base64url of `{"n": integer ≥ 1, "a": [string, …] (not empty)}`, plain or deflated.
 */
export function decodeVariantsCursor(cursor: string): VariantsAfter {
  const plain = cursor.startsWith(DEFLATED_PREFIX) ? inflatedCursor(cursor.slice(DEFLATED_PREFIX.length)) : cursor
  const value = plain === undefined ? null : cursorObject(plain)
  if (value === null) throw new InvalidParameterError('cursor', CURSOR_RULE)
  const { n, a } = value
  if (Object.keys(value).length !== 2 || typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new InvalidParameterError('cursor', CURSOR_RULE)
  if (!Array.isArray(a) || a.length === 0 || !a.every((x) => typeof x === 'string')) throw new InvalidParameterError('cursor', CURSOR_RULE)
  return { objects: n, activities: a }
}

/**
 * Reads `limit`: absent gives READ_LIMIT_DEFAULT.
 * @throws InvalidParameterError on `limit` unless it is an integer from 1 to READ_LIMIT_MAX (a number or decimal digits).
 */
export function parseLimit(limit: string | number | undefined): number {
  if (limit === undefined) return READ_LIMIT_DEFAULT
  const n = typeof limit === 'number' ? limit : /^\d{1,7}$/.test(limit) ? Number(limit) : Number.NaN
  if (!Number.isInteger(n) || n < 1 || n > READ_LIMIT_MAX) {
    throw new InvalidParameterError('limit', `an integer from 1 to ${String(READ_LIMIT_MAX)}`)
  }
  return n
}

/**
 * Reads `slowest`: absent gives SLOWEST_DEFAULT.
 * @throws InvalidParameterError on `slowest` unless it is an integer from 0 to SLOWEST_MAX (a number or decimal digits).
 */
export function parseSlowest(slowest: string | number | undefined): number {
  if (slowest === undefined) return SLOWEST_DEFAULT
  const n = typeof slowest === 'number' ? slowest : /^\d{1,4}$/.test(slowest) ? Number(slowest) : Number.NaN
  if (!Number.isInteger(n) || n < 0 || n > SLOWEST_MAX) throw new InvalidParameterError('slowest', `an integer from 0 to ${String(SLOWEST_MAX)}`)
  return n
}

/**
 * Reads `max_edges`: absent gives undefined (every edge).
 * @throws InvalidParameterError on `max_edges` unless it is an integer from 1 to MAX_EDGES_LIMIT (a number or decimal digits).
 */
export function parseMaxEdges(maxEdges: string | number | undefined): number | undefined {
  if (maxEdges === undefined) return undefined
  const n = typeof maxEdges === 'number' ? maxEdges : /^\d{1,6}$/.test(maxEdges) ? Number(maxEdges) : Number.NaN
  if (!Number.isInteger(n) || n < 1 || n > MAX_EDGES_LIMIT) throw new InvalidParameterError('max_edges', `an integer from 1 to ${String(MAX_EDGES_LIMIT)}`)
  return n
}

/**
 * An object type's map with only its `max` most frequent edges (by `total`, ties by source then
 * target), still sorted by (source, target), and `edges_left_out` saying how many were dropped.
 */
export function mostFrequentEdges(map: ObjectTypeMap, max: number): ObjectTypeMap {
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const kept = [...map.edges]
    .sort((x, y) => y.total - x.total || byText(x.source, y.source) || byText(x.target, y.target))
    .slice(0, max)
    .sort((x, y) => byText(x.source, y.source) || byText(x.target, y.target))
  return { ...map, edges: kept, edges_left_out: map.edges.length - kept.length }
}

/**
 * Reads `from` / `to` into UTC ISO 8601 with milliseconds.
 * @param names how the caller names the two bounds (compare's `a_from`, `a_to`, …); default `from`, `to`.
 * @throws InvalidParameterError on `from` or `to` when unparsable, and on `to` when not later than `from`.
 */
export function parseWindow(params: { from?: string; to?: string }, names: { from: string; to: string } = { from: 'from', to: 'to' }): TimeWindow {
  const window: TimeWindow = {}
  for (const name of ['from', 'to'] as const) {
    const text = params[name]
    if (text === undefined) continue
    const parsed = parseTimestamp(text)
    if (!parsed.ok) throw new InvalidParameterError(names[name], 'an ISO 8601 date-time with Z or an offset, e.g. 2024-05-01T10:00:00Z')
    window[name] = parsed.utc
  }
  if (window.from !== undefined && window.to !== undefined && window.to <= window.from) {
    throw new InvalidParameterError(names.to, `a date-time later than ${names.from} (${names.from} is inclusive, ${names.to} exclusive)`)
  }
  return window
}

function nonEmpty(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.length === 0) throw new InvalidParameterError(name, 'a non-empty string')
  return value
}

/** `object_type` as one or repeated values: a list of distinct non-empty names (empty: all types). */
function objectTypeList(value: string | string[] | undefined, parameter: string): string[] {
  if (value === undefined) return []
  const list = typeof value === 'string' ? [value] : value
  for (const t of list) nonEmpty(parameter, t)
  return [...new Set(list)]
}

export class ProcessReader {
  private readonly query: ReadModelQuery
  private readonly log: EventLog

  constructor(deps: { query: ReadModelQuery; log: EventLog }) {
    this.query = deps.query
    this.log = deps.log
  }

  /**
   * Runs `read` with the answer's `as_of` (ReadModelQuery.asOf), both in one snapshot of the read
   * models (ReadModelQuery.consistentRead), so that what the projector applies meanwhile is in neither.
   */
  private asOf<T>(read: (as_of: number) => Promise<T>): Promise<T> {
    return this.query.consistentRead(async () => read(await this.query.asOf()))
  }

  /**
   * The object-centric directly-follows graph of `datasetId` (`GET /v1/process/map`).
   * @param params `object_type` (one or repeated; default all types), `from`, `to`, `max_edges`
   *   (with it, each type keeps its most frequent edges and `edges_left_out` counts the others).
   * @param parameterNames how the caller named `object_type` (MCP names it `object_types`).
   * @throws InvalidParameterError naming the parameter.
   */
  async processMap(datasetId: string, params: ProcessMapReadParams, parameterNames: { objectType?: string } = {}): Promise<ProcessMapResponse> {
    const objectTypes = objectTypeList(params.object_type, parameterNames.objectType ?? 'object_type')
    const window = parseWindow(params)
    const maxEdges = parseMaxEdges(params.max_edges)
    return this.asOf(async (as_of) => {
      const { object_types, median_relative_error } = await this.query.processMap(datasetId, { ...window, objectTypes })
      return {
        dataset_id: datasetId,
        as_of,
        object_types: maxEdges === undefined ? object_types : object_types.map((m) => mostFrequentEdges(m, maxEdges)),
        median_relative_error,
      }
    })
  }

  /**
   * Object-centric performance per activity (`GET /v1/process/performance`; docs/analysis.md).
   * @param params `object_type` (one or repeated; default all types), `from`, `to`, `slowest` (0 to SLOWEST_MAX, default SLOWEST_DEFAULT).
   * @param parameterNames how the caller named `object_type` (MCP names it `object_types`).
   * @throws InvalidParameterError naming the parameter.
   */
  async performance(datasetId: string, params: PerformanceParams, parameterNames: { objectType?: string } = {}): Promise<PerformanceResponse> {
    const objectTypes = objectTypeList(params.object_type, parameterNames.objectType ?? 'object_type')
    const window = parseWindow(params)
    const slowest = parseSlowest(params.slowest)
    return this.asOf(async (as_of) => {
      const activities = await this.query.performance(datasetId, { ...window, objectTypes, slowest })
      return { dataset_id: datasetId, as_of, activities }
    })
  }

  /**
   * A page of the trace variants of one object type (`GET /v1/process/variants`; docs/analysis.md).
   * @param params `object_type` (required), `from`, `to`, `limit` (1 to READ_LIMIT_MAX, default
   *   VARIANTS_LIMIT_DEFAULT unless `defaultLimit` says otherwise), `cursor`.
   * @throws InvalidParameterError naming the parameter.
   */
  async variants(datasetId: string, params: VariantsParams, defaultLimit: number = VARIANTS_LIMIT_DEFAULT): Promise<VariantsResponse> {
    const objectType = nonEmpty('object_type', params.object_type)
    if (objectType === undefined) throw new InvalidParameterError('object_type', 'is required: the object type whose traces are grouped')
    const window = parseWindow(params)
    const limit = params.limit === undefined ? defaultLimit : parseLimit(params.limit)
    const after = params.cursor === undefined ? undefined : decodeVariantsCursor(params.cursor)
    return this.asOf(async (as_of) => {
      const page = await this.query.variants(datasetId, { ...window, objectType, limit, ...(after === undefined ? {} : { after }) })
      return {
        dataset_id: datasetId,
        as_of,
        object_type: objectType,
        objects: page.objects,
        total: page.total,
        variants: page.variants,
        truncated: page.next !== null,
        next_cursor: page.next === null ? null : encodeVariantsCursor(page.next),
      }
    })
  }

  /**
   * Activity × object type and the O2O relations between types (`GET /v1/process/type-relations`; docs/analysis.md).
   * @throws InvalidParameterError naming the parameter.
   */
  async typeRelations(datasetId: string, params: { from?: string; to?: string }): Promise<TypeRelationsResponse> {
    const window = parseWindow(params)
    return this.asOf(async (as_of) => {
      return { dataset_id: datasetId, as_of, ...(await this.query.typeRelations(datasetId, window)) }
    })
  }

  /**
   * The process map and performance of two windows side by side (`GET /v1/process/compare`; docs/analysis.md).
   * @param params `object_type` (one or repeated; default all types), `a_from`, `a_to`, `b_from`, `b_to` (each absent: open),
   *   `max_edges` (each type's most frequent edges in either window).
   * @param parameterNames how the caller named `object_type` (MCP names it `object_types`).
   * @throws InvalidParameterError naming the parameter.
   */
  async compare(datasetId: string, params: CompareParams, parameterNames: { objectType?: string } = {}): Promise<CompareResponse> {
    const objectTypes = objectTypeList(params.object_type, parameterNames.objectType ?? 'object_type')
    const a = parseWindow({ from: params.a_from, to: params.a_to }, { from: 'a_from', to: 'a_to' })
    const b = parseWindow({ from: params.b_from, to: params.b_to }, { from: 'b_from', to: 'b_to' })
    const maxEdges = parseMaxEdges(params.max_edges)
    return this.asOf(async (as_of) => {
      const [mapA, mapB, perfA, perfB] = [
        (await this.query.processMap(datasetId, { ...a, objectTypes })).object_types,
        (await this.query.processMap(datasetId, { ...b, objectTypes })).object_types,
        await this.query.performance(datasetId, { ...a, objectTypes, slowest: 0 }),
        await this.query.performance(datasetId, { ...b, objectTypes, slowest: 0 }),
      ]
      const side = (w: TimeWindow) => ({ from: w.from ?? null, to: w.to ?? null })
      const comparison = compareWindows(mapA, mapB, perfA, perfB)
      if (maxEdges === undefined) return { dataset_id: datasetId, as_of, a: side(a), b: side(b), ...comparison }
      const { kept, leftOut } = mostFrequentComparedEdges(comparison.map_edges, maxEdges)
      return { dataset_id: datasetId, as_of, a: side(a), b: side(b), ...comparison, map_edges: kept, edges_left_out: leftOut }
    })
  }

  /** Counts of the dataset (`GET /v1/process/summary`); `log_position` is the last record of its stream. */
  async summary(datasetId: string): Promise<SummaryResponse> {
    return this.asOf(async (as_of) => {
      const log_position = await this.log.lastPosition(datasetId)
      const counts = await this.query.summary(datasetId)
      return { dataset_id: datasetId, as_of, log_position, ...counts }
    })
  }

  /** Event types with counts and attributes (`GET /v1/process/event-types`). */
  async eventTypes(datasetId: string): Promise<EventTypesResponse> {
    return this.asOf(async (as_of) => {
      const event_types = await this.query.eventTypes(datasetId)
      return { dataset_id: datasetId, as_of, event_types, total: event_types.length, truncated: false, next_cursor: null }
    })
  }

  /** Object types with counts and attributes (`GET /v1/process/object-types`). */
  async objectTypes(datasetId: string): Promise<ObjectTypesResponse> {
    return this.asOf(async (as_of) => {
      const object_types = await this.query.objectTypes(datasetId)
      return { dataset_id: datasetId, as_of, object_types, total: object_types.length, truncated: false, next_cursor: null }
    })
  }

  /**
   * One object with its attribute history, trace and related objects (`GET /v1/process/objects/{type}/{id}`).
   * @throws NotFoundError when the dataset has no object (type, id).
   */
  async object(datasetId: string, type: string, id: string): Promise<ObjectResponse> {
    nonEmpty('type', type)
    nonEmpty('id', id)
    return this.asOf(async (as_of) => {
      const detail = await this.query.object(datasetId, type, id, READ_LIMIT_MAX)
      if (detail === null) throw new NotFoundError(`no object of type "${type}" with id "${id}" in this dataset`)
      return { dataset_id: datasetId, as_of, ...detail }
    })
  }

  /**
   * A page of events with their E2O links, in (timestamp, position) order (`GET /v1/process/events`).
   * @throws InvalidParameterError naming the parameter.
   */
  async events(datasetId: string, params: EventsParams): Promise<EventsResponse> {
    const eventType = nonEmpty('event_type', params.event_type)
    const objectType = nonEmpty('object_type', params.object_type)
    const objectId = nonEmpty('object_id', params.object_id)
    const window = parseWindow(params)
    const limit = parseLimit(params.limit)
    const after = params.cursor === undefined ? undefined : decodeCursor(params.cursor)
    return this.asOf(async (as_of) => {
      const page = await this.query.events(datasetId, {
        ...window,
        limit,
        ...(eventType === undefined ? {} : { eventType }),
        ...(objectType === undefined ? {} : { objectType }),
        ...(objectId === undefined ? {} : { objectId }),
        ...(after === undefined ? {} : { after }),
      })
      // Counted: the filter above leaves `count` at its default.
      if (page.total === null) throw new Error('read models: an events page asked with its count came without it')
      return {
        dataset_id: datasetId,
        as_of,
        events: page.events,
        total: page.total,
        truncated: page.next !== null,
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      }
    })
  }
}
