/**
 * The PostgreSQL store's writes, one function per projection's slice (README § Read models;
 * docs/read-models.md#the-read-models-on-postgresql): what adding a read model adds here, and its
 * clearing to SLICE_CLEARS. Each runs inside the store's transaction (postgres-read-model-store.ts),
 * after the objects' identities, and writes a whole slice in a few statements: rows are passed as
 * parallel arrays and expanded by `unnest`, so a batch of thousands of rows is one round trip.
 *
 * The replay rule (src/core/read-model-changes.ts) is applied as on every store: aggregated rows
 * (types, objects) are reduced by typeChangeToApply / objectChangeToApply over the positions the
 * transaction read; rows keyed by a position (events, E2O, attribute changes, the audit chain) and
 * O2O rows are inserted with `ON CONFLICT DO NOTHING`, so the first write of a key stays.
 */
import type pg from 'pg'
import { chainRecord, GENESIS_HASH } from '../../core/audit-chain.js'
import {
  type AuditChainChange,
  countNewObjects,
  declaredAttributesToApply,
  type NamedObject,
  objectChangeToApply,
  type ProjectionName,
  type SliceBatch,
  type TypeChanges,
  typeChangeToApply,
} from '../../core/read-model-changes.js'
import { KEY_SEP } from '../../core/keys.js'
import { attributeValues, declaredTypesSql, storedAttributePositions, typeKeyValues, typeValues } from '../sql/declared-types-sql.js'
import { POSTGRES } from '../sql/dialect.js'
import { typesSql } from '../sql/types-sql.js'
import { type PostgresDfMemory, writeDirectlyFollows } from './postgres-df-writes.js'
import { columns } from './unnest.js'

/** The declared types' statements (shared with SQLite). */
const DECLARED_TYPES = declaredTypesSql(POSTGRES)

/** A qualifier as the key columns hold it: '' when none was sent (docs/read-models.md#the-read-models-on-postgresql). */
export const storedQualifier = (qualifier: string | null): string => qualifier ?? ''

/** The stored part of an object the slices' writes need, by `<dataset>KEY_SEP<object id>`. */
export interface StoredObject {
  /** The objects projection's position on the row (−1: not applied yet). */
  position: number
  /** The position of the first record that named the object. */
  firstPosition: number
}

/** What every slice write gets beside its slice. */
export interface PostgresSliceContext {
  /** The store's transaction. */
  client: pg.PoolClient
  objects: ReadonlyMap<string, StoredObject>
  /** The objects the batch names (ChangeBatch.objects). */
  named: ReadonlyMap<string, NamedObject>
  /** The directly-follows write's memory of objects, when the store keeps it true for this transaction. */
  dfMemory?: PostgresDfMemory
}

const key = (datasetId: string, nameOrId: string): string => datasetId + KEY_SEP + nameOrId

/**
 * Writes the type changes of event_types or object_types by the replay rule: reads the stored
 * positions of the rows touched, keeps what they lack (typeChangeToApply), then one upsert that
 * adds the counts and widens the times.
 */
async function writeTypes(client: pg.PoolClient, table: 'rm_event_types' | 'rm_object_types', changes: TypeChanges): Promise<void> {
  if (changes.size === 0) return
  const all = [...changes.values()]
  const stored = new Map<string, number>()
  const read = await client.query<{ dataset_id: string; name: string; position: string }>(
    `SELECT t.dataset_id, t.name, t.position FROM ocelog.${table} t
     JOIN unnest($1::text[], $2::text[]) AS k(dataset_id, name) ON t.dataset_id = k.dataset_id AND t.name = k.name`,
    columns(all, [(t) => t.datasetId, (t) => t.name]),
  )
  for (const r of read.rows) stored.set(key(r.dataset_id, r.name), Number(r.position))
  const kept = all.flatMap((t) => typeChangeToApply(t, stored.get(key(t.datasetId, t.name))) ?? [])
  if (kept.length === 0) return
  await client.query(
    `INSERT INTO ocelog.${table} AS t (dataset_id, name, first_seen_at, last_seen_at, count, position)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
     ON CONFLICT (dataset_id, name) DO UPDATE SET
       first_seen_at = LEAST(t.first_seen_at, EXCLUDED.first_seen_at),
       last_seen_at = GREATEST(t.last_seen_at, EXCLUDED.last_seen_at),
       count = t.count + EXCLUDED.count,
       position = EXCLUDED.position`,
    columns(kept, [(t) => t.datasetId, (t) => t.name, (t) => t.firstSeenAt, (t) => t.lastSeenAt, (t) => t.added, (t) => t.maxPosition]),
  )
}

async function writeEventTypes(ctx: PostgresSliceContext, { slice }: SliceBatch<'event_types'>): Promise<void> {
  await writeTypes(ctx.client, 'rm_event_types', slice)
}

