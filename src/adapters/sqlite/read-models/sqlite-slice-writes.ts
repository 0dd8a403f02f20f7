/**
 * The SQLite store's writes, one function per projection's slice (README § Read models: the
 * embedded layout), and the clearing of each projection's tables: what adding a read model adds
 * here. Every write follows the replay rule (src/core/read-model-changes.ts) and runs inside the
 * store's one transaction per batch (sqlite-read-model-store.ts), after the objects' identities.
 */
import {
  countNewObjects,
  type NamedObject,
  objectChangeToApply,
  type ProjectionName,
  type SliceBatch,
  type TypeChange,
  type TypeChanges,
  typeChangeToApply,
} from '../../../core/read-model-changes.js'
import { mergeProperties } from '../../../core/merge.js'
import type { Properties } from '../../../schemas/api.js'
import type { EventObjectRow } from '../../../schemas/read-models.js'
import type Database from 'better-sqlite3'
import type { SqliteDatabase } from '../log/database.js'
import { MultiRowStatement, rowValues, type SqlValue } from './multi-row.js'
import { type AuditChainStatements, prepareAuditChainStatements, writeAuditChain } from './sqlite-audit-chain.js'
import { clearDirectlyFollows, type DfMemoryContext, type DfStatements, prepareDfStatements, writeDirectlyFollows } from './sqlite-df-writes.js'
import { clearDeclaredTypes, type DeclaredTypesStatements, prepareDeclaredTypesStatements, writeDeclaredTypes } from './sqlite-declared-types.js'
import { epochMsOf, lastE2oSeq, storedId, storedQualifier } from './read-models-database.js'
import { SQLITE } from '../../sql/dialect.js'
import { typesSql } from '../../sql/types-sql.js'

function upsertTypesStatement(db: SqliteDatabase, table: 'rm_event_types' | 'rm_object_types') {
  return db.prepare(
    `INSERT INTO ${table} (dataset_id, name, source, first_seen_at, last_seen_at, count, position)
     VALUES (@datasetId, @name, 'public_api', @firstSeenAt, @lastSeenAt, @added, @maxPosition)
     ON CONFLICT (dataset_id, name) DO UPDATE SET
       first_seen_at = min(first_seen_at, excluded.first_seen_at),
       last_seen_at = max(last_seen_at, excluded.last_seen_at),
       count = count + excluded.count,
       position = excluded.position
     WHERE ${table}.position < @minPosition`,
  )
}

interface TypeStatements {
  upsert: Database.Statement
  position: Database.Statement<[string, string], { position: number }>
}

/** The values of one `rm_event_objects` row (e2oRows). */
const E2O_COLUMNS = 4

/** The values of one `rm_events` row (writeEvents; putEvents' columns). */
const EVENT_COLUMNS = 11

/** The statements of the slice writes, prepared once per store: set-based (MultiRowStatement) where a run writes many rows. */
export interface SliceStatements {
  changeObjects: MultiRowStatement
  touchObjects: MultiRowStatement
  putChanges: MultiRowStatement
  putEvents: MultiRowStatement
  putE2O: MultiRowStatement
  putO2O: MultiRowStatement
  eventsBetween: Database.Statement<[number, number], number>
  eventTypes: TypeStatements
  objectTypes: TypeStatements
  auditChain: AuditChainStatements
  directlyFollows: DfStatements
  declaredTypes: DeclaredTypesStatements
}

/**
 * Prepares SliceStatements on `db` (once per store; the tables are never dropped under them but by
 * `reset`), each at its first use: a runner's file holds only its own projections' tables
 * (read-models-database.ts), so a statement of another runner's table is never prepared on it.
 */
