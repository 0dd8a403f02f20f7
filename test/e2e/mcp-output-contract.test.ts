/**
 * e2e: the output contract of the MCP tools for agents, through the SDK's own client over
 * Streamable HTTP at `/mcp` of a real `ocelog serve` process: `total`, `truncated` and `next_cursor`
 * on every list, paging to the end, the default page of 25, the 1 MiB cap on a dataset made to
 * exceed it (with a cursor that continues after the cut), `max_edges` on `process_map`, and bad
 * arguments as tool errors naming the argument. The same lists over HTTP carry the same fields.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadReadDataset, READ_EVENTS, waitForEvents } from '../helpers/read-dataset.js'
import { ANSWER_BYTES_DEFAULT } from '../../src/schemas/process.js'
import { startService, type RunningService } from '../helpers/service.js'

const MIB = 1024 * 1024
/** Events of the large dataset, each with a 1,500-character note: about 1.9 MB of events in all. */
const BIG_EVENTS = 1000

let service: RunningService
let small: string
let big: string

async function clientFor(key: string): Promise<Client> {
  const client = new Client({ name: 'ocelog-output-contract', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function textOf(result: CallToolResult): string {
  const first = result.content[0]
  return first?.type === 'text' ? first.text : ''
}

interface Page {
  total: number
  truncated: boolean
  next_cursor: string | null
}

async function http(key: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

beforeAll(async () => {
  service = await startService()
  small = (await service.createKey({ name: 'small' })).key
  await loadReadDataset(service.url, small)
  big = (await service.createKey({ name: 'big' })).key
  const note = 'n'.repeat(1500)
  for (let b = 0; b < BIG_EVENTS / 100; b++) {
    const events = Array.from({ length: 100 }, (_, i) => {
      const k = b * 100 + i
      return {
        event: `Step ${String(k % 4)}`,
        timestamp: new Date(Date.UTC(2024, 0, 1) + k * 60_000).toISOString(),
        properties: { note, k },
        objects: [{ type: 'case', id: `c${String(Math.floor(k / 10))}` }],
      }
    })
    const res = await fetch(`${service.url}/v1/event/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${big}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    })
    expect(res.status).toBe(200)
  }
  await waitForEvents(service.url, big, BIG_EVENTS, 120_000)
}, 180_000)
afterAll(async () => {
  await service?.stop()
})

describe('MCP list tools: total, truncated, next_cursor', () => {
  let client: Client
  beforeAll(async () => {
    client = await clientFor(small)
  })
  afterAll(async () => {
    await client.close()
  })

  it('pages find_events to the end: every page says the total, the last has no cursor', async () => {
    const seen: string[] = []
    const pages: Page[] = []
    let cursor: string | undefined
    for (let i = 0; i < 10; i++) {
      const result = await call(client, 'find_events', { limit: 3, ...(cursor === undefined ? {} : { cursor }) })
      const body = result.structuredContent as unknown as Page & { events: { event_id: string }[] }
      pages.push({ total: body.total, truncated: body.truncated, next_cursor: body.next_cursor })
      seen.push(...body.events.map((e) => e.event_id))
      if (body.next_cursor === null) break
      cursor = body.next_cursor
    }
    expect(pages.map((p) => [p.total, p.truncated, p.next_cursor === null])).toEqual([
      [7, true, false],
      [7, true, false],
      [7, false, true],
    ])
    expect(new Set(seen).size).toBe(READ_EVENTS.length)
  })

  it('pages list_event_types and list_object_types with limit and cursor', async () => {
    const names: string[] = []
    let cursor: string | undefined
    const totals: [number, boolean][] = []
    for (let i = 0; i < 10; i++) {
      const result = await call(client, 'list_event_types', { limit: 1, ...(cursor === undefined ? {} : { cursor }) })
      const body = result.structuredContent as unknown as Page & { event_types: { name: string }[] }
      names.push(...body.event_types.map((t) => t.name))
      totals.push([body.total, body.truncated])
      if (body.next_cursor === null) break
      cursor = body.next_cursor
    }
    expect(names).toEqual(['Cancel Order', 'Create Order', 'Pay Order', 'Ship Order'])
    expect(totals).toEqual([
      [4, true],
      [4, true],
      [4, true],
      [4, false],
    ])
    const objects = await call(client, 'list_object_types', {})
    expect(objects.structuredContent).toMatchObject({ total: 2, truncated: false, next_cursor: null })
    expect(textOf(objects)).toContain('2 object types, 2 on this page (last page)')
  })

  it('pages variants to the end', async () => {
    const seen: string[][] = []
    let cursor: string | undefined
    for (let i = 0; i < 10; i++) {
      const result = await call(client, 'variants', { object_type: 'order', limit: 2, ...(cursor === undefined ? {} : { cursor }) })
      const body = result.structuredContent as unknown as Page & { variants: { activities: string[] }[] }
      expect(body.total).toBe(3)
      seen.push(...body.variants.map((v) => v.activities))
      if (body.next_cursor === null) break
      expect(body.truncated).toBe(true)
      cursor = body.next_cursor
    }
    expect(seen).toEqual([
      ['Create Order', 'Cancel Order'],
      ['Create Order', 'Pay Order'],
      ['Create Order', 'Pay Order', 'Ship Order'],
    ])
  })

  it('carries total, truncated and next_cursor on the HTTP lists too', async () => {
    expect(await http(small, '/v1/process/events?limit=2')).toMatchObject({ total: 7, truncated: true })
    expect(await http(small, '/v1/process/event-types')).toMatchObject({ total: 4, truncated: false, next_cursor: null })
    expect(await http(small, '/v1/process/object-types')).toMatchObject({ total: 2, truncated: false, next_cursor: null })
  })

  it('reports bad paging arguments as tool errors naming them', async () => {
    const cursor = await call(client, 'list_event_types', { cursor: 'not-a-cursor' })
    const limit = await call(client, 'list_object_types', { limit: 1001 })
    const edges = await call(client, 'process_map', { max_edges: 0 })
    expect([cursor.isError, limit.isError, edges.isError]).toEqual([true, true, true])
    expect(textOf(cursor)).toMatch(/^cursor: /)
    expect(textOf(limit)).toMatch(/^limit: /)
    expect(textOf(edges)).toMatch(/^max_edges: /)
  })
})

describe('process_map max_edges', () => {
  let client: Client
  beforeAll(async () => {
    client = await clientFor(small)
  })
  afterAll(async () => {
    await client.close()
  })

  it('keeps the most frequent edges per object type and says how many were left out, as GET /v1/process/map does', async () => {
    // order: Create→Pay 2, Create→Cancel 1, Pay→Ship 1; item: Create→Ship 1.
    const result = await call(client, 'process_map', { max_edges: 1 })
    const body = result.structuredContent as unknown as {
      object_types: { object_type: string; edges: { source: string; target: string; total: number }[]; edges_left_out?: number }[]
    }
    expect(body.object_types.map((t) => [t.object_type, t.edges.map((e) => `${e.source}→${e.target} ${String(e.total)}`), t.edges_left_out ?? 0])).toEqual([
      ['item', ['Create Order→Ship Order 1'], 0],
      ['order', ['Create Order→Pay Order 2'], 2],
    ])
    expect(textOf(result)).toContain('2 less frequent ones left out')
    const { as_of: _a, approx_tokens: _c, ...viaHttp } = await http(small, `/v1/process/map?max_edges=1&max_bytes=${String(ANSWER_BYTES_DEFAULT)}`)
    const { as_of: _b, approx_tokens: _d, ...viaMcp } = body as unknown as Record<string, unknown>
    expect(viaMcp).toEqual(viaHttp)
  })
})

describe('MCP results on a dataset larger than 1 MiB', () => {
  let client: Client
  beforeAll(async () => {
    client = await clientFor(big)
  })
  afterAll(async () => {
    await client.close()
  })

  it('gives 25 events by default, with the total', async () => {
    const body = (await call(client, 'find_events', {})).structuredContent as unknown as Page & { events: unknown[] }
    expect(body.events).toHaveLength(25)
    expect([body.total, body.truncated, body.next_cursor === null]).toEqual([BIG_EVENTS, true, false])
  })

  it('cuts a result to the default 100,000 bytes, and continues after the cut with next_cursor', async () => {
    const result = await call(client, 'find_events', { limit: 1000 })
    const body = result.structuredContent as unknown as Page & { approx_tokens: number; events: { properties: { k: number } }[] }
    const json = JSON.stringify(body)
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(ANSWER_BYTES_DEFAULT)
    expect(body.events.length).toBeGreaterThan(40)
    expect(body.events.length).toBeLessThan(60)
    expect([body.truncated, body.approx_tokens]).toEqual([true, Math.ceil(json.length / 4)])
    const next = (await call(client, 'find_events', { limit: 1, cursor: body.next_cursor })).structuredContent as unknown as {
      events: { properties: { k: number } }[]
    }
    expect(next.events.map((e) => e.properties.k)).toEqual([body.events.length])
    expect(textOf(result)).toContain('The answer was cut to fit 100000 bytes')
    expect(textOf(result).length).toBeLessThanOrEqual(10_000)
  })

  it('cuts a result at max_bytes 1 MiB, says how to narrow it, and continues after the cut with next_cursor', async () => {
    const result = await call(client, 'find_events', { limit: 1000, max_bytes: MIB })
    const body = result.structuredContent as unknown as Page & { events: { properties: { k: number } }[] }
    expect(result.isError).toBeFalsy()
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(MIB)
    expect(body.events.length).toBeGreaterThan(400)
    expect(body.events.length).toBeLessThan(BIG_EVENTS)
    expect(body.events.map((e) => e.properties.k)).toEqual(Array.from({ length: body.events.length }, (_, i) => i))
    expect([body.total, body.truncated]).toEqual([BIG_EVENTS, true])
    const next = (await call(client, 'find_events', { limit: 1, cursor: body.next_cursor })).structuredContent as unknown as {
      events: { properties: { k: number } }[]
    }
    expect(next.events.map((e) => e.properties.k)).toEqual([body.events.length])
    // The text says where to continue and how to narrow the answer.
    expect(textOf(result)).toContain('more: call again with cursor')
    expect(textOf(result)).toContain('The answer was cut to fit 1048576 bytes')
  })

  it('leaves a result under its budget whole: one case with its 10 events', async () => {
    const object = await call(client, 'get_object', { type: 'case', id: 'c0' })
    expect((object.structuredContent as unknown as { trace: unknown[] }).trace).toHaveLength(10)
    expect(object.structuredContent).toHaveProperty('truncated', false)
  })
})
