/**
 * e2e: the MCP tools of the built service, through the SDK's own client: over Streamable HTTP at
 * `/mcp` of a real `ocelog serve` process, and over stdio from `ocelog mcp --dataset ID` reading
 * the same SQLite file. Each tool's `structuredContent` equals the HTTP endpoint's body (the client
 * also checks it against the tool's outputSchema).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedKey } from '../../src/write/admin.js'
import { CLI } from '../helpers/cli.js'
import { loadReadDataset, READ_EVENTS, waitForEvents } from '../helpers/read-dataset.js'
import { startService, type RunningService } from '../helpers/service.js'
import { ANSWER_BYTES_DEFAULT } from '../../src/schemas/process.js'

const TOOLS = [
  'compare',
  'dataset_summary',
  'find_events',
  'get_object',
  'list_event_types',
  'list_object_types',
  'performance',
  'process_map',
  'type_relations',
  'variants',
]

let service: RunningService
let key: CreatedKey
let readOnly: CreatedKey
let writeOnly: CreatedKey

beforeAll(async () => {
  service = await startService()
  key = await service.createKey({ name: 'mcp' })
  readOnly = await service.createKey({ name: 'agent', datasetId: key.dataset_id, scopes: ['process:read'] })
  writeOnly = await service.createKey({ name: 'feed', datasetId: key.dataset_id, scopes: ['ingest:write'] })
  await loadReadDataset(service.url, key.key)
})
afterAll(async () => {
  await service.stop()
})

/** The HTTP answer with the MCP tools' default budget (`max_bytes=100000`), so that it says `truncated` and `approx_tokens` as they do. */
async function httpBody(path: string): Promise<Record<string, unknown>> {
  const budgeted = `${path}${path.includes('?') ? '&' : '?'}max_bytes=${String(ANSWER_BYTES_DEFAULT)}`
  const res = await fetch(`${service.url}${budgeted}`, { headers: { authorization: `Bearer ${readOnly.key}` } })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

/** The body without `as_of`, which may move between two calls (and `approx_tokens`, which counts its digits). */
function withoutAsOf(body: unknown): unknown {
  const { as_of: _asOf, approx_tokens: _tokens, ...rest } = body as Record<string, unknown>
  return rest
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function textOf(result: CallToolResult): string {
  const first = result.content[0]
  return first?.type === 'text' ? first.text : ''
}

async function httpClient(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'ocelog-e2e', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers } }))
  return client
}