export function prepareSliceStatements(db: SqliteDatabase): SliceStatements {
  const typeStatements = (table: 'rm_event_types' | 'rm_object_types'): TypeStatements => ({
    upsert: upsertTypesStatement(db, table),
    position: db.prepare<[string, string], { position: number }>(`SELECT position FROM ${table} WHERE dataset_id = ? AND name = ?`),
  })
  return lazily<SliceStatements>({
    // Objects whose attributes changed: attributes, last-seen time and position.
    changeObjects: () =>
      new MultiRowStatement(
        db,
        'WITH v (rid, properties, updated_at, position) AS (VALUES',
        4,
        ') UPDATE rm_objects SET properties = v.properties, updated_at = v.updated_at, position = v.position FROM v WHERE rm_objects.rid = v.rid',
      ),
    // Objects only named again: their last-seen time and position, without reading or writing their attributes.
    touchObjects: () =>
      new MultiRowStatement(
        db,
        'WITH v (rid, updated_at, position) AS (VALUES',
        3,
        ') UPDATE rm_objects SET updated_at = v.updated_at, position = v.position FROM v WHERE rm_objects.rid = v.rid',
      ),
    putChanges: () => new MultiRowStatement(db, 'INSERT OR IGNORE INTO rm_object_changes (rid, position, time, attributes) VALUES', 4),
    putEvents: () =>
      new MultiRowStatement(
        db,
        'INSERT OR IGNORE INTO rm_events (position, did, event_id, event_type_id, time, end_time, properties, objects_count, e2o, e2o_first, received_at) VALUES',
        EVENT_COLUMNS,
      ),
    // Appended (each row's seq is the next one), and merged by object later (read-models-database.ts).
    putE2O: () => new MultiRowStatement(db, 'INSERT INTO rm_event_objects (seq, position, rid, qualifier_id) VALUES', E2O_COLUMNS, '', 200),
    putO2O: () => new MultiRowStatement(db, 'INSERT OR IGNORE INTO rm_object_relationships (rid, target_rid, qualifier_id, time, position) VALUES', 5),
    eventsBetween: () => db.prepare<[number, number], number>('SELECT position FROM rm_events WHERE position BETWEEN ? AND ?').pluck(),
    eventTypes: () => typeStatements('rm_event_types'),
    objectTypes: () => typeStatements('rm_object_types'),
    auditChain: () => prepareAuditChainStatements(db),
    directlyFollows: () => prepareDfStatements(db),
    declaredTypes: () => prepareDeclaredTypesStatements(db),
  })
}

/** An object whose every property is made by its function at its first read, then kept (statements of tables a file may lack). */
export function lazily<T extends object>(make: { readonly [K in keyof T]: () => T[K] }): T {
  const out = {} as T
  for (const key of Object.keys(make) as (keyof T)[]) {
    Object.defineProperty(out, key, {
      enumerable: true,
      get: () => {
        const value = make[key]()
        Object.defineProperty(out, key, { value, enumerable: true })
        return value
      },
      configurable: true,
    })
  }
  return out
}

/** An object's row as the batch's identity step left it (sqlite-read-model-store.ts). */
export interface StoredObject {
  rid: number
  /** Stored attributes (JSON). */
  properties: string
  /** The objects projection's last applied position for the row (0: not applied yet). */
  position: number
  /** Position of the first record that named the object. */
  firstPosition: number
}

/** What every slice write gets beside its slice. */
export interface SliceWriteContext {
  db: SqliteDatabase
  st: SliceStatements
  /** The dataset's row id (rm_datasets), made when missing. */
  didOf(datasetId: string): number
  /** A name's id (rm_names: an event type's, a qualifier's), made when missing. */
  nameId(name: string): number
  /** The row id of an object the batch names. @throws when it has no identity row. */
  ridOf(objectId: string): number
  /** The stored rows of the objects the batch names, by object id: the objects write updates those it writes. */
  objects: ReadonlyMap<string, StoredObject>
  /** The objects the batch names (ChangeBatch.objects). */
  named: ReadonlyMap<string, NamedObject>
  /** The directly-follows write's memory of objects, and the first row id the batch made (DfMemoryContext). */
  dfMemory?: DfMemoryContext
}

/** Applies one type change by the replay rule (typeChangeToApply), as a guarded upsert. */
function applyTypeChanges(statements: SliceStatements['eventTypes'], changes: TypeChanges): void {
  for (const t of changes.values()) {
    const change: TypeChange | null = typeChangeToApply(t, statements.position.get(t.datasetId, t.name)?.position)
    if (change !== null) statements.upsert.run(change)
  }
}

function writeEventTypes(ctx: SliceWriteContext, part: SliceBatch<'event_types'>): void {
  applyTypeChanges(ctx.st.eventTypes, part.slice)
}

/** Object types, with their counts of new objects (countNewObjects: those whose identity's first position is after the object types' checkpoint). */
function writeObjectTypes(ctx: SliceWriteContext, part: SliceBatch<'object_types'>): void {
  countNewObjects(part.slice, ctx.named.values(), part.expected, (o) => ctx.objects.get(o.objectId)?.firstPosition)
  applyTypeChanges(ctx.st.objectTypes, part.slice)
}

