/**
 * TypeBox schemas of the object-centric analysis reads (`GET /v1/process/performance`,
 * `/v1/process/variants`, `/v1/process/type-relations`, the MCP tools `performance`, `variants`,
 * `type_relations`): the single source of their types and of their OpenAPI and MCP schemas. Scope
 * `process:read`. Definitions and example answers: docs/analysis.md.
 *
 * Times in statistics are seconds (numbers, millisecond precision), as in the process map.
 */
import { Type, type Static } from 'typebox'
import { BudgetFields, BudgetTruncated, MaxBytesParam, ProcessMapQuery, READ_LIMIT_MAX, Stats } from './process.js'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])
const DatasetId = Type.String({ description: 'The dataset of the API key' })
const AsOf = Type.Integer({ minimum: 0, description: 'Log position the read models had reached (0: nothing applied yet)' })

/** Largest `slowest` of `GET /v1/process/performance`, and its default. */
export const SLOWEST_MAX = 100
export const SLOWEST_DEFAULT = 5
/** Default page of `GET /v1/process/variants`. */
export const VARIANTS_LIMIT_DEFAULT = 100
/** Example object ids per variant. */
export const VARIANT_EXAMPLES = 3

/** An object by its type and its own id (the API's `type` and `id`; resolves through `get_object`). */
export const ObjectRef = Type.Object({ type: Type.String(), id: Type.String() })
export type ObjectRef = Static<typeof ObjectRef>

/** Measures of one object type among the inputs of an activity's events (OPerA's pooling, lagging, readying). */
export const PerformanceObjectType = Type.Object({
  object_type: Type.String(),
  pooling: Nullable(Stats),
  lagging: Nullable(Stats),
  readying: Nullable(Stats),
  delaying: Type.Integer({ minimum: 0, description: 'Events where an object of this type held the delaying object' }),
})
export type PerformanceObjectType = Static<typeof PerformanceObjectType>

/** One of the events with the largest sojourn of an activity. */
export const SlowEvent = Type.Object({
  event_id: Type.String(),
  timestamp: Type.String({ description: 'UTC ISO 8601 with milliseconds' }),
  sojourn: Type.Number({ description: 'Seconds' }),
  delaying_object: ObjectRef,
})
export type SlowEvent = Static<typeof SlowEvent>

/** Object-centric performance of one activity (after OPerA and ocpa's event-object-graph measures). */
export const PerformanceActivity = Type.Object({
  activity: Type.String(),
  events: Type.Integer({ minimum: 0, description: 'Events of the activity in the window linked to an object of the chosen types' }),
  events_with_predecessors: Type.Integer({ minimum: 0, description: 'Those events with at least one predecessor (the measured ones)' }),
  sojourn: Nullable(Stats),
  flow: Nullable(Stats),
  synchronization: Nullable(Stats),
  object_types: Type.Array(PerformanceObjectType, { description: 'By object type name' }),
  slowest: Type.Array(SlowEvent, { description: 'Largest sojourn first; ties: the later log position first' }),
})
export type PerformanceActivity = Static<typeof PerformanceActivity>

/** `GET /v1/process/performance` answer; MCP `performance`. `activities` sorted by name. */
export const PerformanceResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  activities: Type.Array(PerformanceActivity),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type PerformanceResponse = Static<typeof PerformanceResponse>

/** Query of `GET /v1/process/performance`. */
export const PerformanceQuery = Type.Object(
  {
    object_type: ProcessMapQuery.properties.object_type,
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    slowest: Type.Optional(Type.String({ description: `0 to ${String(SLOWEST_MAX)} slowest events per activity, default ${String(SLOWEST_DEFAULT)}` })),
    max_bytes: MaxBytesParam,
  },
  { additionalProperties: false },
)
export type PerformanceQuery = Static<typeof PerformanceQuery>

/** One trace variant of an object type (pm4py's flattened variants). */
export const Variant = Type.Object({
  activities: Type.Array(Type.String(), { description: 'The activities of an object’s events in (timestamp, position) order' }),
  objects: Type.Integer({ minimum: 1 }),
  share: Type.Number({ description: 'objects / the answer’s objects' }),
  duration: Stats,
  examples: Type.Array(Type.String(), { description: `Up to ${String(VARIANT_EXAMPLES)} object ids, the first in code-unit order` }),
})
export type Variant = Static<typeof Variant>

/** `GET /v1/process/variants` answer; MCP `variants`. */
export const VariantsResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  object_type: Type.String(),
  objects: Type.Integer({ minimum: 0, description: 'Objects of the type with at least one event in the window' }),
  total: Type.Integer({ minimum: 0, description: 'Distinct variants' }),
  variants: Type.Array(Variant, { description: 'Most objects first, then by activity sequence (code-unit order, a prefix first)' }),
  truncated: Type.Boolean({ description: 'Whether variants follow this page' }),
  next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page' })),
  ...BudgetFields,
})
export type VariantsResponse = Static<typeof VariantsResponse>

