/**
 * The read side as MCP tools for AI agents (Model Context Protocol, server features § Tools;
 * scope `process:read`, docs/api.md#authentication-and-scopes). Each tool answers what its HTTP endpoint answers
 * for the same arguments (`structuredContent` is the endpoint's body; only `as_of` may differ
 * between two calls, beside the page size and the cut below), plus a short text rendering. Every tool is read-only. Lists are capped at 1,000 items, and `find_events` and `variants` give 25
 * unless asked for more. Every answer fits a byte budget (ANSWER_BYTES_DEFAULT, or `max_bytes` up to ANSWER_BYTES_MAX; its
 * text TEXT_CHARS_MAX characters): past it lists are cut (answer-budget.ts), `truncated` says so, `approx_tokens` estimates its
 * size, and the text says how to narrow the question (docs/analysis.md#answers-that-fit-an-agents-context).
 *
 * The tools are served the same way over Streamable HTTP (`/mcp`) and over stdio (`ocelog mcp`):
 * see server.ts.
 */
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { type Budgeted, type Fit, fitText, withBudget, FIT } from '../read/answer-budget.js'
import { decodeOffsetCursor, pageOf } from '../read/output-contract.js'
import type { ProcessReads } from '../read/process-reader.js'
import { CompareResponse, PerformanceResponse, TypeRelationsResponse, VariantsResponse } from '../schemas/analysis.js'
import {
  CompareArgs,
  FindEventsArgs,
  GetObjectArgs,
  MCP_LIMIT_DEFAULT,
  NoArgs,
  PerformanceArgs,
  ProcessMapArgs,
  TypeListArgs,
  TypeRelationsArgs,
  VariantsArgs,
} from '../schemas/mcp.js'
import {
  ANSWER_BYTES_DEFAULT,
  ANSWER_BYTES_MAX,
  EventsResponse,
  EventTypesResponse,
  ObjectResponse,
  ObjectTypesResponse,
  ProcessMapResponse,
  READ_LIMIT_MAX,
  type Stats,
  SummaryResponse,
  type TypeInfo,
} from '../schemas/process.js'

/** One tool: its MCP description and schemas, and how it answers for a dataset. */
export interface ReadTool {
  name: string
  title: string
  description: string
  inputSchema: TSchema
  outputSchema: TSchema
  /**
   * Answers for `datasetId` with arguments that passed `inputSchema`: `body` is the HTTP endpoint's
   * answer, `text` a short rendering of it. Throws the reader's errors (InvalidParameterError,
   * NotFoundError).
   */
  run(reader: ProcessReads, datasetId: string, args: unknown): Promise<{ body: object; text: string }>
}

interface ToolDefinition<A, B extends Budgeted> extends Omit<ReadTool, 'run'> {
  call(reader: ProcessReads, datasetId: string, args: A): Promise<B>
  /** How the answer to `args` is cut to its byte budget (answer-budget.ts). */
  cutToFit(args: A): Fit<B>
  /** How to narrow the question when it was cut, e.g. "object_types, max_edges or a shorter from/to window". */
  narrow: string
  render(body: B): string
}

/** A tool whose arguments are `A` (the Static of its input schema; `run` is only given checked arguments). */
function tool<A extends { max_bytes?: number }, B extends Budgeted>(d: ToolDefinition<A, B>): ReadTool {
  const { call, render, cutToFit, narrow, ...described } = d
  return {
    ...described,
    async run(reader, datasetId, args) {
      const a = args as A
      const body = await call(reader, datasetId, a)
      const maxBytes = a.max_bytes ?? ANSWER_BYTES_DEFAULT
      const cut = withBudget(body, maxBytes, cutToFit(a))
      const note = cut
        ? `The answer was cut to fit ${String(maxBytes)} bytes (truncated: true; about ${String(body.approx_tokens ?? 0)} tokens): ` +
          `narrow it with ${narrow}, or raise max_bytes (up to ${String(ANSWER_BYTES_MAX)}).`
        : ''
      return { body, text: fitText(render(body), note) }
    },
  }
}