/**
 * Objects by the replay rule (objectChangeToApply) over the rows the identity step read or made:
 * attributes are read and merged only for objects whose attributes changed; rows only named again
 * get their last-seen time and position. Then the run's attribute history (`rm_object_changes`).
 * Each row it writes is updated in place (`ctx.objects`' values), as the store's identity cache holds them.
 */
function writeObjects(ctx: SliceWriteContext, { slice }: SliceBatch<'objects'>): void {
  const change = ctx.st.changeObjects.rows()
  const touch = ctx.st.touchObjects.rows()
  for (const o of slice.objects.values()) {
    const row = ctx.objects.get(o.objectId)
    if (row === undefined) throw new Error(`read model row names object ${o.objectId}, which has no row in rm_objects`)
    const apply = objectChangeToApply(o, row.position)
    if (apply === null) continue
    if (apply.deltas.length > 0) {
      row.properties = JSON.stringify(mergeProperties(JSON.parse(row.properties) as Properties, apply.properties))
      change.add(row.rid)
      change.add(row.properties)
      change.add(epochMsOf(o.lastSeenAt))
      change.add(o.maxPosition)
    } else {
      touch.add(row.rid)
      touch.add(epochMsOf(o.lastSeenAt))
      touch.add(o.maxPosition)
    }
    row.position = o.maxPosition
  }
  change.end()
  touch.end()
  const changes = ctx.st.putChanges.rows()
  for (const c of slice.changes) {
    changes.add(ctx.ridOf(c.object_id))
    changes.add(c.position)
    changes.add(epochMsOf(c.time))
    changes.add(JSON.stringify(c.attributes))
  }
  changes.end()
}

/**
 * A run's E2O rows as `rm_event_objects` keeps them, `seq, position, rid, qualifier_id` each, one
 * row after another in one array (MultiRowStatement's rows): one per distinct (event, object,
 * qualifier), in log order (an event that names an object twice with one qualifier gives one row),
 * numbered from `firstSeq`, the qualifier as its id in `rm_names` (`nameId`). An event's rows are
 * consecutive; its time is its `rm_events` row's.
 */
function e2oRows(links: readonly EventObjectRow[], ctx: Pick<SliceWriteContext, 'ridOf' | 'nameId'>, firstSeq: number): SqlValue[] {
  const rows = rowValues(links.length, E2O_COLUMNS)
  let n = 0
  // The event's rows start here; a pair it names twice is found among them (an event names at most
  // 50 objects: a scan of its own rows, without a key string or a set per event).
  let eventStart = 0
  let position = -1
  for (const l of links) {
    if (l.position !== position) {
      position = l.position
      eventStart = n
    }
    const rid = ctx.ridOf(l.object_id)
    const qualifier = ctx.nameId(storedQualifier(l.qualifier))
    if (!hasPair(rows, eventStart, n, rid, qualifier)) {
      rows[n] = firstSeq + n / E2O_COLUMNS
      rows[n + 1] = position
      rows[n + 2] = rid
      rows[n + 3] = qualifier
      n += E2O_COLUMNS
    }
  }
  rows.length = n
  return rows
}

/** Whether the E2O rows of `rows` (e2oRows) from value index `from` to `to` hold the pair (`rid`, `qualifier`). */
function hasPair(rows: readonly SqlValue[], from: number, to: number, rid: number, qualifier: number): boolean {
  for (let i = from; i < to; i += E2O_COLUMNS) {
    if (rows[i + 2] === rid && rows[i + 3] === qualifier) return true
  }
  return false
}

/** The positions of a run's events that rm_events already holds (one read of the run's position range, usually empty). */
function writtenEvents(st: SliceStatements, events: readonly { position: number }[]): Set<number> {
  if (events.length === 0) return new Set()
  let low = Number.POSITIVE_INFINITY
  let high = Number.NEGATIVE_INFINITY
  for (const e of events) {
    low = Math.min(low, e.position)
    high = Math.max(high, e.position)
  }
  return new Set(st.eventsBetween.all(low, high))
}

/** Per event position, of rows from e2oRows: the seq of its first row and how many it has. */
function e2oSpans(rows: readonly SqlValue[]): Map<number, { first: number; count: number }> {
  const spans = new Map<number, { first: number; count: number }>()
  for (let i = 0; i < rows.length; i += E2O_COLUMNS) {
    const seq = Number(rows[i])
    const position = Number(rows[i + 1])
    const span = spans.get(position)
    if (span === undefined) spans.set(position, { first: seq, count: 1 })
    else span.count += 1
  }
  return spans
}