/** Query of `GET /v1/process/variants`. */
export const VariantsQuery = Type.Object(
  {
    object_type: Type.String({ description: 'The object type whose traces are grouped' }),
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    limit: Type.Optional(Type.String({ description: `1 to ${String(READ_LIMIT_MAX)}, default ${String(VARIANTS_LIMIT_DEFAULT)}` })),
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })),
    max_bytes: MaxBytesParam,
  },
  { additionalProperties: false },
)
export type VariantsQuery = Static<typeof VariantsQuery>

/** Activity × object type (pm4py's ET-OT, rust4pm's E2O counts). */
export const ActivityObjectType = Type.Object({
  activity: Type.String(),
  object_type: Type.String(),
  events: Type.Integer({ minimum: 1, description: 'Events of the activity linked to at least one object of the type' }),
  e2o: Type.Integer({ minimum: 1, description: 'E2O links (event, object, qualifier) between them' }),
  objects_per_event: Type.Object(
    { min: Type.Integer(), mean: Type.Number(), max: Type.Integer() },
    { description: 'Distinct objects of the type per such event' },
  ),
})
export type ActivityObjectType = Static<typeof ActivityObjectType>

/** O2O relationships grouped by (source type, qualifier, target type). */
export const O2oTypeRelation = Type.Object({
  source_type: Type.String(),
  qualifier: Nullable(Type.String()),
  target_type: Type.String(),
  relationships: Type.Integer({ minimum: 1 }),
})
export type O2oTypeRelation = Static<typeof O2oTypeRelation>

/** `GET /v1/process/type-relations` answer; MCP `type_relations`. */
export const TypeRelationsResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  activity_object_types: Type.Array(ActivityObjectType, { description: 'By activity, then object type' }),
  o2o: Type.Array(O2oTypeRelation, { description: 'By source type, qualifier (none first), target type; every O2O relationship of the dataset' }),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type TypeRelationsResponse = Static<typeof TypeRelationsResponse>

/** Query of `GET /v1/process/type-relations`. */
export const TypeRelationsQuery = Type.Object(
  { from: ProcessMapQuery.properties.from, to: ProcessMapQuery.properties.to, max_bytes: MaxBytesParam },
  { additionalProperties: false },
)
export type TypeRelationsQuery = Static<typeof TypeRelationsQuery>

/** One figure in window a and window b, and b − a (null where either is absent). */
export const Pair = Type.Object({ a: Nullable(Type.Number()), b: Nullable(Type.Number()), diff: Nullable(Type.Number()) })
export type Pair = Static<typeof Pair>

/** Per (object type, activity) of the process map: `events` and the `run_time` median (seconds). */
export const CompareMapActivity = Type.Object({ object_type: Type.String(), activity: Type.String(), events: Pair, run_time_median: Pair })
export type CompareMapActivity = Static<typeof CompareMapActivity>

/** Per (object type, edge) of the process map: `total`, and the `elapsed` and `waiting` medians (seconds). */
export const CompareMapEdge = Type.Object({
  object_type: Type.String(),
  source: Type.String(),
  target: Type.String(),
  total: Pair,
  elapsed_median: Pair,
  waiting_median: Pair,
})
export type CompareMapEdge = Static<typeof CompareMapEdge>

/** Per activity of the performance read: the `sojourn` and `synchronization` medians (seconds). */
export const ComparePerformance = Type.Object({ activity: Type.String(), sojourn_median: Pair, synchronization_median: Pair })
export type ComparePerformance = Static<typeof ComparePerformance>

/** One of the largest relative changes. */
export const Highlight = Type.Object({
  what: Type.String({ description: 'What changed, e.g. "order: Create → Pay, elapsed_median"' }),
  a: Type.Number(),
  b: Type.Number(),
  diff: Type.Number(),
  relative: Type.Number({ description: '(b − a) / a' }),
})
export type Highlight = Static<typeof Highlight>

/** `GET /v1/process/compare` answer; MCP `compare`. */
export const CompareResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  a: Type.Object({ from: Nullable(Type.String()), to: Nullable(Type.String()) }),
  b: Type.Object({ from: Nullable(Type.String()), to: Nullable(Type.String()) }),
  map_activities: Type.Array(CompareMapActivity, { description: 'By object type, then activity' }),
  map_edges: Type.Array(CompareMapEdge, { description: 'By object type, source, target' }),
  edges_left_out: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Only with max_edges: how many edges were left out (per object type, the least frequent in both windows)' }),
  ),
  performance: Type.Array(ComparePerformance, { description: 'By activity' }),
  highlights: Type.Array(Highlight, { description: 'The largest relative changes (figures present and non-zero in a), largest first, at most 10' }),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type CompareResponse = Static<typeof CompareResponse>

const WindowBound = (which: string) => Type.Optional(Type.String({ description: `ISO 8601 date-time with Z or an offset; ${which} (absent: open)` }))

/** Query of `GET /v1/process/compare`. */
export const CompareQuery = Type.Object(
  {
    object_type: ProcessMapQuery.properties.object_type,
    a_from: WindowBound('window a, events at or after it'),
    a_to: WindowBound('window a, events before it'),
    b_from: WindowBound('window b, events at or after it'),
    b_to: WindowBound('window b, events before it'),
    max_edges: ProcessMapQuery.properties.max_edges,
    max_bytes: MaxBytesParam,
  },
  { additionalProperties: false },
)
export type CompareQuery = Static<typeof CompareQuery>
