/**
 * ReadModelStore adapter on PostgreSQL (README § Read models; docs/read-models.md#the-read-models-on-postgresql):
 * the `rm_*` tables of read-models-schema.ts, beside the log in the schema `ocelog`.
 *
 * `apply` is one transaction (READ COMMITTED):
 * 1. the compare-and-set of every checkpoint of the batch, first: `SELECT … FOR UPDATE` of each
 *    checkpoint row (or an insert for a first checkpoint), so that a second projector applying the
 *    same checkpoint waits on the row lock, then finds it moved and throws CheckpointConflictError
 *    before writing anything. A projector that lost its lease (docs/architecture.md#projection-runners-and-leases)
 *    can therefore never write past the one that holds it;
 * 2. the identities of the objects the batch names (inserted when new, in key order so that two
 *    transactions take the rows' locks in one order), and each one's stored positions;
 * 3. each projection's slice (postgres-slice-writes.ts), in PROJECTION_NAMES order;
 * 4. the checkpoints move to `batch.to`, with the projections' versions.
 * Between its transactions the store remembers, per directly-follows checkpoint, the tails and
 * membership counts of recurring objects (PostgresDfMemory). It trusts that memory only while the
 * checkpoint's row still carries the `xmin` its own last commit gave it, which no other writer
 * (a projector that took the lease over, a rebuild) can leave in place; else it clears it first.
 * A transaction that dies midway leaves nothing: the checkpoint still holds `expected`, and the
 * next apply of the same records applies them whole. The transactions commit with
 * `synchronous_commit = off`, as the embedded read models run with `synchronous=NORMAL`: a crash of
 * the server may lose the last of them (never part of one), and the projector applies those
 * records again from the checkpoint that survived. The log's appends keep the server's setting.
 */
import type pg from 'pg'
import { type ChangeBatch, type NamedObject, PROJECTION_NAMES, type ProjectionName, sliceOf } from '../../core/read-model-changes.js'
import { KEY_SEP } from '../../core/keys.js'
import type { ReadModelStore } from '../../ports/read-model-store.js'
import { CheckpointConflictError } from '../../ports/read-model-store.js'
import type { ProjectionState, ProjectionStop } from '../../schemas/projections.js'
import { checkpointsSql, positionOf, type ProjectionStateRow, projectionStateOf } from '../sql/checkpoints-sql.js'
import { POSTGRES } from '../sql/dialect.js'
import { DF_MEMORY_OBJECTS, DfObjectMemory } from '../../core/df-object-memory.js'
import { inTransaction } from './connection.js'
import { READ_MODEL_TABLES } from './read-models-schema.js'
import type { PostgresDfMemory } from './postgres-df-writes.js'
import { type PostgresSliceContext, SLICE_CLEARS, SLICE_WRITES, type StoredObject } from './postgres-slice-writes.js'
import { encodeNul } from '../../core/nul-code.js'
import { encodeStrings } from './text-codec.js'
import { columns } from './unnest.js'

/**
 * When this store refreshes the planner's statistics at the head (atHead): once the records it
 * applied since the last ANALYZE reach both ANALYZE_MIN_RECORDS and ANALYZE_GROWTH times the log's
 * position at that ANALYZE (at the first, the position it started from). Autovacuum's own rule is
 * alike (`autovacuum_analyze_scale_factor`, 10%), but it runs only on its launcher's next round
 * (`autovacuum_naptime`, a minute) and behind other work: reads made meanwhile after a burst are
 * planned on the statistics of nearly empty tables, and one such plan of a read (an object's events,
 * 18,211 events loaded) ran for over 9 minutes. docs/read-models.md § The read models on PostgreSQL.
 */
export const ANALYZE_MIN_RECORDS = 1_000
/** The share of the log's position at the last ANALYZE that must be applied since (ANALYZE_MIN_RECORDS). */
export const ANALYZE_GROWTH = 0.2

/**
 * The planner settings of an apply transaction. The batch writes join the batch's keys (an
 * `unnest` of a few thousand rows) to tables that grow to millions; PostgreSQL's default costs then
 * often prefer a hash join over a sequential scan of the whole table (seen on the membership counts,
 * the relinked steps and the objects' merges), so each batch's cost grew with the table rather
 * than with the batch. With hash and merge joins off, each join is a nested loop of index probes on
 * the table's key. Set with SET LOCAL, so they end with the transaction.
 */
export const PLAN_WRITES_BY_KEY = 'SET LOCAL enable_hashjoin TO off; SET LOCAL enable_mergejoin TO off'

