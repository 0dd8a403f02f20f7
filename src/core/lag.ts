/**
 * A projection's lag from what the log says of its backlog (README § Operations: lag). Pure: the
 * caller reads the backlog (EventLog.backlog) and the clock.
 */
import type { ProjectionLag } from '../schemas/projections.js'

/** No record behind. */
export const NO_LAG: ProjectionLag = { lag_records: 0, lag_records_exact: true, lag_seconds: 0 }

/**
 * The lag of a projection whose backlog holds `records` records (a lower bound unless `exact`),
 * the oldest appended at `oldestAppendedAt` (UTC ISO 8601, or null when none is behind), read at
 * `nowMs` (epoch ms). Seconds are rounded to the ms, and never negative: a clock that runs behind
 * the one that stamped the record reads 0.
 */
export function lagOf(records: number, exact: boolean, oldestAppendedAt: string | null, nowMs: number): ProjectionLag {
  if (records === 0 || oldestAppendedAt === null) return { ...NO_LAG, lag_records: records, lag_records_exact: exact }
  const ageMs = Math.max(0, nowMs - Date.parse(oldestAppendedAt))
  return { lag_records: records, lag_records_exact: exact, lag_seconds: ageMs / 1000 }
}