/** Events and their E2O rows (each event names the range of its rows). */
function writeEvents(ctx: SliceWriteContext, { slice }: SliceBatch<'events'>): void {
  const { st, db } = ctx
  // Events another projector has written (the replay rule: every write is idempotent) keep their
  // rows: rm_event_objects has no key that would ignore a second copy of an event's E2O rows.
  const written = writtenEvents(st, slice.events)
  const events = written.size === 0 ? slice.events : slice.events.filter((e) => !written.has(e.position))
  const links = written.size === 0 ? slice.eventObjects : slice.eventObjects.filter((l) => !written.has(l.position))
  // Read inside the write transaction: no other writer can take the same seqs.
  const firstSeq = lastE2oSeq(db) + 1
  const e2oRowsOfRun = e2oRows(links, ctx, firstSeq)
  const e2o = e2oSpans(e2oRowsOfRun)
  const rows = st.putEvents.rows()
  for (const e of events) {
    const span = e2o.get(e.position)
    rows.add(e.position)
    rows.add(ctx.didOf(e.dataset_id))
    rows.add(storedId(e.event_id))
    rows.add(ctx.nameId(e.event_type))
    rows.add(epochMsOf(e.timestamp))
    rows.add(e.end_timestamp === null ? null : epochMsOf(e.end_timestamp))
    rows.add(JSON.stringify(e.properties))
    rows.add(e.objects_count)
    rows.add(span?.count ?? 0)
    // An event without rows (none in practice: every event names an object) gets an empty range.
    rows.add(span?.first ?? firstSeq + e2oRowsOfRun.length / E2O_COLUMNS)
    rows.add(epochMsOf(e.received_at))
  }
  rows.end()
  st.putE2O.run(e2oRowsOfRun)
}

function writeObjectRelationships(ctx: SliceWriteContext, { slice }: SliceBatch<'object_relationships'>): void {
  const rows = ctx.st.putO2O.rows()
  for (const r of slice) {
    rows.add(ctx.ridOf(r.object_id))
    rows.add(ctx.ridOf(r.target_object_id))
    rows.add(ctx.nameId(storedQualifier(r.qualifier)))
    rows.add(epochMsOf(r.time))
    rows.add(r.position)
  }
  rows.end()
}

/** The write of each projection's slice (with its checkpoint's move, SliceBatch), by name. */
export const SLICE_WRITES: { readonly [K in ProjectionName]: (ctx: SliceWriteContext, part: SliceBatch<K>) => void } = {
  event_types: writeEventTypes,
  object_types: writeObjectTypes,
  objects: writeObjects,
  events: writeEvents,
  object_relationships: writeObjectRelationships,
  audit_chain: (ctx, { slice }) => writeAuditChain(ctx.st.auditChain, slice, (datasetId) => ctx.didOf(datasetId)),
  directly_follows: (ctx, { slice }) => writeDirectlyFollows(ctx.st.directlyFollows, slice, ctx.didOf, ctx.ridOf, ctx.dfMemory),
  declared_types: (ctx, { slice }) => writeDeclaredTypes(ctx.st.declaredTypes, slice),
}

/**
 * How each projection's read models are emptied for its rebuild alone (clearProjection): its own
 * tables, and nothing the other projections hold. The objects projection keeps each object's
 * identity (its row id, which other read models hold) and clears the rest of the row.
 */
export const SLICE_CLEARS: { readonly [K in ProjectionName]: (db: SqliteDatabase) => void } = {
  event_types: (db) => db.exec(typesSql(SQLITE, 'rm_event_types').clear),
  object_types: (db) => db.exec(typesSql(SQLITE, 'rm_object_types').clear),
  objects: (db) => db.exec(`UPDATE rm_objects SET properties = '{}', updated_at = created_at, position = 0; DELETE FROM rm_object_changes`),
  events: (db) => db.exec('DELETE FROM rm_events; DELETE FROM rm_event_objects'),
  object_relationships: (db) => db.exec('DELETE FROM rm_object_relationships'),
  audit_chain: (db) => db.exec('DELETE FROM rm_audit_chain; DELETE FROM rm_audit_heads'),
  directly_follows: clearDirectlyFollows,
  declared_types: clearDeclaredTypes,
}
