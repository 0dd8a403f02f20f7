/**
 * The pure step shared by the two type read models (event types, object types): records that a
 * type was seen in a record at `position` (README § Read models: event_types, object_types).
 */
import { KEY_SEP, type TypeChanges } from '../src/core/read-model-changes.js'

/**
 * Records in `map` that type `name` of `datasetId` was seen at `at` (ISO 8601) in the record at `position`.
 * @param added units this record adds to the type's count (1 per event for event types; 0 for object types, whose count is distinct objects: countNewObjects).
 */
export function touchType(map: TypeChanges, datasetId: string, name: string, at: string, position: number, added: number): void {
  const key = datasetId + KEY_SEP + name
  const found = map.get(key)
  if (found === undefined) {
    map.set(key, {
      datasetId,
      name,
      firstSeenAt: at,
      lastSeenAt: at,
      added,
      addedAt: added > 0 ? [position] : [],
      minPosition: position,
      maxPosition: position,
    })
    return
  }
  if (at < found.firstSeenAt) found.firstSeenAt = at
  if (at > found.lastSeenAt) found.lastSeenAt = at
  found.added += added
  if (added > 0) found.addedAt.push(position)
  found.maxPosition = position
}
