/**
 * ObjectClaims adapter on PostgreSQL (`ocelog.object_claims`; docs/architecture.md#records-and-ids).
 * The log takes its claims inside its own append transaction (postgres-event-log.ts); this adapter
 * is the same rule on its own, for the port's contract and for tools.
 */
import type pg from 'pg'
import type { ObjectClaims } from '../../ports/object-claims.js'

export class PostgresObjectClaims implements ObjectClaims {
  constructor(private readonly pool: pg.Pool) {}

  /** Inserts the ids in sorted order (so two concurrent claims cannot deadlock); returns those this call inserted. */
  async claim(datasetId: string, objectIds: readonly string[]): Promise<ReadonlySet<string>> {
    const ids = [...new Set(objectIds)].sort()
    if (ids.length === 0) return new Set()
    const r = await this.pool.query<{ object_id: string }>(
      `INSERT INTO ocelog.object_claims (object_id, dataset_id)
       SELECT o, $2 FROM unnest($1::text[]) AS u(o) ORDER BY o
       ON CONFLICT DO NOTHING RETURNING object_id`,
      [ids, datasetId],
    )
    return new Set(r.rows.map((row) => row.object_id))
  }
}