/** Object types, with their counts of new objects (countNewObjects over the identities' first positions). */
async function writeObjectTypes(ctx: PostgresSliceContext, { slice, expected }: SliceBatch<'object_types'>): Promise<void> {
  countNewObjects(slice, ctx.named.values(), expected, (o) => ctx.objects.get(key(o.datasetId, o.objectId))?.firstPosition)
  await writeTypes(ctx.client, 'rm_object_types', slice)
}

/**
 * objects: the attributes merged per top-level key (jsonb `||`, src/core/merge.ts), by the replay
 * rule over the positions the identity step read; object_changes: one row per record and object.
 */
async function writeObjects(ctx: PostgresSliceContext, { slice }: SliceBatch<'objects'>): Promise<void> {
  const kept = [...slice.objects.values()].flatMap((o) => objectChangeToApply(o, ctx.objects.get(key(o.datasetId, o.objectId))?.position) ?? [])
  if (kept.length > 0) {
    await ctx.client.query(
      `UPDATE ocelog.rm_objects o SET properties = o.properties || v.properties::jsonb, updated_at = v.updated_at, position = v.position
       FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bigint[]) AS v(dataset_id, object_id, properties, updated_at, position)
       WHERE o.dataset_id = v.dataset_id AND o.object_id = v.object_id`,
      columns(kept, [(o) => o.datasetId, (o) => o.objectId, (o) => JSON.stringify(o.properties), (o) => o.lastSeenAt, (o) => o.maxPosition]),
    )
  }
  if (slice.changes.length > 0) {
    await ctx.client.query(
      `INSERT INTO ocelog.rm_object_changes (dataset_id, object_id, position, time, attributes)
       SELECT d, o, p, t, a::json FROM unnest($1::text[], $2::uuid[], $3::bigint[], $4::text[], $5::text[]) AS v(d, o, p, t, a)
       ON CONFLICT DO NOTHING`,
      columns(slice.changes, [(c) => c.dataset_id, (c) => c.object_id, (c) => c.position, (c) => c.time, (c) => JSON.stringify(c.attributes)]),
    )
  }
}

/** events and event_objects (E2O): each row inserted once. */
async function writeEvents(ctx: PostgresSliceContext, { slice }: SliceBatch<'events'>): Promise<void> {
  if (slice.events.length > 0) {
    await ctx.client.query(
      `INSERT INTO ocelog.rm_events (dataset_id, event_id, event_type, timestamp, end_timestamp, properties, objects_count, received_at, position)
       SELECT d, e, ty, ts, te, p::json, n, r, pos
       FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::bigint[]) AS v(d, e, ty, ts, te, p, n, r, pos)
       ON CONFLICT DO NOTHING`,
      columns(slice.events, [
        (e) => e.dataset_id,
        (e) => e.event_id,
        (e) => e.event_type,
        (e) => e.timestamp,
        (e) => e.end_timestamp,
        (e) => JSON.stringify(e.properties),
        (e) => e.objects_count,
        (e) => e.received_at,
        (e) => e.position,
      ]),
    )
  }
  if (slice.eventObjects.length > 0) {
    await ctx.client.query(
      `INSERT INTO ocelog.rm_event_objects (dataset_id, event_id, object_id, qualifier, object_type, external_id, event_time, position)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
       ON CONFLICT DO NOTHING`,
      columns(slice.eventObjects, [
        (l) => l.dataset_id,
        (l) => l.event_id,
        (l) => l.object_id,
        (l) => storedQualifier(l.qualifier),
        (l) => l.object_type,
        (l) => l.external_id,
        (l) => l.event_time,
        (l) => l.position,
      ]),
    )
  }
}

/** O2O: the first row of each (object, target, qualifier) in log order is kept (`unnest` keeps the arrays' order). */
async function writeObjectRelationships(ctx: PostgresSliceContext, { slice }: SliceBatch<'object_relationships'>): Promise<void> {
  if (slice.length === 0) return
  await ctx.client.query(
    `INSERT INTO ocelog.rm_object_relationships (dataset_id, object_id, target_object_id, qualifier, target_type, target_external_id, time, position)
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
     ON CONFLICT DO NOTHING`,
    columns(slice, [
      (r) => r.dataset_id,
      (r) => r.object_id,
      (r) => r.target_object_id,
      (r) => storedQualifier(r.qualifier),
      (r) => r.target_type,
      (r) => r.target_external_id,
      (r) => r.time,
      (r) => r.position,
    ]),
  )
}

/**
 * The audit chain (README § Operations, digests): chains each dataset's records (log order) from the
 * last row held before them, one row per record; a record whose row is there already keeps it, and
 * the chain goes on from its hash (the replay rule).
 */