/** The checkpoints' and stops' statements (shared with SQLite). */
const CHECKPOINTS = checkpointsSql(POSTGRES)

/**
 * The directly-follows write's memory of objects for one checkpoint (a runner's, or a shard's), and
 * the `xmin` of the checkpoint's row as this store's last committed transaction left it: the
 * transaction id that wrote the row. When the row holds another, another transaction (a projector
 * that took the lease over, a rebuild, a reset) wrote since, and the memory is cleared.
 */
interface DfMemoryOf {
  memory: PostgresDfMemory
  xmin: string | null
}

/**
 * The batch with its slices' strings as the read models store them (text-codec.ts: U+0000 and U+0001
 * coded), but for the audit chain's records, whose canonical texts are hashed as the log holds them
 * and never stored. The slices' map keys stay as the fold made them (`<dataset>KEY_SEP<name>`), and so do the
 * named objects, which the object types' counts look up by such keys; writeIdentities codes their
 * type and id as it writes them.
 */
function storedText(batch: ChangeBatch): ChangeBatch {
  const { audit_chain: auditChain, ...others } = batch.slices
  const slices = encodeStrings(others)
  return { ...batch, slices: auditChain === undefined ? slices : { ...slices, audit_chain: auditChain } }
}

export class PostgresReadModelStore implements ReadModelStore {
  /** Records applied since this store last ran ANALYZE (or since it was made). */
  private appliedSinceAnalyze = 0
  /** The log's position at this store's last ANALYZE; before the first, the position its first batch started after. */
  private analyzedAt: number | null = null
  /** The position of the last batch this store applied (ChangeBatch.to). */
  private appliedTo = 0
  /** The directly-follows memories, by checkpoint name. */
  private readonly dfMemories = new Map<string, DfMemoryOf>()

  /**
   * @param pool the service's pool (openPostgresPool), migrated (schema.ts); not closed by this store.
   * @param options.analyzeMinRecords at least these records applied before atHead runs ANALYZE (default ANALYZE_MIN_RECORDS).
   * @param options.analyzeGrowth and this share of the position at the last ANALYZE (default ANALYZE_GROWTH).
   * @param options.dfMemoryObjects objects the directly-follows write remembers between transactions,
   *   per checkpoint (DfObjectMemory; default DF_MEMORY_OBJECTS; 0 remembers nothing).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { analyzeMinRecords?: number; analyzeGrowth?: number; dfMemoryObjects?: number } = {},
  ) {}

  /** The directly-follows memory of checkpoint `name`, made empty when missing. */
  private dfMemoryOf(name: string): DfMemoryOf {
    let m = this.dfMemories.get(name)
    if (m === undefined) {
      m = { memory: new DfObjectMemory(this.options.dfMemoryObjects ?? DF_MEMORY_OBJECTS), xmin: null }
      this.dfMemories.set(name, m)
    }
    return m
  }

  /**
   * At the head of the log, once the records applied since the last ANALYZE reach the larger of
   * ANALYZE_MIN_RECORDS and ANALYZE_GROWTH of the position then: ANALYZE of the read models' tables,
   * so that the read side's plans follow what a burst or a catch-up wrote. Each ANALYZE samples a
   * bounded number of rows per table (300 × `default_statistics_target`), so its cost does not grow
   * with the tables, and the growth rule keeps their number logarithmic in the log's size.
   */
  async atHead(): Promise<void> {
    const since = this.analyzedAt ?? 0
    const due = Math.max(this.options.analyzeMinRecords ?? ANALYZE_MIN_RECORDS, (this.options.analyzeGrowth ?? ANALYZE_GROWTH) * since)
    if (this.appliedSinceAnalyze < due) return
    await this.pool.query(`ANALYZE ${READ_MODEL_TABLES.map((t) => `ocelog.${t}`).join(', ')}`)
    this.appliedSinceAnalyze = 0
    this.analyzedAt = this.appliedTo
  }

