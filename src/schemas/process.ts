/**
 * TypeBox schemas of the read side (`/v1/process/*`, the MCP tools, `/ui/`): the single source of
 * their types and of their OpenAPI and MCP input schemas. Scope `process:read`
 * (docs/api.md#authentication-and-scopes). Every answer carries `as_of`: the log position that the read models
 * had reached when the answer was computed.
 *
 * Times in statistics are seconds (numbers, millisecond precision). Date-times are UTC ISO 8601
 * strings with milliseconds.
 */
import { Type, type Static } from 'typebox'
import { Properties } from './api.js'

/** Largest page of events, and the cap on every list a read answer holds. */
export const READ_LIMIT_MAX = 1000
/** Largest `max_edges` of the process map. */
export const MAX_EDGES_LIMIT = 10_000
/** Default page of `GET /v1/process/events`. */
export const READ_LIMIT_DEFAULT = 100

const DateTimeText = Type.String({ description: 'UTC ISO 8601 with milliseconds' })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

/** Largest byte budget of a read answer (`max_bytes`), and the smallest. */
export const ANSWER_BYTES_MAX = 1024 * 1024
export const ANSWER_BYTES_MIN = 1000
/** The byte budget of an MCP tool answer unless `max_bytes` says otherwise (HTTP: none unless asked). */
export const ANSWER_BYTES_DEFAULT = 100_000

/**
 * What an answer says of its byte budget (docs/analysis.md#answers-that-fit-an-agents-context):
 * MCP tools always, HTTP reads when `max_bytes` is given.
 */
export const BudgetFields = {
  approx_tokens: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'About how many tokens the answer’s JSON takes: its characters / 4, rounded up (MCP: always; HTTP: with max_bytes)',
    }),
  ),
}
/** `truncated` of an answer that is not a page: whether it was cut to its byte budget. */
export const BudgetTruncated = Type.Optional(
  Type.Boolean({ description: 'True when lists were cut to fit the byte budget (MCP: always given; HTTP: with max_bytes)' }),
)
/** The `max_bytes` query parameter of every read. */
export const MaxBytesParam = Type.Optional(
  Type.String({
    description: `${String(ANSWER_BYTES_MIN)} to ${String(ANSWER_BYTES_MAX)}: cut the answer's lists to fit this many bytes of JSON, with truncated and approx_tokens (default: no cut)`,
  }),
)

const DatasetId = Type.String({ description: 'The dataset of the API key' })
const AsOf = Type.Integer({ minimum: 0, description: 'Log position the read models had reached (0: nothing applied yet)' })

/** `{count, mean, median, min, max, sum}` in seconds; the median of an even count is the mean of the two middle values. */
export const Stats = Type.Object(
  {
    count: Type.Integer({ minimum: 0 }),
    mean: Type.Number(),
    median: Type.Number(),
    min: Type.Number(),
    max: Type.Number(),
    sum: Type.Number(),
  },
  { description: 'Statistics of durations in seconds (millisecond precision)' },
)
export type Stats = Static<typeof Stats>

/** One activity (event type) of an object type's directly-follows graph. */
export const MapActivity = Type.Object({
  activity: Type.String(),
  events: Type.Integer({ description: 'Distinct events of this type linked to at least one object of the type' }),
  objects: Type.Integer({ description: 'Distinct objects of the type in those events' }),
  total: Type.Integer({ description: '(event, object) pairs' }),
  run_time: Nullable(Stats),
})
export type MapActivity = Static<typeof MapActivity>

/** One directly-follows edge `source → target`. */
export const MapEdge = Type.Object({
  source: Type.String(),
  target: Type.String(),
  total: Type.Integer({ description: 'Occurrences: consecutive event pairs in one object’s ordered events' }),
  objects: Type.Integer({ description: 'Distinct objects with an occurrence' }),
  event_couples: Type.Integer({ description: 'Distinct (event, next event) pairs' }),
  elapsed: Stats,
  waiting: Nullable(Stats),
})
export type MapEdge = Static<typeof MapEdge>

export const MapEndActivity = Type.Object({ activity: Type.String(), objects: Type.Integer() })
export type MapEndActivity = Static<typeof MapEndActivity>

