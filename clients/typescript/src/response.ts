/**
 * Reading the service's answers without a runtime schema library: light structural checks of the
 * shapes in ./contract/schemas.ts (the response schemas, plus `error_details` of docs/api.md#batches).
 * Pure functions.
 */
import type { ObjectResult } from './api.js'

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
}

export function isObjectResult(value: unknown): value is ObjectResult {
  return (
    isRecord(value) &&
    typeof value.object_id === 'string' &&
    typeof value.object_type === 'string' &&
    typeof value.external_id === 'string' &&
    typeof value.created === 'boolean'
  )
}

/** How one batch answer accounts for the request's items (indices are positions in the request). */
export interface BatchReading<R> {
  accepted: { position: number; value: R }[]
  /** Accepted items the service had already recorded under their idempotency keys (the answer's `duplicates`; 0 when absent). */
  duplicates: number
  failed: { position: number; reason: string; errors: { path: string; message: string }[] }[]
}

const LEADING_INDEX = /^(?:Event|Object) (\d+):/

/**
 * Matches a 200 batch answer to the `n` items that were sent.
 * Failed positions come from `error_details[].index` and from the `Event N:` / `Object N:` prefix
 * of the `errors` strings; every other position is accepted, and takes the next value of
 * `values` (`event_ids` or `objects`, which list the accepted items in request order).
 * @param valuesField `event_ids` (R = string) or `objects` (R = ObjectResult).
 * @returns null when the body does not have the batch shape or does not account for every item.
 */
export function readBatchAnswer<R>(body: unknown, n: number, valuesField: string, isValue: (v: unknown) => v is R): BatchReading<R> | null {
  if (!isRecord(body)) return null
  const values = body[valuesField]
  const errors = body.errors ?? []
  const details = body.error_details ?? []
  if (!Array.isArray(values) || !values.every(isValue) || !isStringArray(errors) || !Array.isArray(details)) return null
  const failed = new Map<number, { reason: string; errors: { path: string; message: string }[] }>()
  const entry = (position: number) => {
    let found = failed.get(position)
    if (found === undefined) {
      found = { reason: '', errors: [] }
      failed.set(position, found)
    }
    return found
  }
  for (const d of details) {
    if (!isRecord(d) || typeof d.index !== 'number' || !Number.isInteger(d.index) || d.index < 0 || d.index >= n) return null
    entry(d.index).errors.push({ path: typeof d.path === 'string' ? d.path : '', message: typeof d.message === 'string' ? d.message : '' })
  }
  for (const line of errors) {
    const m = LEADING_INDEX.exec(line)
    if (m === null) continue
    const position = Number(m[1])
    if (position >= n) return null
    const e = entry(position)
    e.reason = e.reason === '' ? line : `${e.reason}; ${line}`
  }
  const accepted: { position: number; value: R }[] = []
  let next = 0
  for (let position = 0; position < n; position++) {
    if (failed.has(position)) continue
    const value = values[next]
    if (value === undefined) return null
    accepted.push({ position, value })
    next += 1
  }
  if (next !== values.length) return null
  const duplicates = typeof body.duplicates === 'number' && Number.isInteger(body.duplicates) && body.duplicates >= 0 ? body.duplicates : 0
  return {
    accepted,
    duplicates,
    failed: [...failed.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([position, f]) => ({
        position,
        reason: f.reason !== '' ? f.reason : f.errors.map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`)).join('; '),
        errors: f.errors,
      })),
  }
}

/** One line for a non-2xx answer: `422 Validation failed: The event was rejected: …`, from a problem body when there is one. */
export function describeAnswer(status: number, body: unknown, text: string): string {
  if (isRecord(body)) {
    const title = typeof body.title === 'string' ? body.title : ''
    const detail = typeof body.detail === 'string' ? body.detail : ''
    if (title !== '' || detail !== '') return `${String(status)} ${title}${title !== '' && detail !== '' ? ': ' : ''}${detail}`
  }
  const snippet = text.trim().slice(0, 200)
  return `${String(status)}${snippet === '' ? '' : ` ${snippet}`}`
}

/** The `errors: [{path, message}]` of a problem body, if any. */
export function problemFieldErrors(body: unknown): { path: string; message: string }[] {
  if (!isRecord(body) || !Array.isArray(body.errors)) return []
  return body.errors.flatMap((e) =>
    isRecord(e) && typeof e.message === 'string' ? [{ path: typeof e.path === 'string' ? e.path : '', message: e.message }] : [],
  )
}