  async checkpoint(name: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ position: string }>(CHECKPOINTS.position, [name])
    return positionOf(rows[0])
  }

  async apply(sent: ChangeBatch): Promise<void> {
    const batch = storedText(sent)
    const dfCheckpoint = batch.slices.directly_follows?.checkpoint
    const df = dfCheckpoint === undefined ? undefined : this.dfMemoryOf(dfCheckpoint)
    let written: string | null = null
    try {
      written = await this.applyIn(batch, df)
    } catch (error) {
      // Rolled back, or not known to have committed: the memory may hold this transaction's writes.
      df?.memory.clear()
      if (df !== undefined) df.xmin = null
      throw error
    }
    if (df !== undefined) df.xmin = written
    this.analyzedAt ??= Math.max(0, batch.to - batch.recordCount)
    this.appliedSinceAnalyze += batch.recordCount
    this.appliedTo = Math.max(this.appliedTo, batch.to)
  }

  /**
   * The transaction of `apply`.
   * @returns the `xmin` of the directly-follows checkpoint's row as this transaction wrote it (null: no such slice).
   */
  private async applyIn(batch: ChangeBatch, df: DfMemoryOf | undefined): Promise<string | null> {
    const parts = Object.values(batch.slices)
    const dfCheckpoint = batch.slices.directly_follows?.checkpoint
    let written: string | null = null
    await inTransaction(this.pool, async (client) => {
      // Derived data: a crash of the server may lose the last applied batches, never their
      // consistency (each carries its checkpoint), and the projector applies them again.
      // Every write of a batch finds its rows by key: a nested loop of index probes over the
      // batch's keys (PLAN_WRITES_BY_KEY), never a scan of the table.
      await client.query(`SET LOCAL synchronous_commit TO off; ${PLAN_WRITES_BY_KEY}`)
      for (const part of parts) {
        const xmin = await this.takeCheckpoint(client, part.checkpoint, part.expected, part.version)
        // Another transaction wrote the directly-follows checkpoint since this store's last one did.
        if (df !== undefined && part.checkpoint === dfCheckpoint && (xmin === null || xmin !== df.xmin)) df.memory.clear()
      }
      // The objects' identities are read by the object types' counts and the objects' replay rule; a
      // batch of neither (the process runner's) leaves them to the runner that has them.
      const identities = batch.slices.objects !== undefined || batch.slices.object_types !== undefined
      const ctx: PostgresSliceContext = {
        client,
        objects: identities ? await writeIdentities(client, batch.objects) : new Map(),
        named: batch.objects,
        ...(df === undefined ? {} : { dfMemory: df.memory }),
      }
      for (const name of PROJECTION_NAMES) await this.writeSlice(ctx, batch, name)
      const now = new Date().toISOString()
      for (const part of parts) {
        const r = await client.query<{ xmin: string }>(`${CHECKPOINTS.put} RETURNING xmin::text AS xmin`, [part.checkpoint, batch.to, part.version, now])
        if (part.checkpoint === dfCheckpoint) written = r.rows[0]?.xmin ?? null
      }
    })
    return written
  }

  private async writeSlice<K extends ProjectionName>(ctx: PostgresSliceContext, batch: ChangeBatch, name: K): Promise<void> {
    const part = sliceOf(batch.slices, name)
    if (part !== undefined) await SLICE_WRITES[name](ctx, part)
  }

  /**
   * Locks checkpoint `name` for this transaction and checks that it holds `expected`. A first
   * checkpoint (expected null) is inserted at −1 (moved to the batch's end at commit); a concurrent
   * insert of the same name waits on the key and then finds the row there.
   * @returns the `xmin` of the row as it was (the transaction that last wrote it), null for a row inserted here.
   * @throws CheckpointConflictError when the stored position is not `expected`.
   */
  private async takeCheckpoint(client: pg.PoolClient, name: string, expected: number | null, version: number): Promise<string | null> {
    if (expected === null) {
      const inserted = await client.query(
        `INSERT INTO ocelog.rm_checkpoints (projector, position, version, updated_at) VALUES ($1, -1, $2, $3) ON CONFLICT (projector) DO NOTHING`,
        [name, version, new Date().toISOString()],
      )
      if (inserted.rowCount === 1) return null
    }
    const { rows } = await client.query<{ position: string; xmin: string }>(
      'SELECT position, xmin::text AS xmin FROM ocelog.rm_checkpoints WHERE projector = $1 FOR UPDATE',
      [name],
    )
    const current = positionOf(rows[0])
    if (current !== expected) throw new CheckpointConflictError(name, expected, current)
    return rows[0]?.xmin ?? null
  }

  async clearProjection(projection: ProjectionName, checkpoints: readonly string[]): Promise<void> {
    for (const name of checkpoints) this.dfMemories.delete(name)
    await inTransaction(this.pool, async (client) => {
      await client.query(SLICE_CLEARS[projection])
      for (const name of checkpoints) {
        await client.query(CHECKPOINTS.remove, [name])
        await client.query(CHECKPOINTS.removeStop, [name])
      }
    })
  }

  async reset(): Promise<void> {
    this.dfMemories.clear()
    // Empty tables: the next ANALYZE is due once the rebuild has applied ANALYZE_MIN_RECORDS.
    this.analyzedAt = null
    this.appliedSinceAnalyze = 0
    await this.pool.query(`TRUNCATE ${READ_MODEL_TABLES.map((t) => `ocelog.${t}`).join(', ')}`)
  }

  async projections(): Promise<ProjectionState[]> {
    const { rows } = await this.pool.query<ProjectionStateRow>(CHECKPOINTS.projections)
    return rows.map(projectionStateOf)
  }

  async recordStop(stop: ProjectionStop): Promise<void> {
    await this.pool.query(CHECKPOINTS.putStop, [stop.projection, JSON.stringify(stop)])
  }

  async clearStop(name: string): Promise<void> {
    await this.pool.query(CHECKPOINTS.removeStop, [name])
  }

  /** The pool is shared with the log and closed by the composition root. */
  async close(): Promise<void> {}
}