/** The directly-follows graph of one object type (after pm4py's OC-DFG). Lists are sorted by name (edges by source, then target). */
export const ObjectTypeMap = Type.Object({
  object_type: Type.String(),
  objects: Type.Integer({ description: 'Objects of the type with at least one event in the window' }),
  activities: Type.Array(MapActivity),
  edges: Type.Array(MapEdge),
  edges_left_out: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Only with max_edges: how many of the type’s edges were left out (the least frequent)' }),
  ),
  start_activities: Type.Array(MapEndActivity),
  end_activities: Type.Array(MapEndActivity),
})
export type ObjectTypeMap = Static<typeof ObjectTypeMap>

/** `GET /v1/process/map` answer; MCP `process_map`. `object_types` sorted by name. */
export const ProcessMapResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  object_types: Type.Array(ObjectTypeMap),
  median_relative_error: Type.Number({
    minimum: 0,
    description:
      'The bound on the relative error of every median in the answer: 0 when they are exact; the all-time map reads medians of more than 64 ' +
      'durations from a DDSketch of this relative accuracy (docs/process-map.md#medians-of-the-all-time-map). Counts, sums, min and max are exact.',
  }),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type ProcessMapResponse = Static<typeof ProcessMapResponse>

/** `GET /v1/process/summary` answer; MCP `dataset_summary`. */
export const SummaryResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  log_position: Nullable(Type.Integer({ description: 'Position of the last record of the dataset’s stream in the log' })),
  events: Type.Integer(),
  objects: Type.Integer(),
  event_types: Type.Integer(),
  object_types: Type.Integer(),
  e2o: Type.Integer({ description: 'E2O links' }),
  first_event_time: Nullable(DateTimeText),
  last_event_time: Nullable(DateTimeText),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type SummaryResponse = Static<typeof SummaryResponse>

/** An attribute name seen on a type, with the JSON types of its values. */
export const AttributeInfo = Type.Object({
  name: Type.String(),
  types: Type.Array(
    Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('object'), Type.Literal('array'), Type.Literal('null')]),
  ),
})
export type AttributeInfo = Static<typeof AttributeInfo>

/** An event type or object type. `count`: events of the type, or distinct objects of the type. */
export const TypeInfo = Type.Object({
  name: Type.String(),
  source: Type.Literal('public_api'),
  count: Type.Integer(),
  first_seen_at: DateTimeText,
  last_seen_at: DateTimeText,
  attributes: Type.Array(AttributeInfo),
})
export type TypeInfo = Static<typeof TypeInfo>

/** `GET /v1/process/event-types`; MCP `list_event_types`. Sorted by name. */
/** `total`, `truncated` and `next_cursor` of a list that HTTP gives whole (MCP tools page it; README "MCP tools"). */
const WholeList = {
  total: Type.Integer({ minimum: 0, description: 'Items in the whole list' }),
  truncated: Type.Boolean({ description: 'True when items follow this page (HTTP: never; MCP: pass next_cursor as cursor)' }),
  next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last' })),
  ...BudgetFields,
}

export const EventTypesResponse = Type.Object({ dataset_id: DatasetId, as_of: AsOf, event_types: Type.Array(TypeInfo), ...WholeList })
export type EventTypesResponse = Static<typeof EventTypesResponse>

/** `GET /v1/process/object-types`; MCP `list_object_types`. Sorted by name. */
export const ObjectTypesResponse = Type.Object({ dataset_id: DatasetId, as_of: AsOf, object_types: Type.Array(TypeInfo), ...WholeList })
export type ObjectTypesResponse = Static<typeof ObjectTypesResponse>

/** One E2O link of an event. `qualifier` is null when none was sent. */
export const EventObjectLink = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  id: Type.String(),
  qualifier: Nullable(Type.String()),
})
export type EventObjectLink = Static<typeof EventObjectLink>

/** One event with its E2O links. */
export const EventView = Type.Object({
  event_id: Type.String({ format: 'uuid' }),
  event_type: Type.String(),
  timestamp: DateTimeText,
  end_timestamp: Nullable(DateTimeText),
  properties: Properties,
  position: Type.Integer({ description: 'Log position of the record' }),
  objects: Type.Array(EventObjectLink),
})
export type EventView = Static<typeof EventView>

/** `GET /v1/process/events`; MCP `find_events`. Events in (`timestamp`, position) order. */
export const EventsResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  events: Type.Array(EventView),
  total: Type.Integer({ minimum: 0, description: 'Events that match the filters, on every page' }),
  truncated: Type.Boolean({ description: 'True when more events follow this page (then `next_cursor` is set)' }),
  next_cursor: Nullable(Type.String({ description: 'Opaque; pass as `cursor` for the next page. Null on the last page.' })),
  ...BudgetFields,
})
export type EventsResponse = Static<typeof EventsResponse>

