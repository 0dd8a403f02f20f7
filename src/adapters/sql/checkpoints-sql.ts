/**
 * The statements of the projectors' checkpoints (`rm_checkpoints`: projector, position, version,
 * updated_at) and of the projections' stops (`rm_projection_stops`: projector, stop as JSON), and
 * what their rows give back: the same tables on SQLite and PostgreSQL, so written once here and
 * rendered per engine (docs/architecture.md#sql-shared-between-sqlite-and-postgresql;
 * docs/architecture.md#projections-slices-and-checkpoints for what a checkpoint means).
 *
 * How a checkpoint is claimed inside `apply` stays per engine: SQLite's transaction holds the
 * file's write lock from its start, PostgreSQL's locks the checkpoint's row (`FOR UPDATE`).
 */
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import { renderSql, type SqlDialect } from './dialect.js'

/** The statements, rendered for one engine; `?`/`$n` parameters as each one's docstring lists them. */
export interface CheckpointsSql {
  /** A checkpoint's row: `[projector]` → `{ position }` (no row: never applied). */
  position: string
  /** Sets a checkpoint (made when missing): `[projector, position, version, updated_at]`. */
  put: string
  /** Deletes a checkpoint: `[projector]`. */
  remove: string
  /** Every checkpoint and stop by projector name, in byte order: `[]` → ProjectionStateRow. */
  projections: string
  /** Records a projection's stop (replacing one held): `[projector, stop JSON]`. */
  putStop: string
  /** Deletes a projection's stop: `[projector]`. */
  removeStop: string
  /**
   * The answers' `as_of` as a scalar subquery, no parameter: the lowest checkpoint, 0 when there is
   * none (docs/read-models.md#the-read-models-on-postgresql on reads that keep rows at or below it).
   */
  asOf: string
}

/** The statements of CheckpointsSql for `d`. */
export function checkpointsSql(d: SqlDialect): CheckpointsSql {
  const checkpoints = d.table('rm_checkpoints')
  const stops = d.table('rm_projection_stops')
  return {
    position: renderSql(d, `SELECT position FROM ${checkpoints} WHERE projector = ?`),
    put: renderSql(
      d,
      `INSERT INTO ${checkpoints} (projector, position, version, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (projector) DO UPDATE SET position = excluded.position, version = excluded.version, updated_at = excluded.updated_at`,
    ),
    remove: renderSql(d, `DELETE FROM ${checkpoints} WHERE projector = ?`),
    projections: `SELECT n.name AS name, c.position AS position, c.version AS version, c.updated_at AS updated_at, s.stop AS stop
       FROM (SELECT projector AS name FROM ${checkpoints} UNION SELECT projector FROM ${stops}) AS n
       LEFT JOIN ${checkpoints} AS c ON c.projector = n.name
       LEFT JOIN ${stops} AS s ON s.projector = n.name
       ORDER BY ${d.byteOrder('n.name')}`,
    putStop: renderSql(d, `INSERT INTO ${stops} (projector, stop) VALUES (?, ?) ON CONFLICT (projector) DO UPDATE SET stop = excluded.stop`),
    removeStop: renderSql(d, `DELETE FROM ${stops} WHERE projector = ?`),
    asOf: `(SELECT COALESCE(MIN(position), 0) FROM ${checkpoints})`,
  }
}

/**
 * A row of CheckpointsSql.projections as either driver gives it: PostgreSQL's `bigint` position may
 * come back as text (node-postgres's default parser), SQLite's as a number.
 */
export interface ProjectionStateRow {
  name: string
  position: number | string | null
  version: number | null
  updated_at: string | null
  stop: string | null
}

/** A checkpoint's position as either driver gives it (a number, or PostgreSQL's `bigint` as text), or null when there is no row. */
export function positionOf(row: { position: number | string } | undefined): number | null {
  return row === undefined ? null : Number(row.position)
}

/** A row of CheckpointsSql.projections as the port's ProjectionState (its stop parsed from JSON). */
export function projectionStateOf(row: ProjectionStateRow): ProjectionState {
  return {
    projection: row.name,
    position: row.position === null ? null : Number(row.position),
    version: row.version,
    updated_at: row.updated_at,
    stopped: row.stop === null ? null : (JSON.parse(row.stop) as ProjectionStop),
  }
}