/**
 * The identity step: reads the stored positions of every object the batch names, inserts those
 * that have no row yet (no attributes, position −1, until the objects projection applies it) and
 * reads theirs; a row whose `first_position` is after the batch's (a runner or shard that applied
 * later records first) takes the lower one. Rows already there are not rewritten, and only the new
 * objects are offered to the insert: most batches name objects that exist, and an insert with
 * `ON CONFLICT DO NOTHING` tries each row it is given (903,106 tried for 31,000 new in the bench's
 * catch-up, 5.6 s of it).
 * @returns by `<dataset>KEY_SEP<object id>`.
 */
async function writeIdentities(client: pg.PoolClient, named: ReadonlyMap<string, NamedObject>): Promise<Map<string, StoredObject>> {
  const out = new Map<string, StoredObject>()
  if (named.size === 0) return out
  // Key order, so that two transactions take the rows' locks in one order.
  const objects = [...named.values()].sort((a, b) => (a.datasetId === b.datasetId ? (a.objectId < b.objectId ? -1 : 1) : a.datasetId < b.datasetId ? -1 : 1))
  const rows = await identityRows(client, objects)
  const found = new Set(rows.map((r) => r.object_id))
  const missing = objects.filter((o) => !found.has(o.objectId))
  if (missing.length > 0) {
    // ON CONFLICT: another shard of the entities runner may insert the same object meanwhile.
    await client.query(
      `INSERT INTO ocelog.rm_objects (dataset_id, object_id, type, external_id, properties, created_at, updated_at, position, first_position)
       SELECT d, id, ty, x, '{}'::jsonb, c, c, -1, p FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS v(d, id, ty, x, c, p)
       ON CONFLICT (dataset_id, object_id) DO NOTHING`,
      columns(missing, [
        (o) => o.datasetId,
        (o) => o.objectId,
        (o) => encodeNul(o.type),
        (o) => encodeNul(o.externalId),
        (o) => o.firstSeenAt,
        (o) => o.position,
      ]),
    )
    rows.push(...(await identityRows(client, missing)))
  }
  const lower: NamedObject[] = []
  for (const r of rows) {
    const key = r.dataset_id + KEY_SEP + r.object_id
    const n = named.get(r.object_id)
    const stored = Number(r.first_position)
    if (n !== undefined && n.position < stored) lower.push(n)
    out.set(key, { position: Number(r.position), firstPosition: Math.min(stored, n?.position ?? stored) })
  }
  if (lower.length > 0) {
    await client.query(
      `UPDATE ocelog.rm_objects o SET first_position = LEAST(o.first_position, v.p)
       FROM unnest($1::text[], $2::uuid[], $3::bigint[]) AS v(d, id, p) WHERE o.dataset_id = v.d AND o.object_id = v.id`,
      columns(lower, [(o) => o.datasetId, (o) => o.objectId, (o) => o.position]),
    )
  }
  return out
}

/** The stored identity rows of `objects` (one probe each on the key). */
async function identityRows(
  client: pg.PoolClient,
  objects: readonly NamedObject[],
): Promise<{ dataset_id: string; object_id: string; position: string; first_position: string }[]> {
  const { rows } = await client.query<{ dataset_id: string; object_id: string; position: string; first_position: string }>(
    `SELECT o.dataset_id, o.object_id, o.position, o.first_position FROM ocelog.rm_objects o
     JOIN unnest($1::text[], $2::uuid[]) AS k(dataset_id, object_id) ON o.dataset_id = k.dataset_id AND o.object_id = k.object_id`,
    columns(objects, [(o) => o.datasetId, (o) => o.objectId]),
  )
  return rows
}
