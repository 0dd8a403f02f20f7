/**
 * Exactly-once ingestion (Ocelog's extension of the v1 API, README § Exactly once): the decisions
 * about an item's idempotency key, in pure code that every log adapter runs. After the IETF httpapi
 * draft "The Idempotency-Key HTTP Header Field", with one difference: the log is the source of
 * truth, so a key is remembered for ever, not for a window.
 */
import { sha256Hex } from './sha256.js'
import type { NewRecord, RecordIdempotency } from '../schemas/records.js'

/** Member names as JSON strings, for the names that recur (an item's fields, common property names); bounded in count and length. */
const quotedNames = new Map<string, string>()
const QUOTED_NAMES_MAX = 2_000
const QUOTED_NAME_LENGTH_MAX = 64

function quotedName(name: string): string {
  const known = quotedNames.get(name)
  if (known !== undefined) return known
  const quoted = JSON.stringify(name)
  if (name.length <= QUOTED_NAME_LENGTH_MAX && quotedNames.size < QUOTED_NAMES_MAX) quotedNames.set(name, quoted)
  return quoted
}

/**
 * JSON with every object's keys sorted (code-unit order), so equal values give equal text whatever
 * their key order; `undefined` (never in parsed JSON) reads as null. Built by appending to one
 * string, without the intermediate arrays of map/join: it runs for every keyed item on the API's
 * thread (bench/HISTORY.md#2026-11-25-memory-the-disk-and-paced-load).
 */
function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ','
      out += canonicalJson(value[i])
    }
    return `${out}]`
  }
  return canonicalMembers(value as Record<string, unknown>, null)
}

/**
 * An object's canonical JSON, leaving out the member named `skip`. Its names are put in order by an
 * insertion sort, which compares code units as `Array.prototype.sort` does and is quicker on the few
 * names of an item.
 */
function canonicalMembers(value: Readonly<Record<string, unknown>>, skip: string | null): string {
  const names = Object.keys(value)
  for (let i = 1; i < names.length; i++) {
    const name = names[i] as string
    let j = i - 1
    for (; j >= 0 && (names[j] as string) > name; j--) names[j + 1] = names[j] as string
    names[j + 1] = name
  }
  let out = '{'
  for (const name of names) {
    if (name === skip) continue
    if (out.length > 1) out += ','
    out += `${quotedName(name)}:${canonicalJson(value[name])}`
  }
  return `${out}}`
}

/**
 * The fingerprint of an item as sent: sha256 (hex) of its canonical JSON without `idempotency_key`.
 * Values are compared as sent: `"2024-05-01T12:00:00+02:00"` and `"2024-05-01T10:00:00Z"` are the
 * same instant but different content, so reusing a key across the two is a conflict. Stored with
 * every keyed record, so this definition never changes (test/unit/idempotency.test.ts pins it).
 * @param item a validated event or object upsert input (a JSON object).
 */
export function fingerprintOf(item: Readonly<Record<string, unknown>>): string {
  return sha256Hex(canonicalMembers(item, 'idempotency_key'))
}

/** What an append does with one record, given what the dataset's stream already holds under its key. */
export type KeyDecision = 'append' | 'duplicate' | 'conflict'

/**
 * The rule: no key, or a key not yet recorded → append; the key recorded with the same
 * fingerprint → duplicate (answer as first recorded, append nothing); with another → conflict.
 * @param recorded the idempotency of the record already stored under the key, if any.
 */
export function decideKey(incoming: RecordIdempotency | undefined, recorded: RecordIdempotency | undefined): KeyDecision {
  if (incoming === undefined || recorded === undefined) return 'append'
  return recorded.fingerprint === incoming.fingerprint ? 'duplicate' : 'conflict'
}

/** The object ids a record names (an event's objects; an upsert's object and its O2O targets; none for declared types): the objects an append of it may claim. */
export function objectIdsOf(record: NewRecord): string[] {
  if (record.type === 'EventRecorded') return record.data.objects.map((o) => o.object_id)
  if (record.type === 'TypesDeclared') return []
  return [record.data.object_id, ...record.data.relationships.map((r) => r.object_id)]
}

/**
 * The claims of the records that are appended: an append that skips a duplicate or a conflict must
 * not claim objects that only the skipped record named.
 * @param claims the claims of the whole append, in order; @param appended the records appended.
 */
export function claimsOfAppended(claims: readonly string[], appended: readonly NewRecord[]): string[] {
  const named = new Set(appended.flatMap(objectIdsOf))
  return claims.filter((id) => named.has(id))
}

/** A key's claim where the log cannot check keys in its own append transaction (EventStoreDB): see IdempotencyClaims. */
export interface KeyClaim {
  fingerprint: string
  /** The position of the record once its append was acknowledged; null while it is not known to be. */
  position: number | null
}

/** What an append does with a record whose key someone already claimed: KeyDecision, or `resume`. */
export type ClaimDecision = KeyDecision | 'resume'

/**
 * The rule where keys are claimed before the append (EventStoreDB with MongoDB claims). Its one
 * failure mode: a claim taken, then an append that failed (or whose answer was lost), leaves a
 * claim with no position. A retry with the same content then `resume`s: the adapter looks for the
 * claim's event id at the end of the dataset's stream (src/adapters/eventstore/landed.ts), answers
 * the record found there when the first append did land, and otherwise appends the claimed record
 * again under that event id. A committed claim with the same content is a
 * `duplicate`; any claim with other content is a `conflict`.
 * @param existing the claim found under the key, or undefined when this append took it.
 */
export function decideClaim(fingerprint: string, existing: KeyClaim | undefined): ClaimDecision {
  if (existing === undefined) return 'append'
  if (existing.fingerprint !== fingerprint) return 'conflict'
  return existing.position === null ? 'resume' : 'duplicate'
}
