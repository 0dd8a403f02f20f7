/**
 * Port: object identity claims, a write-side concern of the log (docs/architecture.md#records-and-ids). The
 * first append to name an object claims it; that append's answer says `created: true` for it
 * (docs/api.md#responses: `created`). Adapters: SQLite (used inside the SQLite log's own append
 * transaction), MongoDB (used by the EventStoreDB log, whose appends cannot claim). Contract tests:
 * test/contract/object-claims.contract.ts.
 */
export interface ObjectClaims {
  /**
   * Claims `objectIds` for `datasetId`, exactly once under concurrency.
   * @returns the ids this call claimed first (an id named twice in one call is claimed once);
   *   ids claimed before, by anyone, are not in it.
   */
  claim(datasetId: string, objectIds: readonly string[]): Promise<ReadonlySet<string>>
}
