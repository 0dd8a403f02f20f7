/**
 * The PostgreSQL store's write of the directly-follows slice (docs/read-models.md#the-read-models-on-postgresql;
 * the rules: docs/process-map.md#the-directly-follows-read-model and src/core/directly-follows.ts),
 * inside the store's transaction. The rules' callbacks are synchronous, so the store reads first
 * and the rules then read what was fetched, as on MongoDB (mongodb-df-writes.ts), with one round
 * trip per read:
 * 1. the stored neighbours of each cluster of an object's new steps, in rounds (`linkByClusters`):
 *    one statement per round, two index probes per asked step along the key (dataset_id, object_id, t, pos);
 * 2. the membership counts of the run's objects, and the stored steps of the events whose incoming
 *    couples changed (index rm_df_steps_by_time); `aggregateChanges`;
 * 3. the aggregates the changes touch; `applyDelta`; then the steps, memberships and aggregates,
 *    each a multi-row statement.
 * The rules' object key is the object's `object_id` (a UUID of dataset, type and id, so unique
 * across datasets); an activity's rows have `b` = ''.
 * With the store's memory of objects (PostgresDfMemory), the neighbours of an object whose new steps
 * come after its remembered tail are not read, nor the membership counts it remembers.
 */
import type pg from 'pg'
import {
  aggregateChanges,
  applyDelta,
  type DfAggregate,
  type DfKey,
  type DfLinking,
  type DfNeighbours,
  type DfStep,
  dfKeyString,
  type DfRefill,
  edgeRefills,
  type EventStepRow,
  type MembershipChange,
  isEmptyAggregate,
  linkByClusters,
  membershipsAsked,
  refillAggregate,
  stepsByObject,
  dfStepsOf,
} from '../../core/directly-follows.js'
import { type DfObjectMemory, EMPTY_TAIL, linkAfterTails, neighboursFromTail, nextTail, type TraceTail } from '../../core/df-object-memory.js'
import { KEY_SEP } from '../../core/keys.js'
import type { DirectlyFollowsEvent } from '../../core/read-model-changes.js'
import { statsOfStored } from '../../core/duration-stats.js'
import { columns } from './unnest.js'

/** A row of rm_df_steps as node-postgres gives it (bigint columns as text). */
interface StepSqlRow {
  dataset_id: string
  object_id: string
  object_type: string
  activity: string
  t: string
  pos: string
  te: string | null
  kin: number
}

const STEP_COLUMNS = 's.dataset_id, s.object_id, s.object_type, s.activity, s.t, s.pos, s.te, s.kin'

const num = (v: string | null): number | null => (v === null ? null : Number(v))

/** A stored step as the rules see it. */
function stepOfRow(r: StepSqlRow): DfStep<string> {
  return { dataset: r.dataset_id, object: r.object_id, ot: r.object_type, act: r.activity, t: Number(r.t), pos: Number(r.pos), te: num(r.te), kin: r.kin }
}

/**
 * The stored neighbours of each candidate step in its object's trace, by object id: from the
 * object's tail when `tails` holds them (neighboursFromTail), else the step just before it and the
 * two at or after it, read in one statement for all such candidates (two LATERAL index probes each).
 * @param tails each object's tail before the run where known; filled with those a read shows.
 */
async function readNeighbours(
  client: pg.PoolClient,
  candidates: readonly DfStep<string>[],
  tails: Map<string, TraceTail<string>>,
): Promise<Map<string, DfNeighbours<string>>> {
  const out = new Map<string, DfNeighbours<string>>()
  const asks: DfStep<string>[] = []
  for (const c of candidates) {
    const tail = tails.get(c.object)
    const remembered = tail === undefined ? undefined : neighboursFromTail(tail, c)
    if (remembered !== undefined) out.set(c.object, remembered)
    else {
      out.set(c.object, { before: null, at: null, next: null })
      asks.push(c)
    }
  }
  if (asks.length === 0) return out
  const { rows } = await client.query<StepSqlRow & { side: number }>(
    `SELECT n.*
     FROM unnest($1::text[], $2::uuid[], $3::bigint[], $4::bigint[]) AS a(dataset_id, object_id, t, pos)
     CROSS JOIN LATERAL (
       (SELECT 0 AS side, ${STEP_COLUMNS} FROM ocelog.rm_df_steps s
        WHERE s.dataset_id = a.dataset_id AND s.object_id = a.object_id AND (s.t, s.pos) < (a.t, a.pos)
        ORDER BY s.t DESC, s.pos DESC LIMIT 1)
       UNION ALL
       (SELECT 1 AS side, ${STEP_COLUMNS} FROM ocelog.rm_df_steps s
        WHERE s.dataset_id = a.dataset_id AND s.object_id = a.object_id AND (s.t, s.pos) >= (a.t, a.pos)
        ORDER BY s.t, s.pos LIMIT 2)
     ) AS n
     ORDER BY n.object_id, n.side, n.t, n.pos`,
    columns(asks, [(s) => s.dataset, (s) => s.object, (s) => s.t, (s) => s.pos]),
  )
  for (const r of rows) {
    const n = out.get(r.object_id)
    if (n === undefined) continue
    const step = stepOfRow(r)
    if (r.side === 0) n.before = step
    else if (n.at === null) n.at = step
    else n.next = step
  }
  // A read that found nothing at or after its step shows the object's last stored step: its tail.
  for (const a of asks) {
    const n = out.get(a.object)
    if (n !== undefined && n.at === null && !tails.has(a.object)) tails.set(a.object, n.before === null ? EMPTY_TAIL : { steps: [n.before], whole: false })
  }
  return out
}

