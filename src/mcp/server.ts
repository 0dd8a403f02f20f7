/**
 * An MCP server (Model Context Protocol 2025-06-18, the SDK's low-level `Server`) that serves the
 * read tools for one dataset. The tools' JSON Schemas are the TypeBox schemas themselves (TypeBox
 * schemas are JSON Schema), returned as `inputSchema` / `outputSchema`; arguments are checked with
 * the compiled input schema before the reader is called.
 *
 * One server per dataset and connection: `/mcp` makes one per HTTP request (stateless Streamable
 * HTTP) for the key's dataset; `ocelog mcp --dataset ID` makes one for its stdio.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js'
import type { TSchema } from 'typebox'
import type { ProcessReads } from '../read/process-reader.js'
import { isOcelogError } from '../core/errors.js'
import { checkArgs, coerceArgs, READ_TOOLS } from './tools.js'

export interface ReadServerOptions {
  /** Version announced in `serverInfo`. */
  version: string
  /** Runs before each tool call (stdio on the embedded default: bring the read models up to date). */
  beforeCall?: () => Promise<void>
}

const INSTRUCTIONS =
  'Ocelog holds object-centric process events (OCEL 2.0): events (activities) linked to objects of several types. ' +
  'Start with dataset_summary, list_event_types and list_object_types; type_relations tells which object types each activity involves; ' +
  'process_map gives the directly-follows graph per object type with frequencies, run times and waiting times in seconds; ' +
  'variants gives the main paths of one object type; performance tells where and why events wait for their input objects; ' +
  'compare puts two periods side by side; ' +
  'find_events and get_object show the events and objects behind them. ' +
  'Every answer fits 100,000 bytes of JSON unless max_bytes says otherwise (up to 1,048,576); truncated says whether it was cut, ' +
  'approx_tokens estimates its size, and the text says how to narrow a question whose answer was cut.'

/**
 * A tool's TypeBox schema as plain JSON Schema for tools/list: TypeBox's own keys dropped, and a
 * record of any JSON values (`patternProperties: {"^.*$": {}}`, whose value schema has no `type`,
 * which MCP clients such as the MCP Inspector warn about) written as `additionalProperties: true`,
 * which accepts the same objects.
 */
export function plainJsonSchema(schema: TSchema): Record<string, unknown> {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (typeof node !== 'object' || node === null) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) out[key] = visit(value)
    const patterns = out.patternProperties
    if (typeof patterns === 'object' && patterns !== null && Object.values(patterns).some((p) => typeof p !== 'object' || p === null || !('type' in p))) {
      delete out.patternProperties
      out.additionalProperties ??= true
    }
    return out
  }
  return visit(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>
}

/** The tools as tools/list gives them: every tool is read-only and touches nothing outside Ocelog. */
export const TOOL_LIST: Tool[] = READ_TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: plainJsonSchema(t.inputSchema) as Tool['inputSchema'],
  outputSchema: plainJsonSchema(t.outputSchema) as Tool['outputSchema'],
  annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
}))

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] }
}

/**
 * Builds a server whose tools read `datasetId` through `reader`. Arguments are first coerced where
 * the intent is plain (coerceArgs: a number for a string, one string for a list). A bad argument, or a parameter
 * the reader rejects, is a tool error (`isError: true`) whose text starts with the argument's name;
 * an unknown object is a tool error too. Other failures become JSON-RPC errors.
 */
export function createReadServer(reader: ProcessReads, datasetId: string, options: ReadServerOptions): Server {
  const server = new Server(
    { name: 'ocelog', title: 'Ocelog process data', version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  )
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOL_LIST }))
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name } = request.params
    const tool = READ_TOOLS.find((t) => t.name === name)
    if (tool === undefined) return toolError(`no tool "${name}"; tools: ${READ_TOOLS.map((t) => t.name).join(', ')}`)
    const args = coerceArgs(name, request.params.arguments ?? {})
    const bad = checkArgs(name, args)
    if (bad !== null) return toolError(`${bad.parameter === '' ? 'arguments' : bad.parameter}: ${bad.rule}`)
    await options.beforeCall?.()
    try {
      const { body, text } = await tool.run(reader, datasetId, args)
      return { content: [{ type: 'text', text }], structuredContent: body as Record<string, unknown> }
    } catch (error) {
      if (!isOcelogError(error)) throw error
      switch (error.kind) {
        case 'invalid_parameter':
          return toolError(`${error.parameter}: ${error.rule}`)
        case 'not_found':
          return toolError(error.message)
        case 'read_models_rebuilding':
          return toolError(`${error.message}; call the tool again in a few seconds`)
        default:
          throw error
      }
    }
  })
  return server
}
