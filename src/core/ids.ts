/** Identifiers (DESIGN.md § Records, Ids). */
import { createHash } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'

/** Ocelog's UUIDv5 namespace for object ids. Never change it: every stored object_id depends on it. */
export const OBJECT_ID_NAMESPACE = '8f4b3c2e-6a1d-5e7f-9b0c-1d2e3f4a5b6c'

const NAMESPACE_BYTES = Buffer.from(OBJECT_ID_NAMESPACE.replace(/-/g, ''), 'hex')

/**
 * RFC 9562 UUIDv5 of `name` (UTF-8) in OBJECT_ID_NAMESPACE: the same value as `uuid`'s v5, in
 * about half its time (ingest computes one per object of every event). `name` comes from
 * JSON.stringify, which escapes lone surrogates, so its UTF-8 encoding is always well defined.
 */
function uuidv5(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE_BYTES).update(name, 'utf8').digest()
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80
  const hex = hash.toString('hex', 0, 16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** Objects recur across events (an order, its customer): the ids of recent ones are kept (a few MB at most). */
const recentObjectIds = new Map<string, string>()
const RECENT_OBJECT_IDS_MAX = 10_000

/**
 * The stable object_id of (dataset, type, id): a UUIDv5, so it needs no lookup and is the same on
 * every replica and every replay.
 */
export function objectIdOf(datasetId: string, type: string, id: string): string {
  const name = JSON.stringify([datasetId, type, id])
  const known = recentObjectIds.get(name)
  if (known !== undefined) return known
  const objectId = uuidv5(name)
  if (recentObjectIds.size >= RECENT_OBJECT_IDS_MAX) recentObjectIds.clear()
  recentObjectIds.set(name, objectId)
  return objectId
}

/** A new event_id: UUIDv7 (time-ordered, so appends and indexes stay ordered). */
export function newEventId(): string {
  return uuidv7()
}