/**
 * Step 1 of the rules. An object whose remembered tail (`memory`) ends before its new steps is linked
 * with no read (linkAppends); the others by linkByClusters, a round of neighbour reads per cluster rank.
 * @param tails filled with each object's tail before the run, where known.
 */
async function linkRun(
  client: pg.PoolClient,
  byObject: ReadonlyMap<string, readonly DfStep<string>[]>,
  tails: Map<string, TraceTail<string>>,
  memory: PostgresDfMemory | undefined,
): Promise<DfLinking<string>> {
  const { appended, rest } = linkAfterTails(byObject, (object) => memory?.get(object)?.tail, tails)
  if (rest.size === 0) return appended
  const walk = linkByClusters(rest, appended)
  let round = walk.next()
  while (round.done !== true) round = walk.next(await readNeighbours(client, round.value, tails))
  return round.value
}

/** The key of an object's membership count of (a, b) in its map (PostgresDfMemory). */
const pairKey = (a: string, b: string): string => a + KEY_SEP + b

/**
 * The PostgreSQL store's memory of objects (DfObjectMemory by object id and pairKey): an object's
 * memberships map holds the counts known of it, 0 for a row known not to exist; a key it lacks is
 * read. Kept true by the store (PostgresReadModelStore: cleared unless the runner's checkpoint row is
 * still the one its last transaction wrote).
 */
export type PostgresDfMemory = DfObjectMemory<string, string>
const eventKey = (dataset: string, t: number, pos: number): string => dataset + KEY_SEP + String(t) + KEY_SEP + String(pos)

/** The membership counts of the keys $1..$4 (dataset, object, a, b): one probe of the key per asked key, under PLAN_WRITES_BY_KEY. */
export const MEMBERSHIPS_READ_SQL = `SELECT m.object_id, m.a, m.b, m.n FROM ocelog.rm_df_memberships m
     JOIN unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS k(dataset_id, object_id, a, b)
       ON m.dataset_id = k.dataset_id AND m.object_id = k.object_id AND m.a = k.a AND m.b = k.b`

/**
 * The membership counts a run's aggregateChanges asks for (membershipsAsked), by object and pairKey
 * (0: no row): those `memory` holds, and the others read, one index probe each on the key
 * (dataset_id, object_id, a, b), rather than every membership of the run's objects (a long-lived
 * object's grow with its distinct couples).
 */
async function readMemberships(
  client: pg.PoolClient,
  linking: DfLinking<string>,
  datasetOf: (object: string) => string,
  memory: PostgresDfMemory | undefined,
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>()
  const unknown: { object: string; a: string; b: string }[] = []
  for (const k of membershipsAsked(linking)) {
    const remembered = memory?.get(k.object)?.memberships?.get(pairKey(k.a, k.b))
    const of = out.get(k.object) ?? new Map<string, number>()
    out.set(k.object, of)
    of.set(pairKey(k.a, k.b), remembered ?? 0)
    if (remembered === undefined) unknown.push(k)
  }
  if (unknown.length === 0) return out
  const { rows } = await client.query<{ object_id: string; a: string; b: string; n: number }>(
    MEMBERSHIPS_READ_SQL,
    columns(unknown, [(k) => datasetOf(k.object), (k) => k.object, (k) => k.a, (k) => k.b]),
  )
  for (const r of rows) out.get(r.object_id)?.set(pairKey(r.a, r.b), r.n)
  return out
}

