/** Identifiers (docs/architecture.md#records-and-ids). */
import { LRUCache } from 'lru-cache'
import { parse as parseUuid, v5 as uuidv5, v7 as uuidv7 } from 'uuid'

/** Ocelog's UUIDv5 namespace for object ids. Never change it: every stored object_id depends on it. */
export const OBJECT_ID_NAMESPACE = '8f4b3c2e-6a1d-5e7f-9b0c-1d2e3f4a5b6c'

/**
 * Objects recur across events (an order, its customer, a product): the ids of the 20,000 most
 * recently used are kept (about 4 MB), least recently used out first, so a hot set that recurs
 * stays hashed once while new objects stream past it. (It was a map emptied whole at 10,000
 * entries: a sender naming 6,000 recurring objects and new orders hashed them all again at every
 * emptying.)
 */
const recentObjectIds = new LRUCache<string, string>({ max: 20_000 })

/** The namespace's 16 bytes, parsed once: `uuid` parses a namespace given as text at every call. */
const OBJECT_ID_NAMESPACE_BYTES = parseUuid(OBJECT_ID_NAMESPACE)

/**
 * The stable object_id of (dataset, type, id): a UUIDv5, so it needs no lookup and is the same on
 * every replica and every replay.
 */
export function objectIdOf(datasetId: string, type: string, id: string): string {
  const name = JSON.stringify([datasetId, type, id])
  const known = recentObjectIds.get(name)
  if (known !== undefined) return known
  // The name's UTF-8 bytes from Buffer (native) rather than `uuid`'s own encoder in JavaScript: the same bytes, the same id.
  const objectId = uuidv5(Buffer.from(name, 'utf8'), OBJECT_ID_NAMESPACE_BYTES)
  recentObjectIds.set(name, objectId)
  return objectId
}

/** A new event_id: UUIDv7 (time-ordered, so appends and indexes stay ordered). */
export function newEventId(): string {
  return uuidv7()
}