const seconds = (s: number): string => {
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`
  if (s < 3600) return `${(s / 60).toFixed(1)} min`
  if (s < 86_400) return `${(s / 3600).toFixed(1)} h`
  return `${(s / 86_400).toFixed(1)} d`
}
const median = (s: Stats | null): string => (s === null ? 'n/a' : seconds(s.median))

/** One run of an activity in a trace: `count` times in a row. */
export interface ActivityRun {
  activity: string
  count: number
}

/** The runs of one activity in a row in `steps`, in order (`A A B A` gives A ×2, B, A). */
export function runsOf(steps: readonly string[]): ActivityRun[] {
  const runs: ActivityRun[] = []
  for (const activity of steps) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last.activity === activity) last.count += 1
    else runs.push({ activity, count: 1 })
  }
  return runs
}

/** Runs shown of a variant's path in the text; past it, its first and last halves with the steps between counted. */
export const PATH_RUNS_SHOWN = 20

/**
 * A variant's path as the text shows it (docs/analysis.md#mcp-tools): runs of one activity
 * compressed (`Check Item ×12`), and a path of more than PATH_RUNS_SHOWN runs shown as its first and
 * last PATH_RUNS_SHOWN / 2 runs with `… n steps …` between them; it starts with its number of steps.
 */
export function variantPath(steps: readonly string[]): string {
  const runs = runsOf(steps)
  const shown = (list: readonly ActivityRun[]) => list.map((r) => (r.count === 1 ? r.activity : `${r.activity} ×${String(r.count)}`))
  const count = `${steps.length.toLocaleString('en-US')} ${steps.length === 1 ? 'step' : 'steps'}`
  if (runs.length <= PATH_RUNS_SHOWN) return `${count}: ${shown(runs).join(' → ')}`
  const half = PATH_RUNS_SHOWN / 2
  const head = runs.slice(0, half)
  const tail = runs.slice(runs.length - half)
  const between = runs.slice(half, runs.length - half).reduce((n, r) => n + r.count, 0)
  return `${count}: ${[...shown(head), `… ${between.toLocaleString('en-US')} steps …`, ...shown(tail)].join(' → ')}`
}

/** How a page of a list ends: the last page, or the cursor of the next. */
function more(page: { truncated: boolean; next_cursor: string | null }): string {
  return page.truncated ? `; more: call again with cursor "${page.next_cursor ?? ''}"` : ' (last page)'
}

function typeList(kind: string, types: TypeInfo[], page: { total: number; truncated: boolean; next_cursor: string | null }): string {
  if (page.total === 0) return `No ${kind} yet.`
  const lines = types.map(
    (t) => `- ${t.name}: ${String(t.count)}${t.attributes.length === 0 ? '' : `; attributes ${t.attributes.map((a) => a.name).join(', ')}`}`,
  )
  return `${String(page.total)} ${kind}, ${String(types.length)} on this page${more(page)}:\n${lines.join('\n')}`
}

/** How every paged tool describes its page. */
const PAGED = `\`total\` counts the whole list; while \`truncated\` is true, pass \`next_cursor\` as \`cursor\` for the next page. \`limit\` is 1 to ${String(READ_LIMIT_MAX)}`

const TOP_EDGES = 10

/** Where a page of a type list starts in the whole list (its cursor's offset). */
const startOf = (a: TypeListArgs): number => (a.cursor === undefined ? 0 : decodeOffsetCursor(a.cursor))

/** The read tools, in the order tools/list gives them. */
export const READ_TOOLS: readonly ReadTool[] = [
  tool<NoArgs, SummaryResponse>({
    name: 'dataset_summary',
    title: 'Dataset summary',
    description:
      'Counts of the dataset this API key reads: events, objects, event types, object types, E2O links (event-to-object), and the first and last event time. ' +
      '`as_of` is the log position the read models had reached. Start here.',
    inputSchema: NoArgs,
    outputSchema: SummaryResponse,
    call: (reader, datasetId) => reader.summary(datasetId),
    cutToFit: () => FIT.summary,
    narrow: 'nothing',
    render: (b) =>
      `Dataset ${b.dataset_id} (as of log position ${String(b.as_of)}): ${String(b.events)} events, ${String(b.objects)} objects, ` +
      `${String(b.event_types)} event types, ${String(b.object_types)} object types, ${String(b.e2o)} E2O links` +
      (b.first_event_time === null ? '.' : `; events from ${b.first_event_time} to ${b.last_event_time ?? b.first_event_time}.`),
  }),
  tool<TypeListArgs, EventTypesResponse>({
    name: 'list_event_types',
    title: 'Event types',
    description:
      'The event types (activities) of the dataset, by name, each with its count of events, first and last seen, and its attribute names with the JSON types of their values. ' +
      `${PAGED} (default ${String(MCP_LIMIT_DEFAULT)}).`,
    inputSchema: TypeListArgs,
    outputSchema: EventTypesResponse,
    call: async (reader, datasetId, a) => {
      const { event_types, ...body } = await reader.eventTypes(datasetId)
      const { items, ...page } = pageOf(event_types, a.limit ?? MCP_LIMIT_DEFAULT, a.cursor)
      return { ...body, event_types: items, ...page }
    },
    cutToFit: (a) => FIT.types(startOf(a)),
    narrow: 'a lower limit (the cursor continues after the last type kept)',
    render: (b) => typeList('event types', b.event_types, b),
  }),
  tool<TypeListArgs, ObjectTypesResponse>({
    name: 'list_object_types',
    title: 'Object types',
    description:
      'The object types of the dataset, by name, each with its count of objects, first and last seen, and its attribute names with the JSON types of their values. ' +
      `${PAGED} (default ${String(MCP_LIMIT_DEFAULT)}).`,
    inputSchema: TypeListArgs,
    outputSchema: ObjectTypesResponse,
    call: async (reader, datasetId, a) => {
      const { object_types, ...body } = await reader.objectTypes(datasetId)
      const { items, ...page } = pageOf(object_types, a.limit ?? MCP_LIMIT_DEFAULT, a.cursor)
      return { ...body, object_types: items, ...page }
    },
    cutToFit: (a) => FIT.types(startOf(a)),
    narrow: 'a lower limit (the cursor continues after the last type kept)',
    render: (b) => typeList('object types', b.object_types, b),
  }),
  tool<GetObjectArgs, ObjectResponse>({
    name: 'get_object',
    title: 'One object',
    description:
      'One object by type and id: its current attributes and their history, its trace (its events in time order, with its qualifiers in each), ' +
      `and the objects it shares events with (most shared first). The attribute history (its latest changes), trace, related objects and O2O ` +
      `relationships (its own, and other objects' to it) hold at most ${String(READ_LIMIT_MAX)} items each, and their \`…_truncated\` flags say when there are more ` +
      '(page the trace with find_events and object_id).',
    inputSchema: GetObjectArgs,
    outputSchema: ObjectResponse,
    call: (reader, datasetId, a) => reader.object(datasetId, a.type, a.id),
    cutToFit: () => FIT.object,
    narrow: 'find_events {object_type, object_id, limit} to page its trace',
    render: (b) => {
      const trace = b.trace.map((e) => `${e.timestamp} ${e.event_type}`).slice(0, 20)
      return (
        `${b.object.type} ${b.object.id}: attributes ${JSON.stringify(b.object.attributes)}; ` +
        `${String(b.trace.length)}${b.trace_truncated ? '+' : ''} events, ${String(b.related.length)}${b.related_truncated ? '+' : ''} related objects.` +
        (trace.length === 0 ? '' : `\nTrace:\n${trace.join('\n')}${b.trace.length > trace.length ? '\n…' : ''}`)
      )
    },
  }),
  tool<FindEventsArgs, EventsResponse>({
    name: 'find_events',
    title: 'Find events',
    description:
      'Events with their E2O links (objects with qualifiers), in (timestamp, log position) order, filtered by event type, object type, ' +
      'object id and a window on timestamp (`from` inclusive, `to` exclusive; ISO 8601 with Z or an offset). ' +
      `${PAGED} (default ${String(MCP_LIMIT_DEFAULT)}; a page is cut to fit max_bytes and then continues from its last event).`,
    inputSchema: FindEventsArgs,
    outputSchema: EventsResponse,
    call: (reader, datasetId, a) => reader.events(datasetId, { ...a, limit: a.limit ?? MCP_LIMIT_DEFAULT }),
    cutToFit: () => FIT.events,
    narrow: 'a lower limit, event_type, object_type or a shorter from/to window (the cursor continues after the last event kept)',
    render: (b) => {
      const lines = b.events.slice(0, 20).map((e) => `${e.timestamp} ${e.event_type} [${e.objects.map((o) => `${o.type} ${o.id}`).join(', ')}]`)
      return (
        `${String(b.total)} events match, ${String(b.events.length)} on this page${more(b)}.` +
        (lines.length === 0 ? '' : `\n${lines.join('\n')}${b.events.length > lines.length ? '\n…' : ''}`)
      )
    },
  }),
  tool<ProcessMapArgs, ProcessMapResponse>({
    name: 'process_map',
    title: 'Process map',
    description:
      'The object-centric process map: per object type, its directly-follows graph after pm4py’s OC-DFG. Activities with events, objects, ' +
      '(event, object) pairs and run time (end_timestamp − timestamp); edges a → b with occurrences (total), objects, event couples, ' +
      'elapsed time and waiting time (from the end of a to the start of b); start and end activities. Times are statistics in seconds. ' +
      '`object_types` narrows the types (default: all); `from`/`to` filter events by timestamp before the map is computed; `max_edges` keeps ' +
      'each type’s most frequent edges (edges_left_out says how many were dropped). Start with dataset_summary, then process_map; ask ' +
      'performance where it waits.',
    inputSchema: ProcessMapArgs,
    outputSchema: ProcessMapResponse,
    call: (reader, datasetId, a) =>
      reader.processMap(datasetId, { object_type: a.object_types, from: a.from, to: a.to, max_edges: a.max_edges }, { objectType: 'object_types' }),
    // Past the budget each type keeps its most frequent edges (edges_left_out says how many went).
    cutToFit: () => FIT.processMap,
    narrow: 'object_types, a lower max_edges or a shorter from/to window',
    render: (b) => {
      if (b.object_types.length === 0) return 'No events in this window.'
      return b.object_types
        .map((t) => {
          const edges = [...t.edges].sort((x, y) => y.total - x.total).slice(0, TOP_EDGES)
          return (
            `${t.object_type}: ${String(t.objects)} objects, ${String(t.activities.length)} activities, ${String(t.edges.length)} edges` +
            `${t.edges_left_out === undefined || t.edges_left_out === 0 ? '' : ` (${String(t.edges_left_out)} less frequent ones left out)`}; ` +
            `starts ${t.start_activities.map((s) => `${s.activity} (${String(s.objects)})`).join(', ')}; ` +
            `ends ${t.end_activities.map((s) => `${s.activity} (${String(s.objects)})`).join(', ')}.` +
            edges
              .map((e) => `\n  ${e.source} → ${e.target}: ${String(e.total)}×, median elapsed ${median(e.elapsed)}, median waiting ${median(e.waiting)}`)
              .join('')
          )
        })
        .join('\n')
    },
  }),
  tool<PerformanceArgs, PerformanceResponse>({
    name: 'performance',
    title: 'Where and why it waits',
    description:
      'Object-centric performance per activity (OPerA, Park, Adams, van der Aalst): for each event, its predecessors are the previous events of ' +
      'its objects; sojourn = time from the last input being ready (end_timestamp, else timestamp) to the event, flow = from the first, ' +
      'synchronization = between first and last input; per object type pooling, lagging, readying and how often it held the delaying object ' +
      '(the input ready last); the slowest events with their delaying object (look it up with get_object). Times are statistics in seconds. ' +
      'Use it after process_map to ask where and why the process waits. `object_types` narrows the objects that count; `from`/`to` select ' +
      'the measured events by timestamp (predecessors come from whole traces); `slowest` is 0 to 100 (default 5).',
    inputSchema: PerformanceArgs,
    outputSchema: PerformanceResponse,
    call: (reader, datasetId, a) =>
      reader.performance(datasetId, { object_type: a.object_types, from: a.from, to: a.to, slowest: a.slowest }, { objectType: 'object_types' }),
    cutToFit: () => FIT.performance,
    narrow: 'object_types, a shorter from/to window or a lower slowest',
    render: (b) => {
      if (b.activities.length === 0) return 'No events in this window.'
      const ranked = [...b.activities].filter((a) => a.sojourn !== null).sort((x, y) => (y.sojourn?.median ?? 0) - (x.sojourn?.median ?? 0))
      const lines = ranked.slice(0, 10).map((a) => {
        const delaying = [...a.object_types].sort((x, y) => y.delaying - x.delaying)[0]
        return (
          `- ${a.activity}: ${String(a.events)} events, median sojourn ${median(a.sojourn)}, median synchronization ${median(a.synchronization)}` +
          (delaying === undefined || delaying.delaying === 0 ? '' : `; mostly waits for ${delaying.object_type} (${String(delaying.delaying)}×)`)
        )
      })
      return `${String(b.activities.length)} activities; by median sojourn (waiting for the last input):\n${lines.join('\n')}`
    },
  }),
  tool<VariantsArgs, VariantsResponse>({
    name: 'variants',
    title: 'Main paths (trace variants)',
    description:
      'Trace variants of one object type (pm4py’s flattened variants): each object’s activities in time order; per variant its objects, share, ' +
      'trace duration (seconds) and up to 3 example object ids (look them up with get_object). Most frequent first. Use it to see the main paths ' +
      `of one object type (list_object_types names them). \`limit\` 1 to ${String(READ_LIMIT_MAX)} (default ${String(MCP_LIMIT_DEFAULT)}); ` +
      '`total` counts every variant, and while `truncated` is true pass `next_cursor` as `cursor` for the next page.',
    inputSchema: VariantsArgs,
    outputSchema: VariantsResponse,
    call: (reader, datasetId, a) => reader.variants(datasetId, a, MCP_LIMIT_DEFAULT),
    cutToFit: () => FIT.variants,
    narrow: 'a lower limit or a shorter from/to window (the cursor continues after the last variant kept)',
    render: (b) => {
      const lines = b.variants
        .slice(0, 10)
        .map((v) => `- ${String(v.objects)} (${(v.share * 100).toFixed(1)}%), median ${seconds(v.duration.median)}, ${variantPath(v.activities)}`)
      return (
        `${b.object_type}: ${String(b.objects)} objects in ${String(b.total)} variants; this page ${String(b.variants.length)}` +
        (b.truncated ? `; more: call again with cursor "${b.next_cursor ?? ''}", or narrow with from and to` : ' (last page)') +
        `.${lines.length === 0 ? '' : `\n${lines.join('\n')}`}`
      )
    },
  }),
  tool<TypeRelationsArgs, TypeRelationsResponse>({
    name: 'type_relations',
    title: 'How object types relate',
    description:
      'Activity × object type (pm4py’s ET-OT): per pair, the events, E2O links and objects per event {min, mean, max}, over the events in ' +
      '`from`/`to`; and the O2O relationships between object types (source type, qualifier, target type, count). Use it to learn which ' +
      'objects each activity involves and how many, before process_map or performance.',
    inputSchema: TypeRelationsArgs,
    outputSchema: TypeRelationsResponse,
    call: (reader, datasetId, a) => reader.typeRelations(datasetId, a),
    cutToFit: () => FIT.typeRelations,
    narrow: 'a shorter from/to window',
    render: (b) => {
      const lines = b.activity_object_types
        .slice(0, 40)
        .map(
          (r) =>
            `- ${r.activity} × ${r.object_type}: ${String(r.events)} events, ${String(r.objects_per_event.min)}–${String(r.objects_per_event.max)} objects per event (mean ${r.objects_per_event.mean.toFixed(2)})`,
        )
      const o2o = b.o2o.slice(0, 20).map((r) => `- ${r.source_type} —${r.qualifier ?? ''}→ ${r.target_type}: ${String(r.relationships)}`)
      return (
        `${String(b.activity_object_types.length)} (activity, object type) pairs${lines.length === 0 ? '.' : `:\n${lines.join('\n')}`}` +
        (o2o.length === 0 ? '\nNo O2O relationships.' : `\nO2O:\n${o2o.join('\n')}`)
      )
    },
  }),
  tool<CompareArgs, CompareResponse>({
    name: 'compare',
    title: 'What changed between two periods',
    description:
      'The process map and performance figures of two time windows side by side (window a: a_from–a_to, window b: b_from–b_to; ISO 8601, ' +
      'each bound optional): per (object type, activity) events and median run time; per edge total, median elapsed and waiting time; per ' +
      'activity median sojourn and synchronization; each {a, b, diff = b − a}, null where absent in one window; `highlights` lists the ' +
      'largest relative changes; `max_edges` keeps each type’s most frequent edges. Use it to ask what changed, e.g. last week against ' +
      'the week before.',
    inputSchema: CompareArgs,
    outputSchema: CompareResponse,
    call: (reader, datasetId, a) => reader.compare(datasetId, { ...a, object_type: a.object_types }, { objectType: 'object_types' }),
    cutToFit: () => FIT.compare,
    narrow: 'object_types, a lower max_edges or shorter windows',
    render: (b) => {
      const lines = b.highlights.map((h) => `- ${h.what}: ${String(h.a)} → ${String(h.b)} (${h.relative > 0 ? '+' : ''}${(h.relative * 100).toFixed(0)}%)`)
      return (
        `${String(b.map_activities.length)} (object type, activity) pairs, ${String(b.map_edges.length)} edges` +
        `${b.edges_left_out === undefined || b.edges_left_out === 0 ? '' : ` (${String(b.edges_left_out)} less frequent ones left out)`}, ` +
        `${String(b.performance.length)} activities compared.` +
        (lines.length === 0 ? ' No figure present in both windows changed.' : `\nLargest changes (b against a):\n${lines.join('\n')}`)
      )
    },
  }),
]

const checkers = new Map(READ_TOOLS.map((t) => [t.name, Compile(t.inputSchema)]))

/** The JSON Schema keywords coerceArgs reads of one argument. */
interface ArgSchema {
  type?: unknown
  items?: { type?: unknown }
}

/** One argument made to fit its schema where the intent is plain (see coerceArgs); otherwise unchanged. */
function coerceArg(schema: ArgSchema, value: unknown): unknown {
  const scalarText = (v: unknown): unknown => (typeof v === 'number' && Number.isFinite(v) ? String(v) : v)
  switch (schema.type) {
    case 'string':
      return scalarText(value)
    case 'integer':
      return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value
    case 'array':
      if (schema.items?.type !== 'string') return value
      if (typeof value === 'string' || typeof value === 'number') return [scalarText(value)]
      return Array.isArray(value) ? value.map(scalarText) : value
    default:
      return value
  }
}

/**
 * The arguments of a tool call as clients send them, made to fit the tool's input schema where the
 * intent is plain (as the MCP SDK's own servers do with zod's `z.coerce`; docs/analysis.md#mcp-tools):
 * a finite number for a string argument becomes its decimal text (`get_object {id: 990001}`), a text
 * of decimal digits for an integer argument its number (`limit: "10"`), and one string or number for
 * a list of strings a list of it (`object_types: "orders"` is `["orders"]`). Anything else is left as
 * it is, for checkArgs to refuse. Pure: returns a new object, or `args` itself when it is not one.
 */
export function coerceArgs(toolName: string, args: unknown): unknown {
  const schema = READ_TOOLS.find((t) => t.name === toolName)?.inputSchema as { properties?: Record<string, ArgSchema> } | undefined
  const properties = schema?.properties
  if (properties === undefined || typeof args !== 'object' || args === null || Array.isArray(args)) return args
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => {
      const schema = properties[name]
      return [name, schema === undefined ? value : coerceArg(schema, value)]
    }),
  )
}