/** The stored steps of each target's event (index rm_df_steps_by_time), by eventKey. */
async function readEventSteps(client: pg.PoolClient, targets: readonly DfStep<string>[]): Promise<Map<string, EventStepRow<string>[]>> {
  const out = new Map<string, EventStepRow<string>[]>()
  if (targets.length === 0) return out
  const { rows } = await client.query<{
    dataset_id: string
    t: string
    pos: string
    object_id: string
    object_type: string
    prev_pos: string | null
    prev_act: string | null
  }>(
    `SELECT s.dataset_id, s.t, s.pos, s.object_id, s.object_type, s.prev_pos, s.prev_act FROM ocelog.rm_df_steps s
     JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])) AS k(dataset_id, t, pos)
       ON s.dataset_id = k.dataset_id AND s.t = k.t AND s.pos = k.pos`,
    columns(targets, [(n) => n.dataset, (n) => n.t, (n) => n.pos]),
  )
  for (const r of rows) {
    const k = eventKey(r.dataset_id, Number(r.t), Number(r.pos))
    const list = out.get(k) ?? []
    list.push({ object: r.object_id, ot: r.object_type, prevPos: num(r.prev_pos), prevAct: r.prev_act })
    out.set(k, list)
  }
  return out
}

interface AggregateSqlRow {
  dataset_id: string
  object_type: string
  a: string
  b: string
  events: string
  objects: string
  total: string
  starts: string
  ends: string
  couples: string
  durations: unknown
  waiting: unknown
}

/** A stored aggregate row as DfAggregate. */
export function aggregateOfRow(r: AggregateSqlRow): DfAggregate {
  return {
    events: Number(r.events),
    objects: Number(r.objects),
    total: Number(r.total),
    starts: Number(r.starts),
    ends: Number(r.ends),
    couples: Number(r.couples),
    durations: statsOfStored(r.durations),
    waiting: statsOfStored(r.waiting),
  }
}

/** The stored aggregates of `keys`, by dfKeyString. */
async function readAggregates(client: pg.PoolClient, keys: readonly DfKey[]): Promise<Map<string, DfAggregate>> {
  const out = new Map<string, DfAggregate>()
  if (keys.length === 0) return out
  const { rows } = await client.query<AggregateSqlRow>(
    `SELECT g.* FROM ocelog.rm_df_aggregates g
     JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])) AS k(dataset_id, object_type, a, b)
       ON g.dataset_id = k.dataset_id AND g.object_type = k.object_type AND g.a = k.a AND g.b = k.b`,
    columns(keys, [(k) => k.dataset, (k) => k.ot, (k) => k.a, (k) => k.b]),
  )
  for (const r of rows) out.set(dfKeyString({ dataset: r.dataset_id, ot: r.object_type, a: r.a, b: r.b }), aggregateOfRow(r))
  return out
}

/**
 * The values that refill one end of an edge's kept extremes (DfRefill): the `refill.count` smallest
 * or largest elapsed (`prev_dt`) or waiting (max(0, `prev_wait`)) times among the edge's stored
 * steps, in ms. One scan of the edge's range of `rm_df_steps_by_edge` (index-only where the
 * visibility map allows), of which a top-N sort keeps that many (docs/process-map.md#medians-of-the-all-time-map).
 */
async function readRefill(client: pg.PoolClient, key: DfKey, refill: DfRefill): Promise<number[]> {
  const column = refill.stats === 'durations' ? 'prev_dt' : 'prev_wait'
  const order = refill.end === 'lo' ? 'ASC' : 'DESC'
  const { rows } = await client.query<{ v: string }>(
    `SELECT ${column} AS v FROM ocelog.rm_df_steps
     WHERE dataset_id = $1 AND object_type = $2 AND prev_act = $3 AND activity = $4 AND ${column} IS NOT NULL
     ORDER BY ${column} ${order} LIMIT $5`,
    [key.dataset, key.ot, key.a, key.b, refill.count],
  )
  return rows.map((r) => Math.max(0, Number(r.v)))
}

/**
 * Inserts the new steps and moves the relinked steps' predecessors. The linking read every new
 * step's place in its trace and lists a step stored already as no insert (a replay), so the insert
 * is a plain one: no conflict check per row in each of the table's four indexes.
 */
