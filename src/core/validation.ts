/**
 * Validation of ingest items (docs/api.md#fields, #limits). Pure: no I/O.
 * Schema rules come from the TypeBox schemas in src/schemas/api.ts; the rules a schema cannot say
 * (date-times as parseTimestamp reads them, end_timestamp ≥ timestamp, end_timestamp only with
 * timestamp, the nesting, numbers and strings inside properties, item size) are checked here.
 * Every message names the field (a JSON pointer) and the rule it breaks.
 */
import { Compile } from 'typebox/compile'
import { EventInput, ObjectUpsertInput, TypesInput } from '../schemas/api.js'
import { LIMITS } from './limits.js'
import { type FieldError, hasLoneSurrogate, LONE_SURROGATE_MESSAGE, pointerSegment, propertiesErrors, propertiesPass } from './properties-check.js'
import { parseTimestamp } from './timestamp.js'

export type { FieldError }

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] }

const checkEvent = Compile(EventInput)
const checkObject = Compile(ObjectUpsertInput)
const checkTypes = Compile(TypesInput)

const FIELD_RULES: Record<string, string> = {
  event: `event name: 1 to ${String(LIMITS.eventNameMax)} characters`,
  objects: `objects: 1 to ${String(LIMITS.objectsPerEventMax)} items`,
  type: `object type: 1 to ${String(LIMITS.objectTypeMax)} characters`,
  id: `object id: 1 to ${String(LIMITS.objectIdMax)} characters`,
  qualifier: `qualifier: 1 to ${String(LIMITS.qualifierMax)} characters`,
  timestamp: 'timestamp: ISO 8601 with Z or an offset, e.g. 2024-05-01T10:00:00Z',
  end_timestamp: 'end_timestamp: ISO 8601 with Z or an offset, e.g. 2024-05-01T10:00:00Z',
  properties: 'properties: a JSON object',
  idempotency_key: `idempotency key: 1 to ${String(LIMITS.idempotencyKeyMax)} characters, none of them U+0000`,
  relationships: `relationships: 0 to ${String(LIMITS.relationshipsPerObjectMax)} O2O relationships {type, id, qualifier?}`,
}

interface SchemaError {
  keyword: string
  instancePath: string
  params: unknown
  message: string
}

/** The rules of POST /v1/types' fields (docs/api.md#declared-types), by the path's last two named segments or its last one. */
const TYPES_RULES: Record<string, string> = {
  event_types: `event_types: 0 to ${String(LIMITS.declaredTypesMax)} declarations {name, attributes}`,
  object_types: `object_types: 0 to ${String(LIMITS.declaredTypesMax)} declarations {name, attributes}`,
  'event_types/name': `event type name: 1 to ${String(LIMITS.eventNameMax)} characters`,
  'object_types/name': `object type name: 1 to ${String(LIMITS.objectTypeMax)} characters`,
  attributes: `attributes: 0 to ${String(LIMITS.attributesPerTypeMax)} declarations {name, type}`,
  'attributes/name': `attribute name: 1 to ${String(LIMITS.attributeNameMax)} characters`,
  'attributes/type': "attribute type: one of OCEL 2.0's 'string', 'time', 'integer', 'float', 'boolean'",
  idempotency_key: FIELD_RULES.idempotency_key ?? '',
}

function ruleFor(path: string, rules: Record<string, string> = FIELD_RULES): string | undefined {
  const named = path.split('/').filter((p) => p !== '' && !/^\d+$/.test(p))
  const last = named.pop()
  if (last === undefined) return undefined
  const parent = named.pop()
  return (parent === undefined ? undefined : rules[`${parent}/${last}`]) ?? rules[last]
}