/** One event of an object's trace, with the object's qualifiers in it (empty when none was sent). */
export const TraceEvent = Type.Object({
  event_id: Type.String({ format: 'uuid' }),
  event_type: Type.String(),
  timestamp: DateTimeText,
  end_timestamp: Nullable(DateTimeText),
  qualifiers: Type.Array(Type.String()),
  position: Type.Integer(),
})
export type TraceEvent = Static<typeof TraceEvent>

/** An object that shares events with the object asked for (objects in one event are linked to each other through it). */
export const RelatedObject = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  id: Type.String(),
  shared_events: Type.Integer(),
})
export type RelatedObject = Static<typeof RelatedObject>

/** One O2O relationship of an object: its target, the qualifier sent (null: none), and when the first upsert asserting it took effect. */
export const ObjectRelationship = Type.Object({
  object_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  id: Type.String(),
  qualifier: Type.Union([Type.String(), Type.Null()]),
  time: DateTimeText,
})
export type ObjectRelationship = Static<typeof ObjectRelationship>

/** `GET /v1/process/objects/{type}/{id}`; MCP `get_object`. */
export const ObjectResponse = Type.Object({
  dataset_id: DatasetId,
  as_of: AsOf,
  object: Type.Object({
    object_id: Type.String({ format: 'uuid' }),
    type: Type.String(),
    id: Type.String(),
    attributes: Properties,
    created_at: DateTimeText,
    updated_at: DateTimeText,
  }),
  attribute_history: Type.Array(Type.Object({ time: DateTimeText, position: Type.Integer(), attributes: Properties }), {
    description: `The object's attribute changes in log order, each with the time it took effect: the latest ${String(READ_LIMIT_MAX)} at most`,
  }),
  attribute_history_truncated: Type.Boolean({
    description: 'True when older changes are left out of `attribute_history` (the whole history is in `ocelog export`)',
  }),
  trace: Type.Array(TraceEvent, { description: `The object's events in (timestamp, position) order, at most ${String(READ_LIMIT_MAX)}` }),
  trace_truncated: Type.Boolean({ description: 'True when the object has more events than `trace` holds; page them with /v1/process/events' }),
  related: Type.Array(RelatedObject, { description: `Objects sharing events with this one, most shared first, at most ${String(READ_LIMIT_MAX)}` }),
  related_truncated: Type.Boolean(),
  relationships: Type.Array(ObjectRelationship, {
    description: `Ocelog extension: this object's O2O relationships (to the target objects), by (type, id, qualifier), at most ${String(READ_LIMIT_MAX)}`,
  }),
  relationships_truncated: Type.Boolean(),
  incoming_relationships: Type.Array(ObjectRelationship, {
    description: `Ocelog extension: the O2O relationships of other objects to this one (object_id, type and id name the source), by (type, id, qualifier), at most ${String(READ_LIMIT_MAX)}`,
  }),
  incoming_relationships_truncated: Type.Boolean(),
  truncated: BudgetTruncated,
  ...BudgetFields,
})
export type ObjectResponse = Static<typeof ObjectResponse>

/** Query of `GET /v1/process/map`. `object_type` may repeat; default all types. `from` inclusive, `to` exclusive. */
export const ProcessMapQuery = Type.Object(
  {
    object_type: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    from: Type.Optional(Type.String({ description: 'ISO 8601 date-time with Z or an offset; events at or after it' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601 date-time with Z or an offset; events before it' })),
    max_edges: Type.Optional(
      Type.String({
        description: `1 to ${String(MAX_EDGES_LIMIT)}: keep only each object type's most frequent edges (by total), saying how many were left out`,
      }),
    ),
    max_bytes: MaxBytesParam,
  },
  { additionalProperties: false },
)
export type ProcessMapQuery = Static<typeof ProcessMapQuery>

/** Query of `GET /v1/process/events`. `object_id` is the object's own id (the API's `id`), optionally narrowed by `object_type`. */
export const EventsQuery = Type.Object(
  {
    event_type: Type.Optional(Type.String()),
    object_type: Type.Optional(Type.String()),
    object_id: Type.Optional(Type.String()),
    from: Type.Optional(Type.String()),
    to: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String({ description: `1 to ${String(READ_LIMIT_MAX)}, default ${String(READ_LIMIT_DEFAULT)}` })),
    cursor: Type.Optional(Type.String()),
    max_bytes: MaxBytesParam,
  },
  { additionalProperties: false },
)
export type EventsQuery = Static<typeof EventsQuery>