async function writeSteps(client: pg.PoolClient, linking: DfLinking<string>): Promise<void> {
  // The predecessor's fields, and the raw differences the edges' refills read (docs/process-map.md#medians-of-the-all-time-map):
  // elapsed t − t(prev), and t − end(prev) before max(0, …), null when the predecessor has no end.
  type Linked = { step: DfStep<string>; prev: DfStep<string> | null }
  const prevColumns = [
    (l: Linked) => l.prev?.t ?? null,
    (l: Linked) => l.prev?.pos ?? null,
    (l: Linked) => l.prev?.act ?? null,
    (l: Linked) => l.prev?.te ?? null,
    (l: Linked) => (l.prev === null ? null : l.step.t - l.prev.t),
    (l: Linked) => (l.prev === null || l.prev.te === null ? null : l.step.t - l.prev.te),
  ]
  if (linking.inserts.length > 0) {
    await client.query(
      `INSERT INTO ocelog.rm_df_steps (dataset_id, object_id, object_type, activity, t, pos, te, kin, prev_t, prev_pos, prev_act, prev_te, prev_dt, prev_wait)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::int[],
         $9::bigint[], $10::bigint[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[])`,
      columns(linking.inserts, [
        (l) => l.step.dataset,
        (l) => l.step.object,
        (l) => l.step.ot,
        (l) => l.step.act,
        (l) => l.step.t,
        (l) => l.step.pos,
        (l) => l.step.te,
        (l) => l.step.kin,
        ...prevColumns,
      ]),
    )
  }
  if (linking.relinks.length > 0) {
    await client.query(
      `UPDATE ocelog.rm_df_steps s SET prev_t = v.prev_t, prev_pos = v.prev_pos, prev_act = v.prev_act, prev_te = v.prev_te,
         prev_dt = v.prev_dt, prev_wait = v.prev_wait
       FROM unnest($1::text[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[])
         AS v(dataset_id, object_id, t, pos, prev_t, prev_pos, prev_act, prev_te, prev_dt, prev_wait)
       WHERE s.dataset_id = v.dataset_id AND s.object_id = v.object_id AND s.t = v.t AND s.pos = v.pos`,
      columns(linking.relinks, [(l) => l.step.dataset, (l) => l.step.object, (l) => l.step.t, (l) => l.step.pos, ...prevColumns]),
    )
  }
}

/**
 * Writes the membership counts that changed (MembershipChange): a count gone to 0 is deleted, one
 * that was 0 is inserted, any other is updated in place (`n` is in no index, so the update touches
 * no index). No upsert: the store's transaction holds the runner's checkpoint lock, so no other
 * writer changes these rows meanwhile, and a row that is already there when its `before` says 0
 * fails the transaction instead of being overwritten.
 */
async function writeMemberships(client: pg.PoolClient, changes: readonly MembershipChange<string>[], datasetOf: (object: string) => string): Promise<void> {
  const keyColumns = [
    (m: MembershipChange<string>) => datasetOf(m.object),
    (m: MembershipChange<string>) => m.object,
    (m: MembershipChange<string>) => m.a,
    (m: MembershipChange<string>) => m.b,
  ]
  const gone = changes.filter((m) => m.after === 0)
  const added = changes.filter((m) => m.before === 0 && m.after !== 0)
  const moved = changes.filter((m) => m.before !== 0 && m.after !== 0)
  if (gone.length > 0) {
    await client.query(
      `DELETE FROM ocelog.rm_df_memberships m USING unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS v(dataset_id, object_id, a, b)
       WHERE m.dataset_id = v.dataset_id AND m.object_id = v.object_id AND m.a = v.a AND m.b = v.b`,
      columns(gone, keyColumns),
    )
  }
  if (added.length > 0) {
    await client.query(
      `INSERT INTO ocelog.rm_df_memberships (dataset_id, object_id, a, b, n)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::int[])`,
      columns(added, [...keyColumns, (m) => m.after]),
    )
  }
  if (moved.length > 0) {
    await client.query(
      `UPDATE ocelog.rm_df_memberships m SET n = v.n FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::int[]) AS v(dataset_id, object_id, a, b, n)
       WHERE m.dataset_id = v.dataset_id AND m.object_id = v.object_id AND m.a = v.a AND m.b = v.b`,
      columns(moved, [...keyColumns, (m) => m.after]),
    )
  }
}

/**
 * Puts in `memory` what the run leaves of each object it inserted steps of, unless the object had no
 * stored step before the run (most objects live for a few events; one that comes back is remembered
 * from its second run on): the end of its trace (nextTail, when its tail before the run was known)
 * and the membership counts known of it, with the run's changes.
 */
function remember(
  memory: PostgresDfMemory,
  linking: DfLinking<string>,
  tails: ReadonlyMap<string, TraceTail<string>>,
  known: ReadonlyMap<string, Map<string, number>>,
  changes: readonly MembershipChange<string>[],
): void {
  const inserted = stepsByObject(linking.inserts.map((l) => l.step))
  for (const [object, steps] of inserted) {
    if (linking.newObjects.has(object)) {
      memory.delete(object)
      continue
    }
    const before = tails.get(object)
    const counts = memory.get(object)?.memberships ?? new Map<string, number>()
    for (const [k, n] of known.get(object) ?? []) counts.set(k, n)
    memory.set(object, { tail: before === undefined ? undefined : nextTail(before, steps), memberships: counts })
  }
  for (const m of changes) memory.get(m.object)?.memberships?.set(pairKey(m.a, m.b), m.after)
  memory.trim()
}

