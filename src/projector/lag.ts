import { lagOf, NO_LAG } from '../core/lag.js'
import type { EventLog } from '../ports/event-log.js'
import type { ProjectionLag } from '../schemas/projections.js'

/**
 * The lag of a projection at checkpoint `position` (null: none yet) behind `head` (null: an empty
 * log): its backlog's records, exact at a cost that does not grow with the lag on SQLite, and the
 * age of the oldest record not yet applied (core/lag.ts).
 */
export async function projectionLag(log: EventLog, position: number | null, head: number | null): Promise<ProjectionLag> {
  if (head === null || (position !== null && position >= head)) return NO_LAG
  const backlog = await log.backlog(position, head)
  return lagOf(backlog.records, backlog.exact, backlog.oldestAppendedAt, Date.now())
}
