/**
 * TypeBox schemas of the MCP tools' arguments (Model Context Protocol, tools/list `inputSchema`).
 * They are the HTTP read endpoints' parameters (src/schemas/process.ts) as JSON values: `limit` is
 * an integer, and `process_map` takes `object_types` as a list where HTTP repeats `object_type`.
 * Every tool takes `max_bytes`, the byte budget of its answer. Each tool's `outputSchema` is the
 * HTTP endpoint's 200 answer, unchanged.
 */
import { Type, type Static } from 'typebox'
import { SLOWEST_DEFAULT, SLOWEST_MAX } from './analysis.js'
import { ANSWER_BYTES_DEFAULT, ANSWER_BYTES_MAX, ANSWER_BYTES_MIN, MAX_EDGES_LIMIT, ProcessMapQuery, READ_LIMIT_MAX } from './process.js'

/** Every tool's `max_bytes`: the byte budget of its `structuredContent` (docs/analysis.md#answers-that-fit-an-agents-context). */
const maxBytes = Type.Optional(
  Type.Integer({
    minimum: ANSWER_BYTES_MIN,
    maximum: ANSWER_BYTES_MAX,
    description:
      `Byte budget of the answer's JSON, ${String(ANSWER_BYTES_MIN)} to ${String(ANSWER_BYTES_MAX)} (default ${String(ANSWER_BYTES_DEFAULT)}); ` +
      'past it lists are cut and truncated is true',
  }),
)

/** dataset_summary: only the budget. */
export const NoArgs = Type.Object({ max_bytes: maxBytes }, { additionalProperties: false })
export type NoArgs = Static<typeof NoArgs>

/** Default page of the MCP list tools (agents' context is small; `limit` goes up to READ_LIMIT_MAX). */
export const MCP_LIMIT_DEFAULT = 25

const mcpLimit = (what: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: READ_LIMIT_MAX,
      description: `${what} per page, 1 to ${String(READ_LIMIT_MAX)} (default ${String(MCP_LIMIT_DEFAULT)})`,
    }),
  )

/** list_event_types, list_object_types: a page of the types. */
export const TypeListArgs = Type.Object(
  { limit: mcpLimit('Types'), cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })), max_bytes: maxBytes },
  { additionalProperties: false },
)
export type TypeListArgs = Static<typeof TypeListArgs>

/** get_object: the object's type and its own id (the API's `type` and `id`). */
export const GetObjectArgs = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'Object type, e.g. order' }),
    id: Type.String({ minLength: 1, description: 'The object’s own id, e.g. o-1001' }),
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type GetObjectArgs = Static<typeof GetObjectArgs>

/** find_events: the filters of `GET /v1/process/events`; `limit` 1 to 1000. */
export const FindEventsArgs = Type.Object(
  {
    event_type: Type.Optional(Type.String({ description: 'Only events of this type (activity)' })),
    object_type: Type.Optional(Type.String({ description: 'Only events linked to an object of this type' })),
    object_id: Type.Optional(Type.String({ description: 'Only events linked to the object with this id (narrowed by object_type when given)' })),
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    limit: mcpLimit('Events'),
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })),
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type FindEventsArgs = Static<typeof FindEventsArgs>

/** process_map: object types to map (default: every type), and a window on event `timestamp`. */
export const ProcessMapArgs = Type.Object(
  {
    object_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Object types to map; default: every type' })),
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    max_edges: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_EDGES_LIMIT,
        description: `Keep only each object type's most frequent edges (1 to ${String(MAX_EDGES_LIMIT)}); edges_left_out says how many were left out`,
      }),
    ),
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type ProcessMapArgs = Static<typeof ProcessMapArgs>

/** performance: object types whose objects count (default: every type), a window on the measured events, the slowest events per activity. */
export const PerformanceArgs = Type.Object(
  {
    object_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Only objects of these types count; default: every type' })),
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    slowest: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: SLOWEST_MAX,
        description: `Slowest events per activity, 0 to ${String(SLOWEST_MAX)} (default ${String(SLOWEST_DEFAULT)})`,
      }),
    ),
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type PerformanceArgs = Static<typeof PerformanceArgs>

/** variants: one object type, a window, and a page. */
export const VariantsArgs = Type.Object(
  {
    object_type: Type.String({ minLength: 1, description: 'The object type whose traces are grouped, e.g. orders' }),
    from: ProcessMapQuery.properties.from,
    to: ProcessMapQuery.properties.to,
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: READ_LIMIT_MAX,
        description: `Variants per page, 1 to ${String(READ_LIMIT_MAX)} (default ${String(MCP_LIMIT_DEFAULT)})`,
      }),
    ),
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })),
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type VariantsArgs = Static<typeof VariantsArgs>

/** type_relations: a window on event `timestamp`. */
export const TypeRelationsArgs = Type.Object(
  { from: ProcessMapQuery.properties.from, to: ProcessMapQuery.properties.to, max_bytes: maxBytes },
  { additionalProperties: false },
)
export type TypeRelationsArgs = Static<typeof TypeRelationsArgs>

/** compare: object types (default: every type) and two windows on event `timestamp` (each bound optional). */
export const CompareArgs = Type.Object(
  {
    object_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Object types to compare; default: every type' })),
    a_from: Type.Optional(Type.String({ description: 'Window a: events at or after it (ISO 8601 with Z or an offset)' })),
    a_to: Type.Optional(Type.String({ description: 'Window a: events before it' })),
    b_from: Type.Optional(Type.String({ description: 'Window b: events at or after it' })),
    b_to: Type.Optional(Type.String({ description: 'Window b: events before it' })),
    max_edges: ProcessMapArgs.properties.max_edges,
    max_bytes: maxBytes,
  },
  { additionalProperties: false },
)
export type CompareArgs = Static<typeof CompareArgs>