/**
 * Writes a run's directly-follows slice (log order) in the store's transaction `client`: the reads,
 * the rules of src/core/directly-follows.ts, then the steps, membership counts and aggregates. A run
 * whose steps are all stored already (a replay) reads their neighbours and writes nothing.
 * @param memory what earlier transactions left of the objects (PostgresDfMemory), updated in place with
 *   this run's writes: the caller clears it when the transaction does not commit. Without it, every
 *   object's neighbours and asked membership counts are read.
 * @throws from the rules when the stored read model contradicts itself (a membership below 0, a duration removed that was never added).
 */
export async function writeDirectlyFollows(client: pg.PoolClient, events: readonly DirectlyFollowsEvent[], memory?: PostgresDfMemory): Promise<void> {
  if (events.length === 0) return
  const steps = dfStepsOf(events)
  const tails = new Map<string, TraceTail<string>>()
  const linking = await linkRun(client, stepsByObject(steps), tails, memory)
  if (linking.inserts.length === 0) return
  const datasets = new Map(steps.map((s) => [s.object, s.dataset]))
  const datasetOf = (object: string): string => datasets.get(object) ?? ''
  const storedEventSteps = await readEventSteps(client, linking.storedTargets)
  const eventSteps = (n: DfStep<string>): EventStepRow<string>[] => storedEventSteps.get(eventKey(n.dataset, n.t, n.pos)) ?? []
  const memberships = await readMemberships(client, linking, datasetOf, memory)
  const changes = aggregateChanges(linking, (object, a, b) => memberships.get(object)?.get(pairKey(a, b)) ?? 0, eventSteps)
  const stored = await readAggregates(
    client,
    changes.deltas.map((d) => d.key),
  )
  await writeSteps(client, linking)
  await writeMemberships(client, changes.memberships, datasetOf)
  if (memory !== undefined) remember(memory, linking, tails, memberships, changes.memberships)
  // One delta per key (aggregateChanges): each aggregate is replaced by its new value, or deleted when
  // empty; an edge whose kept extremes a removal emptied is refilled from its stored steps, written above.
  const next = changes.deltas.map((d) => ({ key: d.key, agg: applyDelta(stored.get(dfKeyString(d.key)), d) }))
  for (const { key, agg } of next) for (const r of edgeRefills(key, agg)) refillAggregate(agg, r, await readRefill(client, key, r))
  const emptied = next.filter((x) => isEmptyAggregate(x.agg))
  const written = next.filter((x) => !isEmptyAggregate(x.agg))
  if (emptied.length > 0) {
    await client.query(
      `DELETE FROM ocelog.rm_df_aggregates g USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(dataset_id, object_type, a, b)
       WHERE g.dataset_id = v.dataset_id AND g.object_type = v.object_type AND g.a = v.a AND g.b = v.b`,
      columns(emptied, [(x) => x.key.dataset, (x) => x.key.ot, (x) => x.key.a, (x) => x.key.b]),
    )
  }
  if (written.length > 0) {
    await client.query(
      `INSERT INTO ocelog.rm_df_aggregates (dataset_id, object_type, a, b, events, objects, total, starts, ends, couples, durations, waiting)
       SELECT d, ot, a, b, ev, ob, tot, st, en, co, du::jsonb, wa::jsonb
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[],
         $11::text[], $12::text[]) AS v(d, ot, a, b, ev, ob, tot, st, en, co, du, wa)
       ON CONFLICT (dataset_id, object_type, a, b) DO UPDATE SET
         events = EXCLUDED.events, objects = EXCLUDED.objects, total = EXCLUDED.total, starts = EXCLUDED.starts, ends = EXCLUDED.ends,
         couples = EXCLUDED.couples, durations = EXCLUDED.durations, waiting = EXCLUDED.waiting`,
      columns(written, [
        (x) => x.key.dataset,
        (x) => x.key.ot,
        (x) => x.key.a,
        (x) => x.key.b,
        (x) => x.agg.events,
        (x) => x.agg.objects,
        (x) => x.agg.total,
        (x) => x.agg.starts,
        (x) => x.agg.ends,
        (x) => x.agg.couples,
        (x) => JSON.stringify(x.agg.durations),
        (x) => JSON.stringify(x.agg.waiting),
      ]),
    )
  }
}
