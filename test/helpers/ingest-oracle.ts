/**
 * An oracle for the ingestion rules, written for the tests apart from src/core (it imports nothing
 * from there): from a parsed JSON item it says whether the service must accept it, and what UTC
 * timestamp it must record. The rules are those of docs/api.md (#event-input, #object-input,
 * #object-upsert-input, #limits) with Ocelog's documented choices (item size, nesting, date-time forms).
 */

/** The limits as the README states them. */
export const RULES = {
  eventNameMax: 200,
  objectTypeMax: 100,
  objectIdMax: 500,
  qualifierMax: 100,
  objectsMax: 50,
  batchMax: 100,
  itemBytesMax: 512 * 1024,
  depthMax: 64,
} as const

export type Verdict = { ok: true; timestamp?: string; endTimestamp?: string } | { ok: false; why: string }

const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?([Zz]|[+-]\d{2}(?::?\d{2})?)$/
const BASIC = /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(\d{2})(?:[.,](\d+))?([Zz]|[+-]\d{2}(?::?\d{2})?)$/

/**
 * What a date-time string must become: its UTC instant as `YYYY-MM-DDTHH:mm:ss.sssZ`, or null
 * when it must be refused. Calendar arithmetic by the built-in Date, not by the service's code.
 */
export function expectedUtc(text: string): string | null {
  const m = EXTENDED.exec(text) ?? BASIC.exec(text)
  if (m === null) return null
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const fraction = m[7] ?? ''
  const zone = m[8] ?? 'Z'
  if (s === 60) return null // leap second
  if (h === 24 ? mi !== 0 || s !== 0 || /[1-9]/.test(fraction) : h > 23 || mi > 59 || s > 59) return null
  let offsetMinutes = 0
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2))
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
    if (oh > 23 || om > 59) return null
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om)
  }
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null
  date.setUTCHours(h, mi, s, Number(fraction.slice(0, 3).padEnd(3, '0')))
  const utc = new Date(date.getTime() - offsetMinutes * 60_000)
  const year = utc.getUTCFullYear()
  if (year < 1 || year > 9999) return null
  return utc.toISOString()
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Whether a string is well-formed UTF-16 (every surrogate paired), walked by code point. */
function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) return false
  }
  return true
}

function nameOk(v: unknown, max: number): boolean {
  if (typeof v !== 'string' || !wellFormed(v)) return false
  const codePoints = Array.from(v).length
  return codePoints >= 1 && codePoints <= max
}

/** Properties: absent, or a plain object nesting at most 64 levels, with finite numbers and well-formed strings. */
function propertiesOk(v: unknown): boolean {
  if (v === undefined) return true
  if (!isPlainObject(v)) return false
  const stack: [unknown, number][] = [[v, 1]]
  while (stack.length > 0) {
    const [x, depth] = stack.pop() ?? [null, 0]
    if (typeof x === 'number' && !Number.isFinite(x)) return false
    if (typeof x === 'string' && !wellFormed(x)) return false
    if (typeof x === 'object' && x !== null) {
      if (depth > RULES.depthMax) return false
      for (const [k, child] of Object.entries(x)) {
        if (!wellFormed(k)) return false
        stack.push([child, depth + 1])
      }
    }
  }
  return true
}

function onlyKeys(v: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(v).every((k) => allowed.includes(k))
}

function sizeOk(item: unknown, measured: boolean): boolean {
  return !measured || Buffer.byteLength(JSON.stringify(item)) <= RULES.itemBytesMax
}

/**
 * The verdict on one event item. `measured`: whether the service measures item size for this
 * request (the whole body may be over 512 KiB, or its size is unknown).
 */
export function expectEvent(item: unknown, measured: boolean): Verdict {
  if (!isPlainObject(item)) return { ok: false, why: 'not an object' }
  if (!onlyKeys(item, ['event', 'objects', 'timestamp', 'end_timestamp', 'properties'])) return { ok: false, why: 'unknown field' }
  if (!nameOk(item.event, RULES.eventNameMax)) return { ok: false, why: 'event name' }
  const objects = item.objects
  if (!Array.isArray(objects) || objects.length < 1 || objects.length > RULES.objectsMax) return { ok: false, why: 'objects count' }
  for (const o of objects) {
    if (!isPlainObject(o) || !onlyKeys(o, ['type', 'id', 'properties', 'qualifier'])) return { ok: false, why: 'object shape' }
    if (!nameOk(o.type, RULES.objectTypeMax) || !nameOk(o.id, RULES.objectIdMax)) return { ok: false, why: 'object type or id' }
    if ('qualifier' in o && !nameOk(o.qualifier, RULES.qualifierMax)) return { ok: false, why: 'qualifier' }
    if (!propertiesOk(o.properties)) return { ok: false, why: 'object properties' }
  }
  if (!propertiesOk(item.properties)) return { ok: false, why: 'properties' }
  let timestamp: string | undefined
  let endTimestamp: string | undefined
  if ('timestamp' in item) {
    const utc = typeof item.timestamp === 'string' ? expectedUtc(item.timestamp) : null
    if (utc === null) return { ok: false, why: 'timestamp' }
    timestamp = utc
  }
  if ('end_timestamp' in item) {
    const utc = typeof item.end_timestamp === 'string' ? expectedUtc(item.end_timestamp) : null
    if (utc === null || timestamp === undefined || Date.parse(utc) < Date.parse(timestamp)) return { ok: false, why: 'end_timestamp' }
    endTimestamp = utc
  }
  if (!sizeOk(item, measured)) return { ok: false, why: 'item size' }
  return { ok: true, ...(timestamp === undefined ? {} : { timestamp }), ...(endTimestamp === undefined ? {} : { endTimestamp }) }
}

/** The verdict on one object upsert item. */
export function expectUpsert(item: unknown, measured: boolean): Verdict {
  if (!isPlainObject(item)) return { ok: false, why: 'not an object' }
  if (!onlyKeys(item, ['type', 'id', 'properties'])) return { ok: false, why: 'unknown field' }
  if (!nameOk(item.type, RULES.objectTypeMax) || !nameOk(item.id, RULES.objectIdMax)) return { ok: false, why: 'type or id' }
  if (!propertiesOk(item.properties)) return { ok: false, why: 'properties' }
  if (!sizeOk(item, measured)) return { ok: false, why: 'item size' }
  return { ok: true }
}

/** The items of a batch envelope `{ <field>: [...] }`, or null when the envelope itself must be refused (422). */
export function batchItems(body: unknown, field: 'events' | 'objects'): unknown[] | null {
  if (!isPlainObject(body) || !onlyKeys(body, [field])) return null
  const items = body[field]
  return Array.isArray(items) && items.length <= RULES.batchMax ? items : null
}
