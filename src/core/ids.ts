/** Identifiers (README § Architecture: ids). */
import { v5 as uuidv5, v7 as uuidv7 } from 'uuid'

/** Ocelog's UUIDv5 namespace for object ids. Never change it: every stored object_id depends on it. */
export const OBJECT_ID_NAMESPACE = '8f4b3c2e-6a1d-5e7f-9b0c-1d2e3f4a5b6c'

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
  const objectId = uuidv5(name, OBJECT_ID_NAMESPACE)
  if (recentObjectIds.size >= RECENT_OBJECT_IDS_MAX) recentObjectIds.clear()
  recentObjectIds.set(name, objectId)
  return objectId
}

/** A new event_id: UUIDv7 (time-ordered, so appends and indexes stay ordered). */
export function newEventId(): string {
  return uuidv7()
}
