/**
 * Port: the query side of the read models (everything that reads them: `/v1/process/*`, the MCP
 * tools, `/ui/`, `ocelog export`). The projector writes through the writer port
 * (read-model-store.ts); this port only reads. Adapters: SQLite (embedded default), MongoDB
 * (production). Every method filters and pages in the engine (SQL, MongoDB aggregation): none
 * loads a whole dataset into JavaScript. Contract tests: test/contract/read-model-query.contract.ts.
 *
 * All date-times in and out are UTC ISO 8601 with milliseconds (as the read models hold them), so
 * comparing them as strings orders them in time.
 */
import type { AuditChainEntry } from '../schemas/audit.js'
import type { VariantsAfter, VariantsPage } from '../core/analysis-rows.js'
import type { ActivityObjectType, O2oTypeRelation, PerformanceActivity } from '../schemas/analysis.js'
import type { Properties } from '../schemas/api.js'
import type { EventView, ObjectResponse, ProcessMapResponse, SummaryResponse, TypeInfo } from '../schemas/process.js'
import type { DeclaredTypes } from '../schemas/read-models.js'

/** A window on event `timestamp`: `from` inclusive, `to` exclusive; either may be absent. */
export interface TimeWindow {
  from?: string
  to?: string
}

export interface ProcessMapFilter extends TimeWindow {
  /** Object types to map; absent or empty: every type with an event in the window. */
  objectTypes?: readonly string[]
}

/** A process map as an adapter answers it: the maps by object type, and the bound on its medians' relative error (0: exact). */
export type ProcessMapAnswer = Pick<ProcessMapResponse, 'object_types' | 'median_relative_error'>

export interface PerformanceFilter extends ProcessMapFilter {
  /** Slowest events per activity, 0 to SLOWEST_MAX. */
  slowest: number
}

export type { VariantsAfter, VariantsPage }

export interface VariantsFilter extends TimeWindow {
  objectType: string
  /** 1 to READ_LIMIT_MAX variants. */
  limit: number
  after?: VariantsAfter
}

export interface TypeRelations {
  activity_object_types: ActivityObjectType[]
  o2o: O2oTypeRelation[]
}

/** Where a page of events starts: after this (timestamp, position). */
export interface EventsAfter {
  timestamp: string
  position: number
}

export interface EventFilter extends TimeWindow {
  eventType?: string
  objectType?: string
  /** The object's own id (the API's `id`); with `objectType` when given. */
  objectId?: string
  /** 1 to READ_LIMIT_MAX. */
  limit: number
  after?: EventsAfter
  /**
   * Whether to count the events that match on every page (EventPage.total; default true). A reader of
   * every page (`ocelog export`) asks for no count: it scans all the matching events, once per page.
   */
  count?: boolean
}

export interface EventPage {
  /** In (timestamp, position) order, at most `limit`. */
  events: EventView[]
  /** Where the next page starts, or null when this page is the last. */
  next: EventsAfter | null
  /** Events that match the filter on every page (the filter without `after`); null when the filter set `count: false`. */
  total: number | null
}

/** An object with its whole attribute history (OCEL 2.0 object attributes with times), for `ocelog export`. */
export interface ObjectHistory {
  object_id: string
  type: string
  /** The client's id (the API's `id`). */
  id: string
  /** In log position order. */
  changes: { position: number; time: string; attributes: Properties }[]
  /**
   * Its O2O relationships (OCEL 2.0): the target's object_id, type and own id, and the qualifier
   * (null: none), by (target object_id, qualifier).
   */
  relationships: { object_id: string; type: string; id: string; qualifier: string | null }[]
}

/** An object by its type and its own id (the API's `type` and `id`). */
export interface ObjectKey {
  type: string
  id: string
}

/** Which objects a page of histories holds: after `after` in (type, id) order, at most `limit`. */
export interface ObjectHistoryFilter {
  after?: ObjectKey
  /** 1 to READ_LIMIT_MAX objects. */
  limit: number
  /** Only these objects (object_ids); absent: every object of the dataset. */
  objectIds?: readonly string[]
}

export interface ObjectHistoryPage {
  /**
   * Ordered by (type, id), each compared as UTF-8 bytes (the engines' binary order; the same as
   * JavaScript's code-unit order except between U+E000–U+FFFF and characters beyond U+FFFF), at most `limit`.
   */
  objects: ObjectHistory[]
  /** Where the next page starts, or null when this page is the last. */
  next: ObjectKey | null
}

/** An object's read model view, without the envelope (`dataset_id`, `as_of`). */
export type ObjectDetail = Omit<ObjectResponse, 'dataset_id' | 'as_of'>