async function writeAuditChain(ctx: PostgresSliceContext, { slice }: SliceBatch<'audit_chain'>): Promise<void> {
  const byDataset = new Map<string, AuditChainChange[]>()
  for (const ch of slice) {
    const list = byDataset.get(ch.datasetId)
    if (list === undefined) byDataset.set(ch.datasetId, [ch])
    else list.push(ch)
  }
  const rows: { datasetId: string; position: number; seq: number; hash: string }[] = []
  for (const [datasetId, run] of byDataset) {
    const first = run[0]
    if (first === undefined) continue
    const held = new Map<number, { seq: number; hash: string }>()
    // The rows a replay holds already: one range of the key (dataset_id, position) over the run, as
    // on SQLite; a list of the run's positions (`= ANY`) costs an index descent per record.
    const found = await ctx.client.query<{ position: string; seq: string; hash: string }>(
      'SELECT position, seq, hash FROM ocelog.rm_audit_chain WHERE dataset_id = $1 AND position BETWEEN $2 AND $3',
      [datasetId, first.position, run[run.length - 1]?.position ?? first.position],
    )
    for (const r of found.rows) held.set(Number(r.position), { seq: Number(r.seq), hash: r.hash })
    const before = await ctx.client.query<{ seq: string; hash: string }>(
      'SELECT seq, hash FROM ocelog.rm_audit_chain WHERE dataset_id = $1 AND position < $2 ORDER BY position DESC LIMIT 1',
      [datasetId, first.position],
    )
    const b = before.rows[0]
    let last = b === undefined ? { seq: 0, hash: GENESIS_HASH } : { seq: Number(b.seq), hash: b.hash }
    for (const r of run) {
      const h = held.get(r.position)
      last = h ?? { seq: last.seq + 1, hash: chainRecord(last.hash, r.record) }
      if (h === undefined) rows.push({ datasetId, position: r.position, ...last })
    }
  }
  if (rows.length === 0) return
  await ctx.client.query(
    `INSERT INTO ocelog.rm_audit_chain (dataset_id, position, seq, hash)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[]) ON CONFLICT DO NOTHING`,
    columns(rows, [(r) => r.datasetId, (r) => r.position, (r) => r.seq, (r) => r.hash]),
  )
}

/**
 * declared_types (docs/read-models.md#declared_types): each type's row with the highest position
 * that declared it, and the attributes the replay rule keeps (declaredAttributesToApply over the
 * stored positions), an attribute row never overwritten by an earlier record's; the statements are
 * SQLite's too (src/adapters/sql/declared-types-sql.ts).
 */
async function writeDeclaredTypes(ctx: PostgresSliceContext, { slice }: SliceBatch<'declared_types'>): Promise<void> {
  for (const t of slice.values()) {
    await ctx.client.query(DECLARED_TYPES.putType, typeValues(t))
    const { rows } = await ctx.client.query<{ name: string; position: string }>(DECLARED_TYPES.attributePositions, typeKeyValues(t))
    const stored = storedAttributePositions(rows)
    for (const a of declaredAttributesToApply(t, (name) => stored.get(name))) await ctx.client.query(DECLARED_TYPES.putAttribute, attributeValues(t, a))
  }
}

/** The write of each projection's slice, by name. */
export const SLICE_WRITES: { readonly [K in ProjectionName]: (ctx: PostgresSliceContext, part: SliceBatch<K>) => Promise<void> } = {
  event_types: writeEventTypes,
  object_types: writeObjectTypes,
  objects: writeObjects,
  events: writeEvents,
  object_relationships: writeObjectRelationships,
  audit_chain: writeAuditChain,
  directly_follows: (ctx, { slice }) => writeDirectlyFollows(ctx.client, slice, ctx.dfMemory),
  declared_types: writeDeclaredTypes,
}

/**
 * How each projection's read models are emptied for its rebuild alone (clearProjection): its own
 * tables; the objects projection resets its part of each object row to the identity (no
 * attributes, position −1), which the other projections share.
 */
export const SLICE_CLEARS: { readonly [K in ProjectionName]: string } = {
  event_types: typesSql(POSTGRES, 'rm_event_types').clear,
  object_types: typesSql(POSTGRES, 'rm_object_types').clear,
  objects: `UPDATE ocelog.rm_objects SET properties = '{}'::jsonb, updated_at = created_at, position = -1; DELETE FROM ocelog.rm_object_changes`,
  events: 'DELETE FROM ocelog.rm_events; DELETE FROM ocelog.rm_event_objects',
  object_relationships: 'DELETE FROM ocelog.rm_object_relationships',
  audit_chain: 'DELETE FROM ocelog.rm_audit_chain',
  directly_follows: 'DELETE FROM ocelog.rm_df_steps; DELETE FROM ocelog.rm_df_memberships; DELETE FROM ocelog.rm_df_aggregates',
  declared_types: DECLARED_TYPES.clear,
}