describe('MCP over Streamable HTTP at /mcp', () => {
  let client: Client
  beforeAll(async () => {
    client = await httpClient({ authorization: `Bearer ${readOnly.key}` })
  })
  afterAll(async () => {
    await client.close()
  })

  it('lists the read tools, each read-only with input and output schemas', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS)
    for (const t of tools) {
      expect(t.annotations?.readOnlyHint, t.name).toBe(true)
      expect(t.inputSchema.type, t.name).toBe('object')
      expect(t.outputSchema?.type, t.name).toBe('object')
    }
  })

  it('answers process_map with the body of GET /v1/process/map, and a text rendering', async () => {
    const result = await callTool(client, 'process_map', { object_types: ['order'] })
    const http = await httpBody('/v1/process/map?object_type=order')
    expect(result.isError).toBeFalsy()
    expect(withoutAsOf(result.structuredContent)).toEqual(withoutAsOf(http))
    expect(textOf(result)).toContain('order: 3 objects')
  })

  it('cuts process_map to the most frequent edges with max_edges, as GET /v1/process/map does', async () => {
    const result = await callTool(client, 'process_map', { object_types: ['order'], max_edges: 1 })
    expect(withoutAsOf(result.structuredContent)).toEqual(withoutAsOf(await httpBody('/v1/process/map?object_type=order&max_edges=1')))
    const [order] = (result.structuredContent as { object_types: { edges: { source: string; target: string; total: number }[]; edges_left_out: number }[] })
      .object_types
    // Create Order → Pay Order (o1, o2) is the most frequent; Pay → Ship and Create → Cancel are left out.
    expect([order?.edges.map((e) => [e.source, e.target, e.total]), order?.edges_left_out]).toEqual([[['Create Order', 'Pay Order', 2]], 2])
    expect(textOf(result)).toContain('2 less frequent ones left out')
  })

  it('pages find_events with a cursor, each page equal to GET /v1/process/events', async () => {
    const first = await callTool(client, 'find_events', { object_type: 'order', limit: 4 })
    const page1 = first.structuredContent as { events: { event_id: string }[]; next_cursor: string | null }
    expect(withoutAsOf(page1)).toEqual(withoutAsOf(await httpBody('/v1/process/events?object_type=order&limit=4')))
    expect(page1.events).toHaveLength(4)
    expect(page1.next_cursor).not.toBeNull()
    const second = await callTool(client, 'find_events', { object_type: 'order', limit: 4, cursor: page1.next_cursor })
    const page2 = second.structuredContent as { events: { event_id: string }[]; next_cursor: string | null }
    expect(withoutAsOf(page2)).toEqual(
      withoutAsOf(await httpBody(`/v1/process/events?object_type=order&limit=4&cursor=${encodeURIComponent(page1.next_cursor ?? '')}`)),
    )
    expect(page2.events).toHaveLength(READ_EVENTS.length - 4)
    expect(page2.next_cursor).toBeNull()
    expect(new Set([...page1.events, ...page2.events].map((e) => e.event_id)).size).toBe(READ_EVENTS.length)
    expect([(first.structuredContent as { truncated: boolean }).truncated, (second.structuredContent as { truncated: boolean }).truncated]).toEqual([
      true,
      false,
    ])
    // Without a limit the tool gives at most 25 (all 7 here).
    const all = (await callTool(client, 'find_events', {})).structuredContent as { events: unknown[]; truncated: boolean }
    expect([all.events.length, all.truncated]).toEqual([READ_EVENTS.length, false])
  })

  it('answers the other tools with their endpoints’ bodies', async () => {
    const pairs: [string, Record<string, unknown>, string][] = [
      ['dataset_summary', {}, '/v1/process/summary'],
      ['list_event_types', {}, '/v1/process/event-types'],
      ['list_object_types', {}, '/v1/process/object-types'],
      ['get_object', { type: 'order', id: 'o1' }, '/v1/process/objects/order/o1'],
    ]
    for (const [name, args, path] of pairs) {
      const result = await callTool(client, name, args)
      expect(withoutAsOf(result.structuredContent), name).toEqual(withoutAsOf(await httpBody(path)))
    }
  })

  it('answers performance, variants, type_relations and compare with their endpoints’ bodies, and a text digest', async () => {
    const pairs: [string, Record<string, unknown>, string, string][] = [
      ['performance', { object_types: ['order'], slowest: 2 }, '/v1/process/performance?object_type=order&slowest=2', 'by median sojourn'],
      ['variants', { object_type: 'order' }, '/v1/process/variants?object_type=order&limit=25', 'order: 3 objects in 3 variants'],
      ['type_relations', {}, '/v1/process/type-relations', 'Create Order × order'],
      [
        'compare',
        { a_to: '2024-05-02T00:00:00Z', b_from: '2024-05-02T00:00:00Z' },
        '/v1/process/compare?a_to=2024-05-02T00:00:00Z&b_from=2024-05-02T00:00:00Z',
        'compared',
      ],
    ]
    for (const [name, args, path, text] of pairs) {
      const result = await callTool(client, name, args)
      expect(result.isError, name).toBeFalsy()
      expect(withoutAsOf(result.structuredContent), name).toEqual(withoutAsOf(await httpBody(path)))
      expect(textOf(result), name).toContain(text)
    }
  })

  it('pages variants to the end with total, truncated and next_cursor', async () => {
    const seen: string[] = []
    let cursor: string | null | undefined
    for (let i = 0; i < 5; i++) {
      const result = await callTool(client, 'variants', { object_type: 'order', limit: 1, ...(cursor === undefined ? {} : { cursor }) })
      const page = result.structuredContent as { total: number; truncated: boolean; next_cursor: string | null; variants: { activities: string[] }[] }
      expect(page.total).toBe(3)
      expect(page.variants).toHaveLength(1)
      seen.push(page.variants.map((v) => v.activities.join(' → ')).join())
      expect(page.truncated).toBe(page.next_cursor !== null)
      cursor = page.next_cursor
      if (cursor === null) break
    }
    // o1: Create → Pay → Ship; o2: Create → Pay; o3: Create → Cancel (one object each, by sequence).
    expect(seen).toEqual(['Create Order → Cancel Order', 'Create Order → Pay Order', 'Create Order → Pay Order → Ship Order'])
    expect(cursor).toBeNull()
  })

  it('cuts a tool result past 1 MiB, says truncated and how to go on', async () => {
    // 1,000 objects with 450-character ids, each with its own sequence of three of ten 200-character activities: 1,000 variants of about 1.3 KB.
    const big = await service.createKey({ name: 'big' })
    const activity = (d: number) => `${String(d)}${'a'.repeat(199)}`
    const id = (o: number) => `${String(o).padStart(3, '0')}${'x'.repeat(447)}`
    const events = []
    for (let k = 0; k < 3; k++) {
      for (let d = 0; d < 10; d++) {
        const objects = Array.from({ length: 1000 }, (_, o) => o).filter((o) => Math.floor(o / 10 ** (2 - k)) % 10 === d)
        for (let half = 0; half < 2; half++) {
          events.push({
            event: activity(d),
            timestamp: new Date(Date.UTC(2024, 4, 1, k)).toISOString(),
            objects: objects.slice(half * 50, half * 50 + 50).map((o) => ({ type: 'box', id: id(o) })),
          })
        }
      }
    }
    const res = await fetch(`${service.url}/v1/event/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${big.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    })
    expect(((await res.json()) as { processed: number }).processed).toBe(60)
    await waitForEvents(service.url, big.key, 60)
    const bigClient = await httpClient({ authorization: `Bearer ${big.key}` })
    try {
      const result = await callTool(bigClient, 'variants', { object_type: 'box', limit: 1000, max_bytes: 1024 * 1024 })
      const body = result.structuredContent as { total: number; truncated: boolean; next_cursor: string | null; variants: { activities: string[] }[] }
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(1024 * 1024)
      expect(body.total).toBe(1000)
      expect(body.variants.length).toBeGreaterThan(500)
      expect(body.variants.length).toBeLessThan(1000)
      expect(body.truncated).toBe(true)
      expect(textOf(result)).toContain('narrow')
      // The cursor goes on after the last variant kept.
      const next = await callTool(bigClient, 'variants', { object_type: 'box', limit: 1000, cursor: body.next_cursor, max_bytes: 1024 * 1024 })
      const rest = next.structuredContent as { truncated: boolean; variants: { activities: string[] }[] }
      expect(rest.truncated).toBe(false)
      expect(body.variants.length + rest.variants.length).toBe(1000)
    } finally {
      await bigClient.close()
    }
  })

  it('reports a bad argument as a tool error naming it', async () => {
    const limit = await callTool(client, 'find_events', { limit: 5000 })
    const from = await callTool(client, 'process_map', { from: 'yesterday' })
    const unknown = await callTool(client, 'get_object', { type: 'order', id: 'o1', deep: true })
    const slowest = await callTool(client, 'performance', { slowest: 101 })
    const objectType = await callTool(client, 'variants', {})
    const cursor = await callTool(client, 'variants', { object_type: 'order', cursor: 'nope' })
    expect([limit.isError, from.isError, unknown.isError, slowest.isError, objectType.isError, cursor.isError]).toEqual([true, true, true, true, true, true])
    expect(textOf(slowest)).toMatch(/^slowest: /)
    expect(textOf(objectType)).toMatch(/^object_type: /)
    expect(textOf(cursor)).toMatch(/^cursor: /)
    expect(textOf(limit)).toMatch(/^limit: /)
    expect(textOf(from)).toMatch(/^from: /)
    expect(textOf(unknown)).toMatch(/^deep: /)
  })

  it('reports an unknown object as a tool error', async () => {
    const result = await callTool(client, 'get_object', { type: 'order', id: 'nope' })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('nope')
  })
})

describe('/mcp access', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  }
  const post = (headers: Record<string, string>) =>
    fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    })

  it('answers 401 to an invalid key before any MCP message is read', async () => {
    const res = await post({ authorization: 'Bearer ocl_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  })

  it('answers 403 to a key with only ingest:write', async () => {
    const res = await post({ 'x-ocelog-api-key': writeOnly.key })
    expect(res.status).toBe(403)
    expect(((await res.json()) as { detail: string }).detail).toContain('process:read')
  })

  it('counts a request against the key’s rate limit', async () => {
    const res = await post({ authorization: `Bearer ${readOnly.key}` })
    expect(res.status).toBe(200)
    expect(Number(res.headers.get('ratelimit-remaining'))).toBeLessThan(1200)
  })

  it('refuses the SDK client of a key with only ingest:write', async () => {
    await expect(httpClient({ authorization: `Bearer ${writeOnly.key}` })).rejects.toThrow(/403/)
  })
})

describe('ocelog mcp over stdio', () => {
  let client: Client
  beforeAll(async () => {
    client = new Client({ name: 'ocelog-e2e-stdio', version: '1.0.0' })
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--dataset', key.dataset_id],
        env: { ...env, OCELOG_DATA_DIR: service.dataDir, LOG_LEVEL: 'warn' },
        stderr: 'pipe',
      }),
    )
  })
  afterAll(async () => {
    await client.close()
  })

  it('lists the same tools', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS)
  })

  it('answers process_map from the local database as the HTTP endpoint does', async () => {
    const result = await callTool(client, 'process_map', {})
    expect(withoutAsOf(result.structuredContent)).toEqual(withoutAsOf(await httpBody('/v1/process/map')))
  })
})