/** The dataset's counts, without the envelope. */
export type DatasetCounts = Omit<SummaryResponse, 'dataset_id' | 'as_of' | 'log_position'>

export interface ReadModelQuery {
  /**
   * The log position the read models have reached: the lowest checkpoint of the projectors that
   * keep this store (0 when none has applied anything). Everything at or before it is in every
   * answer.
   */
  asOf(): Promise<number>

  summary(datasetId: string): Promise<DatasetCounts>

  /** Event types, sorted by name, with attribute names and the JSON types of their values. */
  eventTypes(datasetId: string): Promise<TypeInfo[]>

  /** Object types, sorted by name, with attribute names and the JSON types of their values. */
  objectTypes(datasetId: string): Promise<TypeInfo[]>

  /**
   * The event and object types the dataset declared (POST /v1/types; docs/read-models.md#declared_types),
   * used or not, each list by name with its attributes by name and their OCEL 2.0 types (latest
   * declaration). Empty lists for a dataset that declared none.
   */
  declaredTypes(datasetId: string): Promise<DeclaredTypes>

  /**
   * One object by (type, id), or null when the dataset has no such object.
   * @param limit the most trace events and related objects returned (READ_LIMIT_MAX); the
   *   `*_truncated` flags say when there were more.
   */
  object(datasetId: string, type: string, id: string, limit: number): Promise<ObjectDetail | null>

  /** A page of events with their E2O links, in (timestamp, position) order. */
  events(datasetId: string, filter: EventFilter): Promise<EventPage>

  /**
   * The object-centric directly-follows graph (after pm4py's OC-DFG), one entry per object type
   * with at least one event in the window, sorted by type name (definitions: docs/process-map.md).
   * Read from the directly-follows read model: the all-time map from its aggregates (a number of
   * rows in proportion to the map), a window from the steps in it.
   */
  processMap(datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer>

  /**
   * Object-centric performance per activity (after OPerA and ocpa's event-object-graph measures):
   * sojourn, flow and synchronization of the events in the window, pooling, lagging and readying
   * per object type, the delaying object types and the slowest events; predecessors come from the
   * whole traces of the chosen types' objects. Sorted by activity. Definitions: docs/analysis.md.
   */
  performance(datasetId: string, filter: PerformanceFilter): Promise<PerformanceActivity[]>

  /**
   * A page of the trace variants of one object type (pm4py's flattened variants) over the objects'
   * events in the window, ordered as compareVariants (src/core/analysis-rows.ts). Definitions: docs/analysis.md.
   */
  variants(datasetId: string, filter: VariantsFilter): Promise<VariantsPage>

  /**
   * Activity × object type (pm4py's ET-OT) over the events in the window, and the O2O relationships of
   * the whole dataset grouped by (source type, qualifier, target type). Definitions: docs/analysis.md.
   */
  typeRelations(datasetId: string, window: TimeWindow): Promise<TypeRelations>

  /**
   * A page of the dataset's objects, each with its attribute history and O2O relationships, ordered
   * by (type, id) as UTF-8 bytes, starting after `page.after` (for `ocelog export`, which pages
   * through every object in the order it writes them).
   */
  objectHistories(datasetId: string, page: ObjectHistoryFilter): Promise<ObjectHistoryPage>

  /**
   * The own ids (the API's `id`) that more than one object of the dataset has, i.e. that several
   * object types use, sorted as UTF-8 bytes (for `ocelog export`, which writes such objects as
   * `type/id`). Grouped in the engine.
   */
  sharedObjectIds(datasetId: string): Promise<string[]>

  /** Every object of the dataset whose own id is one of `ids` (any type), by (type, id): object_id, type and id. */
  objectsWithIds(datasetId: string, ids: readonly string[]): Promise<{ object_id: string; type: string; id: string }[]>

  /**
   * Runs `fn`, whose reads through this port should see the read models at one moment (one as_of),
   * whatever the projector applies meanwhile. SQLite: one read transaction on this connection, so
   * every read in `fn` sees the snapshot of its first read (for a connection that nothing writes
   * through while `fn` runs, as in `ocelog export`). MongoDB: runs `fn` as it is (each read sees the
   * data as it is then; an export reads events before objects, so every object an event names is
   * there). Nested calls run inside the outer one.
   */
  consistentRead<T>(fn: () => Promise<T>): Promise<T>

  /**
   * A page of the dataset's audit chain (README § Operations, digests): entries after log position
   * `after` (exclusive; null: from the first record), in log order, at most `limit`.
   */
  auditChain(datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]>

  /** The dataset's last audit-chain entry at or before log position `position` (null: its last), or null when it has none. */
  auditChainAt(datasetId: string, position: number | null): Promise<AuditChainEntry | null>

  close(): Promise<void>
}
