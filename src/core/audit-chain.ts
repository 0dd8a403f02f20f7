/**
 * The audit chain of a dataset's ingest history (README § Operations, docs/operations.md §
 * Digests), after the hash chains behind Amazon QLDB's digests and Certificate Transparency's tree
 * heads: per dataset, over its records in log order,
 *
 *     h_0 = 64 × "0"
 *     h_n = SHA-256(h_(n−1) ‖ canonical(record_n))    (hex text of h_(n−1), then the canonical form, as UTF-8)
 *
 * and the digest at a position is the h of the last record at or before it. No I/O.
 *
 * canonical(record), format 1, FIXED (a digest given to an auditor must verify years later; a
 * change is a new format, never an edit of this one): the JSON Canonicalization Scheme (RFC 8785:
 * keys sorted by UTF-16 code units, no whitespace, ECMAScript number and string forms) of
 *
 *     {"data": …, "dataset": "<id>", "format": 1, "idempotency": {"fingerprint": …, "key": …}?, "type": "<type>", "version": <n>}
 *
 * with the record AS WRITTEN: its type, the version it was written in and its data in that version
 * (a record upcast on read is hashed as it was stored, so a future upcast changes no hash), and its
 * idempotency key and fingerprint when it has them. Not in it: the log position and the append time,
 * which belong to the engine that holds the log (another engine, or a copy, gives other positions
 * and times to the same history); the order is in the chain itself.
 */
import { hasNoOwnKeys, ownKeyCount } from './own-keys.js'
import { unhandledRecord } from './record-decoder.js'
import type { EventRecordedV1, ObjectUpsertedV2, RecordedEventObject, StoredRecord } from '../schemas/records.js'
import { sha256Hex } from './sha256.js'

/** The version of the canonical form that this build writes and checks. */
export const AUDIT_CHAIN_FORMAT = 1

/** h_0, the hash before a dataset's first record. */
export const GENESIS_HASH = '0'.repeat(64)

/**
 * RFC 8785 (JCS) text of a JSON value: object keys sorted by UTF-16 code units, no whitespace,
 * numbers and strings as ECMAScript's JSON.stringify writes them (which RFC 8785 adopts).
 * @throws TypeError for values JSON has no form for (a non-finite number, undefined in an array, a function).
 */
export function canonicalJson(value: unknown): string {
  const copy = sortedCopy(value)
  return copy === INDEX_KEYS ? canonicalText(value) : JSON.stringify(copy)
}

/** An array index as an object key (`"0"`, `"17"`): JavaScript objects put those first, in numeric order, whatever the insertion order. */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/
/** sortedCopy's answer when an object has an index key: its order cannot be held by a copy. */
const INDEX_KEYS = Symbol('index keys')

/**
 * `value` with every object's keys inserted in RFC 8785 order, for one JSON.stringify (about twice
 * as fast as canonicalText on records); INDEX_KEYS when an object has an array-index key.
 * @throws TypeError as canonicalText does.
 */
function sortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON has no form for ${String(value)}`)
      return value
    case 'object': {
      if (value === null) return null
      if (Array.isArray(value)) {
        const out: unknown[] = []
        for (const v of value) {
          if (v === undefined) throw new TypeError('canonical JSON has no form for undefined in an array')
          const c = sortedCopy(v)
          if (c === INDEX_KEYS) return INDEX_KEYS
          out.push(c)
        }
        return out
      }
      const record = value as Record<string, unknown>
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(record).sort()) {
        if (INDEX_KEY.test(key)) return INDEX_KEYS
        const member = record[key]
        if (member === undefined) continue
        const c = sortedCopy(member)
        if (c === INDEX_KEYS) return INDEX_KEYS
        out[key] = c
      }
      return out
    }
    default:
      throw new TypeError(`canonical JSON has no form for a ${typeof value}`)
  }
}

/** RFC 8785 text of `value`, written member by member (canonicalJson's way for objects with index keys). */
function canonicalText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON has no form for ${String(value)}`)
      return JSON.stringify(value)
    case 'object': {
      if (value === null) return 'null'
      if (Array.isArray(value)) {
        let out = '['
        for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalText(value[i])
        return `${out}]`
      }
      const record = value as Record<string, unknown>
      // Array.prototype.sort without a comparator orders by UTF-16 code units, as RFC 8785 § 3.2.3 asks.
      const keys = Object.keys(record).sort()
      let out = '{'
      for (const key of keys) {
        const member = record[key]
        if (member === undefined) continue
        out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalText(member)}`
      }
      return `${out}}`
    }
    default:
      throw new TypeError(`canonical JSON has no form for a ${typeof value}`)
  }
}

/** A record as it was written: its type, the version it was written in, and its data in that version. */
export interface WrittenRecord {
  type: string
  version: number
  data: unknown
}

/**
 * Undoes the decoder's upcast (src/core/record-decoder.ts): a record read in its current version
 * back to the version and data it was written in. Exhaustive over (type, version): a new upcast
 * fails to compile here until its inverse is written.
 */
export function writtenForm(record: StoredRecord): WrittenRecord {
  switch (record.type) {
    case 'EventRecorded':
      return { type: record.type, version: record.version, data: record.data }
    case 'ObjectUpserted': {
      if (record.upcastFrom === undefined) return { type: record.type, version: record.version, data: record.data }
      if (record.upcastFrom === 1) {
        // The inverse of upcastObjectUpsertedV1: v1 had no `time` and no `relationships`.
        const { object_id, type, id, properties, received_at, key_id, request_id } = record.data
        return { type: record.type, version: 1, data: { object_id, type, id, properties, received_at, key_id, request_id } }
      }
      throw new Error(`audit chain: no written form for ObjectUpserted upcast from v${String(record.upcastFrom)}`)
    }
    case 'TypesDeclared':
      return { type: record.type, version: record.version, data: record.data }
    default:
      return unhandledRecord(record)
  }
}

/**
 * canonical(record) of format 1 (see the module comment). Records of the shapes this build writes
 * take canonicalShaped's way, which writes the known members in RFC 8785 order without sorting or
 * copying them (about 2× faster, bench/HISTORY.md#projector-costs); any
 * other shape (a member the schema does not name, or one that is undefined) takes the generic
 * canonicalEnvelope, which defines the form. Both give the same text.
 */
export function canonicalRecord(record: StoredRecord): string {
  return canonicalShaped(record) ?? canonicalEnvelope(record)
}

/** canonical(record) by the definition: the envelope as an object, then canonicalJson. */
export function canonicalEnvelope(record: StoredRecord): string {
  const written = writtenForm(record)
  return canonicalJson({
    data: written.data,
    dataset: record.datasetId,
    format: AUDIT_CHAIN_FORMAT,
    ...(record.idempotency === undefined ? {} : { idempotency: { fingerprint: record.idempotency.fingerprint, key: record.idempotency.key } }),
    type: written.type,
    version: written.version,
  })
}

/** A string that JSON.stringify writes as it is between quotes: no quote, backslash, control character or surrogate (RFC 8785 § 3.2.2.2). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/

/** RFC 8785 text of a member the schema types as a string: its JSON string form, or canonicalJson's form of whatever it holds. */
const text = (value: unknown): string => {
  if (typeof value !== 'string') return canonicalJson(value)
  return PLAIN_STRING.test(value) ? `"${value}"` : JSON.stringify(value)
}

/** RFC 8785 text of attributes (OCEL 2.0 attribute values): most are empty. */
const attributes = (value: unknown): string =>
  typeof value === 'object' && value !== null && hasNoOwnKeys(value) && !Array.isArray(value) ? '{}' : canonicalJson(value)

/**
 * RFC 8785 text of one object of an event or one O2O relationship's target (`id`, `object_id`,
 * `properties`? (events only), `qualifier`?, `type`, in code-unit order), or null when it has other
 * members than those.
 */
function eventObjectText(o: RecordedEventObject): string | null {
  // The decoder admits objects only; anything else is the generic form's to write.
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return null
  let members = 3
  let out = `{"id":${text(o.id)},"object_id":${text(o.object_id)}`
  if (o.properties !== undefined) {
    members++
    out += `,"properties":${attributes(o.properties)}`
  }
  if (o.qualifier !== undefined) {
    members++
    out += `,"qualifier":${text(o.qualifier)}`
  }
  if (ownKeyCount(o) !== members) return null
  return `${out},"type":${text(o.type)}}`
}

/** RFC 8785 text of an array whose items `item` writes, or null when one of them is null (or `items` is no array). */
function arrayText<T>(items: readonly T[], item: (value: T) => string | null): string | null {
  if (!Array.isArray(items)) return null
  let out = '['
  for (let i = 0; i < items.length; i++) {
    const one = item(items[i] as T)
    if (one === null) return null
    out += i === 0 ? one : `,${one}`
  }
  return `${out}]`
}

/** RFC 8785 text of an EventRecorded v1's data, or null when it has members its schema does not name. */
function eventRecordedText(e: EventRecordedV1): string | null {
  const objects = arrayText(e.objects, eventObjectText)
  if (objects === null || ownKeyCount(e) !== (e.end_timestamp === undefined ? 8 : 9)) return null
  return (
    `{${e.end_timestamp === undefined ? '' : `"end_timestamp":${text(e.end_timestamp)},`}"event_id":${text(e.event_id)},` +
    `"event_type":${text(e.event_type)},"key_id":${text(e.key_id)},"objects":${objects},"properties":${attributes(e.properties)},` +
    `"received_at":${text(e.received_at)},"request_id":${text(e.request_id)},"timestamp":${text(e.timestamp)}}`
  )
}

/** RFC 8785 text of an ObjectUpserted v2's data, or null when it has members its schema does not name. */
function objectUpsertedText(u: ObjectUpsertedV2): string | null {
  const relationships = arrayText(u.relationships, eventObjectText)
  if (relationships === null || ownKeyCount(u) !== 9) return null
  return (
    `{"id":${text(u.id)},"key_id":${text(u.key_id)},"object_id":${text(u.object_id)},"properties":${attributes(u.properties)},` +
    `"received_at":${text(u.received_at)},"relationships":${relationships},"request_id":${text(u.request_id)},` +
    `"time":${text(u.time)},"type":${text(u.type)}}`
  )
}

/**
 * canonical(record) written member by member for the shapes this build writes (EventRecorded v1,
 * ObjectUpserted v2 not upcast), or null for any other (then canonicalEnvelope). The envelope's
 * members in RFC 8785 order: data, dataset, format, idempotency?, type, version.
 */
function canonicalShaped(record: StoredRecord): string | null {
  if (typeof record.data !== 'object' || record.data === null) return null
  let data: string | null
  if (record.type === 'EventRecorded' && record.version === 1) data = eventRecordedText(record.data)
  else if (record.type === 'ObjectUpserted' && record.version === 2 && record.upcastFrom === undefined) data = objectUpsertedText(record.data)
  else return null
  if (data === null) return null
  const idempotency =
    record.idempotency === undefined ? '' : `"idempotency":{"fingerprint":${text(record.idempotency.fingerprint)},"key":${text(record.idempotency.key)}},`
  return `{"data":${data},"dataset":${text(record.datasetId)},"format":${String(AUDIT_CHAIN_FORMAT)},${idempotency}"type":${text(record.type)},"version":${String(record.version)}}`
}

/** One step of the chain: h_n from h_(n−1) (64 lowercase hex characters) and canonical(record_n). */
export function chainStep(previous: string, canonical: string): string {
  return sha256Hex(previous + canonical)
}

/** h_n of `record` after h_(n−1) = `previous`: chainStep over canonicalRecord (the module comment). */
export function chainRecord(previous: string, record: StoredRecord): string {
  return chainStep(previous, canonicalRecord(record))
}

/** Whether `text` is a hash of the chain: 64 lowercase hex characters. */
export function isChainHash(text: string): boolean {
  return /^[0-9a-f]{64}$/.test(text)
}