/** Turns TypeBox errors into one message per field, dropping the duplicates TypeBox reports for `additionalProperties`. */
function toFieldErrors(errors: Iterable<SchemaError>, rules: Record<string, string> = FIELD_RULES): FieldError[] {
  const out: FieldError[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    if (e.keyword === 'boolean') continue
    const path = e.instancePath
    if (e.keyword === 'additionalProperties') {
      const params = e.params as { additionalProperties?: string[] }
      const names = params.additionalProperties ?? []
      for (const name of names) {
        const p = `${path}/${pointerSegment(name)}`
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
        const rule = ruleFor(p, rules)
        out.push({ path: p, message: `is required${rule === undefined ? '' : ` (${rule})`}` })
      }
      continue
    }
    if (seen.has(path)) continue
    seen.add(path)
    const rule = ruleFor(path, rules)
    const message = e.message
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Lone surrogates in the item's own strings (names, ids, qualifiers); the schema checks their types and lengths. */
function nameErrors(item: Record<string, unknown>, fields: readonly string[], prefix = ''): FieldError[] {
  return fields.flatMap((f) => {
    const v = item[f]
    return typeof v === 'string' && hasLoneSurrogate(v) ? [{ path: `${prefix}/${f}`, message: LONE_SURROGATE_MESSAGE }] : []
  })
}

/** Whether none of `fields` of `item` is a string with a lone surrogate (nameErrors finds nothing). */
function namesPass(item: Record<string, unknown>, fields: readonly string[]): boolean {
  for (const f of fields) {
    const v = item[f]
    if (typeof v === 'string' && hasLoneSurrogate(v)) return false
  }
  return true
}

/** The fields of an item, and of each of its objects or relationships, whose names valueErrors checks. */
const EVENT_NAMES = ['event'] as const
const OBJECT_NAMES = ['type', 'id'] as const
const LINKED_NAMES = ['type', 'id', 'qualifier'] as const

/**
 * Whether valueErrors finds nothing in `item`: the same rules over the same parts (propertiesPass,
 * namesPass), with no path or message built. Most items pass: for them this is the whole walk.
 */
function valuesPass(item: Record<string, unknown>, kind: 'event' | 'object'): boolean {
  const linked = kind === 'object' ? item.relationships : item.objects
  if (!namesPass(item, kind === 'object' ? OBJECT_NAMES : EVENT_NAMES) || !propertiesPass(item.properties)) return false
  if (!Array.isArray(linked)) return true
  for (const o of linked) {
    if (!isRecord(o)) continue
    if (!namesPass(o, LINKED_NAMES) || (kind === 'event' && !propertiesPass(o.properties))) return false
  }
  return true
}

/** Errors of the parts an item's properties walk covers: every properties value and the item's names. */
function valueErrors(item: Record<string, unknown>, kind: 'event' | 'object'): FieldError[] {
  if (valuesPass(item, kind)) return []
  if (kind === 'object') {
    const errors = [...nameErrors(item, OBJECT_NAMES), ...propertiesErrors(item.properties, '/properties')]
    if (Array.isArray(item.relationships)) {
      item.relationships.forEach((r: unknown, i) => {
        if (isRecord(r)) errors.push(...nameErrors(r, LINKED_NAMES, `/relationships/${String(i)}`))
      })
    }
    return errors
  }
  const errors = [...nameErrors(item, EVENT_NAMES), ...propertiesErrors(item.properties, '/properties')]
  if (Array.isArray(item.objects)) {
    item.objects.forEach((o: unknown, i) => {
      if (!isRecord(o)) return
      errors.push(...nameErrors(o, LINKED_NAMES, `/objects/${String(i)}`))
      errors.push(...propertiesErrors(o.properties, `/objects/${String(i)}/properties`))
    })
  }
  return errors
}

/** Parses `timestamp` / `end_timestamp` when they are strings (the schema reports other types); the UTC forms, or errors. */
function timestampErrors(
  item: Record<string, unknown>,
  fields: readonly ('timestamp' | 'end_timestamp')[] = ['timestamp', 'end_timestamp'],
): { errors: FieldError[]; utc: { timestamp?: string; end_timestamp?: string } } {
  const errors: FieldError[] = []
  const utc: { timestamp?: string; end_timestamp?: string } = {}
  for (const field of fields) {
    const text = item[field]
    if (typeof text !== 'string') continue
    const parsed = parseTimestamp(text)
    if (parsed.ok) utc[field] = parsed.utc
    else errors.push({ path: `/${field}`, message: `${parsed.reason} (${String(FIELD_RULES[field])})` })
  }
  return { errors, utc }
}

/**
 * Validates one event item (docs/api.md#event-input).
 * @returns the typed input, or every field error found. Never throws, whatever the JSON value
 *   (deep nesting included: see properties-check).
 */
export function validateEvent(item: unknown, options: SizeCheck = {}): Validated<EventInput> {
  if (!isRecord(item)) {
    return { ok: false, errors: [{ path: '', message: 'must be a JSON object (an event)' }] }
  }
  const values = valueErrors(item, 'event')
  const times = timestampErrors(item)
  if (!checkEvent.Check(item)) return { ok: false, errors: [...toFieldErrors(checkEvent.Errors(item)), ...times.errors, ...values] }
  const errors = [...times.errors, ...values]
  if (errors.length > 0) return { ok: false, errors }
  if (item.end_timestamp !== undefined) {
    const { timestamp, end_timestamp } = times.utc
    if (item.timestamp === undefined) {
      errors.push({ path: '/end_timestamp', message: 'requires an explicit timestamp (end_timestamp is only accepted together with timestamp)' })
    } else if (timestamp !== undefined && end_timestamp !== undefined && end_timestamp < timestamp) {
      // Both are YYYY-MM-DDTHH:mm:ss.sssZ with four-digit years, so string order is time order.
      errors.push({ path: '/end_timestamp', message: `must be on or after timestamp (${item.timestamp})` })
    }
  }
  const over = options.bodyBytes !== undefined && options.bodyBytes <= LIMITS.itemBytesMax ? null : byteLengthOver(item, LIMITS.itemBytesMax)
  if (over !== null) errors.push({ path: '', message: `is ${String(over)} bytes as JSON; one event may be at most ${String(LIMITS.itemBytesMax)} bytes` })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: item }
}

/**
 * Validates one object upsert item (docs/api.md#object-upsert-input; type and id follow
 * docs/api.md#limits; the extensions `timestamp` as an event's, `relationships` with an event's
 * object limits).
 * @returns the typed input, or every field error found. Never throws.
 */
export function validateObjectUpsert(item: unknown, options: SizeCheck = {}): Validated<ObjectUpsertInput> {
  if (!isRecord(item)) {
    return { ok: false, errors: [{ path: '', message: 'must be a JSON object (an object upsert)' }] }
  }
  const values = valueErrors(item, 'object')
  const times = timestampErrors(item, ['timestamp'])
  if (!checkObject.Check(item)) return { ok: false, errors: [...toFieldErrors(checkObject.Errors(item)), ...times.errors, ...values] }
  if (times.errors.length + values.length > 0) return { ok: false, errors: [...times.errors, ...values] }
  const over = options.bodyBytes !== undefined && options.bodyBytes <= LIMITS.itemBytesMax ? null : byteLengthOver(item, LIMITS.itemBytesMax)
  if (over !== null) {
    return {
      ok: false,
      errors: [{ path: '', message: `is ${String(over)} bytes as JSON; one object upsert may be at most ${String(LIMITS.itemBytesMax)} bytes` }],
    }
  }
  return { ok: true, value: item }
}

/** Errors for names given twice in `list` (`what`: the list's JSON pointer): each later one names the first. */
function repeatedNames(list: readonly { name: string }[], what: string, advice: string): FieldError[] {
  const first = new Map<string, number>()
  const errors: FieldError[] = []
  list.forEach((item, i) => {
    const before = first.get(item.name)
    if (before === undefined) first.set(item.name, i)
    else errors.push({ path: `${what}/${String(i)}/name`, message: `"${item.name}" is declared twice (also ${what}/${String(before)}); ${advice}` })
  })
  return errors
}

/** Lone surrogates in the declared names (the schema checks their types and lengths). */
function declarationNameErrors(list: readonly unknown[], what: string): FieldError[] {
  return list.flatMap((t, i) => {
    if (!isRecord(t)) return []
    const at = `${what}/${String(i)}`
    const attributes = Array.isArray(t.attributes) ? t.attributes : []
    return [
      ...nameErrors(t, ['name'], at),
      ...attributes.flatMap((a: unknown, j) => (isRecord(a) ? nameErrors(a, ['name'], `${at}/attributes/${String(j)}`) : [])),
    ]
  })
}

/**
 * Validates one POST /v1/types body (docs/api.md#declared-types): the schema (names within the
 * event name and object type limits, attribute types of OCEL 2.0), at least one type, each type
 * name once per list and each attribute name once per type, no lone surrogate in a name, and the
 * item size of an event.
 * @returns the typed input, or every field error found (paths are JSON pointers into the body). Never throws.
 */
export function validateTypes(item: unknown, options: SizeCheck = {}): Validated<TypesInput> {
  if (!isRecord(item)) return { ok: false, errors: [{ path: '', message: 'must be a JSON object with event_types and/or object_types' }] }
  const lists = (['event_types', 'object_types'] as const).map((field) => ({ field, list: Array.isArray(item[field]) ? (item[field] as unknown[]) : [] }))
  const names = lists.flatMap(({ field, list }) => declarationNameErrors(list, `/${field}`))
  if (!checkTypes.Check(item)) return { ok: false, errors: [...toFieldErrors(checkTypes.Errors(item), TYPES_RULES), ...names] }
  const input: TypesInput = item
  const errors = [...names]
  for (const field of ['event_types', 'object_types'] as const) {
    const list = input[field] ?? []
    errors.push(...repeatedNames(list, `/${field}`, 'send each type once, with all its attributes'))
    for (const [i, t] of list.entries())
      errors.push(...repeatedNames(t.attributes, `/${field}/${String(i)}/attributes`, 'declare each attribute once per type'))
  }
  if ((input.event_types?.length ?? 0) + (input.object_types?.length ?? 0) === 0) {
    errors.push({ path: '', message: 'declares no type: send at least one event type (event_types) or object type (object_types)' })
  }
  const over = options.bodyBytes !== undefined && options.bodyBytes <= LIMITS.itemBytesMax ? null : byteLengthOver(item, LIMITS.itemBytesMax)
  if (over !== null) errors.push({ path: '', message: `is ${String(over)} bytes as JSON; one declaration may be at most ${String(LIMITS.itemBytesMax)} bytes` })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: input }
}

/** Formats a batch item failure as the batch answer's `errors` string (docs/api.md#batches): `Event 3: /objects/0/type: must …`. */
export function itemErrorString(label: 'Event' | 'Object', index: number, errors: readonly FieldError[]): string {
  const parts = errors.map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`))
  return `${label} ${String(index)}: ${parts.join('; ')}`
}