/**
 * Checks a tool's arguments against its input schema.
 * @returns null when they pass, else `{parameter, rule}` of the first broken rule (the parameter
 *   named by its JSON pointer without the slash, e.g. `limit`; empty for the whole object).
 */
export function checkArgs(toolName: string, args: unknown): { parameter: string; rule: string } | null {
  const check = checkers.get(toolName)
  if (check === undefined) return { parameter: 'name', rule: `no tool "${toolName}"; tools: ${READ_TOOLS.map((t) => t.name).join(', ')}` }
  if (check.Check(args)) return null
  const first = [...check.Errors(args)][0]
  if (first === undefined) return { parameter: '', rule: 'is not valid' }
  // A property the schema does not declare fails its `false` schema first.
  if (first.keyword === 'boolean') return { parameter: first.instancePath.replace(/^\//, ''), rule: 'is not an argument of this tool' }
  const params = first.params as { additionalProperties?: unknown; requiredProperties?: unknown }
  if (first.keyword === 'additionalProperties' && Array.isArray(params.additionalProperties)) {
    return { parameter: String(params.additionalProperties[0]), rule: 'is not an argument of this tool' }
  }
  if (first.keyword === 'required' && Array.isArray(params.requiredProperties)) {
    return { parameter: String(params.requiredProperties[0]), rule: 'is required' }
  }
  return { parameter: first.instancePath.replace(/^\//, ''), rule: first.message }
}
