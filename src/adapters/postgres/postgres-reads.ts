/**
 * What the PostgreSQL read-model queries share (docs/read-models.md#the-read-models-on-postgresql):
 * how a statement runs (on the pool, or on the one connection of a consistent read), how its
 * values come back (bigint and numeric as JavaScript numbers), and its parameters (`$n`).
 */
import pg from 'pg'
import { EngineUnavailableError } from '../../core/errors.js'
import { checkpointsSql } from '../sql/checkpoints-sql.js'
import { POSTGRES } from '../sql/dialect.js'
import { isPostgresUnavailable } from './connection.js'
import { decodeStrings, encodeStrings } from './text-codec.js'

/**
 * The answer's `as_of` as a scalar subquery: the lowest checkpoint (0 when none), what `asOf` reads.
 * Reads of rows keyed by a log position (events, E2O, steps, attribute changes, O2O) keep only those
 * at or below it, so that, in one snapshot, an answer that joins what two runners keep holds no
 * record past its `as_of` while one runner is ahead (docs/read-models.md#the-read-models-on-postgresql).
 */
export const AS_OF_SQL = checkpointsSql(POSTGRES).asOf

/** Runs one read statement and gives its rows. */
export interface SqlReader {
  /**
   * @param text the statement, with `$1`… placeholders for `values`.
   * @throws EngineUnavailableError when the server is away or busy (503, docs/api.md#errors).
   */
  rows<R extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<R[]>
}

/** OIDs of `bigint` and `numeric` (pg_type). */
const INT8 = 20
const NUMERIC = 1700

/** OIDs of the types that carry the records' strings (pg_type): text, varchar, json, jsonb and their arrays. */
const TEXT_TYPES = new Set([25, 1043, 114, 3802, 1009, 1015, 199, 3807])

/**
 * Type parsers of the reads: `bigint` (positions, counts, epoch ms) and `numeric` (SUM of bigint)
 * as numbers, all below 2^53 here; text, json and jsonb (and their arrays) parsed as node-postgres
 * parses them, then their strings back as they were sent (decodeStrings, text-codec.ts); the rest as
 * node-postgres parses them.
 */
const READ_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return Number
    const parse = pg.types.getTypeParser(oid, format) as (text: string) => unknown
    if (!TEXT_TYPES.has(oid)) return parse
    // Coded strings hold U+0001, which json and jsonb write as the escape \u0001.
    return (text: string) => (text.includes('\u0001') || text.includes('\\u0001') ? decodeStrings(parse(text)) : parse(text))
  }) as typeof pg.types.getTypeParser,
}

/**
 * One connection that reads run on one after another (a consistent read's): node-postgres queues
 * statements sent while one runs, but that is deprecated (pg 9 refuses it), so each waits for `tail`.
 */
export interface SerialClient {
  client: pg.PoolClient
  tail: Promise<unknown>
}

/**
 * A SqlReader on what `target` gives at each statement: the pool, or one connection (SerialClient);
 * failures of an away server as EngineUnavailableError.
 */
export function sqlReader(target: () => pg.Pool | SerialClient): SqlReader {
  return {
    async rows<R extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<R[]> {
      // Parameters compared with stored text are coded as it is (text-codec.ts).
      const config: pg.QueryConfig = { text, values: encodeStrings([...values]), types: READ_TYPES }
      const on = target()
      let result: Promise<pg.QueryResult<R>>
      if ('tail' in on) {
        result = on.tail.then(() => on.client.query<R>(config))
        on.tail = result.catch(() => undefined)
      } else result = on.query<R>(config)
      try {
        return (await result).rows
      } catch (error) {
        if (isPostgresUnavailable(error)) throw new EngineUnavailableError(`the read models on PostgreSQL are unavailable: ${(error as Error).message}`)
        throw error
      }
    },
  }
}

/** The values of a statement being built: `add(v)` binds `v` and gives its placeholder (`$n`). */
export class SqlParams {
  readonly values: unknown[] = []

  add(value: unknown): string {
    this.values.push(value)
    return `$${String(this.values.length)}`
  }
}

/** A stored qualifier ('' when none was sent; read-models-schema.ts) as the answers give it (null: none). */
export function qualifierOfStored(q: string): string | null {
  return q === '' ? null : q
}

/**
 * `timestamp` conditions of a window over the text column `column` (ISO 8601, ordered as text):
 * `from` inclusive, `to` exclusive.
 */
export function windowConditions(column: string, window: { from?: string; to?: string }, p: SqlParams): string[] {
  return [...(window.from === undefined ? [] : [`${column} >= ${p.add(window.from)}`]), ...(window.to === undefined ? [] : [`${column} < ${p.add(window.to)}`])]
}

/**
 * SQL of the count, sum, min, max and median (`percentile_cont(0.5)`: the mean of the two middle
 * values of an even count) of the durations `d` (ms) of the rows `filter` keeps (all when ''),
 * named `${prefix}3`..`${prefix}7` (the statistics columns `c3`..`c7` of src/core/process-map-rows.ts).
 */
export function statsSql(d: string, prefix: string, filter = ''): string {
  const only = filter === '' ? '' : ` FILTER (WHERE ${filter})`
  return [
    `COUNT(*)${only} AS ${prefix}3`,
    `SUM(${d})${only} AS ${prefix}4`,
    `MIN(${d})${only} AS ${prefix}5`,
    `MAX(${d})${only} AS ${prefix}6`,
    `percentile_cont(0.5) WITHIN GROUP (ORDER BY ${d})${only} AS ${prefix}7`,
  ].join(', ')
}
