/**
 * Validation of ingest items (spec § Resources and their fields, § Limits). Pure: no I/O.
 * Schema rules come from the TypeBox schemas in src/schemas/api.ts; the rules a schema cannot say
 * (end_timestamp ≥ timestamp, end_timestamp only with timestamp, item size) are checked here.
 * Every message names the field (a JSON pointer) and the rule it breaks.
 */
import { Compile } from 'typebox/compile'
import { EventInput, ObjectUpsertInput } from '../schemas/api.js'
import { LIMITS } from './limits.js'

export interface FieldError {
  /** JSON pointer inside the item, e.g. `/objects/3/type`; '' for the item itself. */
  path: string
  message: string
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] }

const checkEvent = Compile(EventInput)
const checkObject = Compile(ObjectUpsertInput)

const FIELD_RULES: Record<string, string> = {
  event: `event name: 1 to ${String(LIMITS.eventNameMax)} characters`,
  objects: `objects: 1 to ${String(LIMITS.objectsPerEventMax)} items`,
  type: `object type: 1 to ${String(LIMITS.objectTypeMax)} characters`,
  id: `object id: 1 to ${String(LIMITS.objectIdMax)} characters`,
  qualifier: `qualifier: 1 to ${String(LIMITS.qualifierMax)} characters`,
  timestamp: 'timestamp: ISO 8601 with Z or an offset, e.g. 2024-05-01T10:00:00Z',
  end_timestamp: 'end_timestamp: ISO 8601 with Z or an offset, e.g. 2024-05-01T10:00:00Z',
  properties: 'properties: a JSON object',
}

interface SchemaError {
  keyword: string
  instancePath: string
  params: unknown
  message: string
}

function ruleFor(path: string): string | undefined {
  const last = path
    .split('/')
    .filter((p) => p !== '' && !/^\d+$/.test(p))
    .pop()
  return last === undefined ? undefined : FIELD_RULES[last]
}

/** Turns TypeBox errors into one message per field, dropping the duplicates TypeBox reports for `additionalProperties`. */
function toFieldErrors(errors: Iterable<SchemaError>): FieldError[] {
  const out: FieldError[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    if (e.keyword === 'boolean') continue
    const path = e.instancePath
    let message: string
    if (e.keyword === 'additionalProperties') {
      const params = e.params as { additionalProperties?: string[] }
      const names = params.additionalProperties ?? []
      for (const name of names) {
        const p = `${path}/${name}`
        if (seen.has(p)) continue
        seen.add(p)
        out.push({ path: p, message: `unknown field "${name}" is not allowed` })
      }
      continue
    }
    if (e.keyword === 'required') {
      const params = e.params as { requiredProperties?: string[] }
      for (const name of params.requiredProperties ?? []) {
        const p = `${path}/${name}`
        if (seen.has(p)) continue
        seen.add(p)
        const rule = FIELD_RULES[name]
        out.push({ path: p, message: `is required${rule === undefined ? '' : ` (${rule})`}` })
      }
      continue
    }
    if (seen.has(path)) continue
    seen.add(path)
    const rule = ruleFor(path)
    message = e.message
    if (e.keyword === 'format' && path.endsWith('timestamp')) message = 'is not a valid ISO 8601 date-time with Z or an offset'
    out.push({ path, message: rule === undefined ? message : `${message} (${rule})` })
  }
  return out
}

/** `bodyBytes`: size of the whole request body; when it is within the item limit, no item can exceed it and the check is skipped. */
export interface SizeCheck {
  bodyBytes?: number
}

function byteLengthOver(value: unknown, max: number): number | null {
  const bytes = Buffer.byteLength(JSON.stringify(value))
  return bytes > max ? bytes : null
}

/**
 * Validates one event item (§ Event input).
 * @returns the typed input, or every field error found. Never throws.
 */
export function validateEvent(item: unknown, options: SizeCheck = {}): Validated<EventInput> {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { ok: false, errors: [{ path: '', message: 'must be a JSON object (an event)' }] }
  }
  if (!checkEvent.Check(item)) return { ok: false, errors: toFieldErrors(checkEvent.Errors(item)) }
  const errors: FieldError[] = []
  if (item.end_timestamp !== undefined) {
    if (item.timestamp === undefined) {
      errors.push({ path: '/end_timestamp', message: 'requires an explicit timestamp (end_timestamp is only accepted together with timestamp)' })
    } else if (Date.parse(item.end_timestamp) < Date.parse(item.timestamp)) {
      errors.push({ path: '/end_timestamp', message: `must be on or after timestamp (${item.timestamp})` })
    }
  }
  const over = options.bodyBytes !== undefined && options.bodyBytes <= LIMITS.itemBytesMax ? null : byteLengthOver(item, LIMITS.itemBytesMax)
  if (over !== null) errors.push({ path: '', message: `is ${String(over)} bytes as JSON; one event may be at most ${String(LIMITS.itemBytesMax)} bytes` })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: item }
}

/**
 * Validates one object upsert item (§ Object upsert input; type and id follow § Limits).
 * @returns the typed input, or every field error found. Never throws.
 */
export function validateObjectUpsert(item: unknown, options: SizeCheck = {}): Validated<ObjectUpsertInput> {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { ok: false, errors: [{ path: '', message: 'must be a JSON object (an object upsert)' }] }
  }
  if (!checkObject.Check(item)) return { ok: false, errors: toFieldErrors(checkObject.Errors(item)) }
  const over = options.bodyBytes !== undefined && options.bodyBytes <= LIMITS.itemBytesMax ? null : byteLengthOver(item, LIMITS.itemBytesMax)
  if (over !== null) {
    return {
      ok: false,
      errors: [{ path: '', message: `is ${String(over)} bytes as JSON; one object upsert may be at most ${String(LIMITS.itemBytesMax)} bytes` }],
    }
  }
  return { ok: true, value: item }
}

/** Formats a batch item failure as the spec's `errors` string: `Event 3: /objects/0/type: must …`. */
export function itemErrorString(label: 'Event' | 'Object', index: number, errors: readonly FieldError[]): string {
  const parts = errors.map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`))
  return `${label} ${String(index)}: ${parts.join('; ')}`
}
