/**
 * API tier: the MCP read tools through the SDK's own client (which checks every `structuredContent`
 * against the tool's `outputSchema`) over an in-memory transport, on a real SQLite file: arguments
 * as clients send them (numbers for strings, one string for a list) and the tools' JSON Schemas as
 * clients read them.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { READ_TOOLS } from '../../src/mcp/tools.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { connectReadClient, textOf } from '../helpers/mcp-client.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let client: Client
let datasetId: string

beforeAll(async () => {
  t = await makeTestApp()
  const k = await t.newKey({ scopes: ['ingest:write', 'process:read'] })
  datasetId = k.dataset_id
  const events = [
    {
      event: 'Place Order',
      timestamp: '2024-05-01T10:00:00Z',
      objects: [
        { type: 'orders', id: '990001' },
        { type: 'items', id: 'i1' },
      ],
    },
    { event: 'Pay Order', timestamp: '2024-05-01T11:00:00Z', objects: [{ type: 'orders', id: '990001' }] },
    { event: 'Pick Item', timestamp: '2024-05-01T12:00:00Z', objects: [{ type: 'items', id: 'i1' }] },
  ]
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/event/batch',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ events }),
  })
  expect(res.statusCode).toBe(200)
  await t.projector.catchUp()
  client = await connectReadClient(new ProcessReader({ query: new SqliteReadModelQuery(t.rmDb), log: t.log }), datasetId)
})
afterAll(async () => {
  await client?.close()
  await t?.close()
})

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

describe('MCP arguments as clients send them', () => {
  it('takes a number for a string argument: get_object {id: 990001}', async () => {
    const r = await call('get_object', { type: 'orders', id: 990001 })
    expect(r.isError).toBeUndefined()
    const body = r.structuredContent as { object: { type: string; id: string }; trace: { event_type: string }[] }
    expect(body.object).toMatchObject({ type: 'orders', id: '990001' })
    expect(body.trace.map((e) => e.event_type)).toEqual(['Place Order', 'Pay Order'])
  })

  it('takes a number for find_events object_id and a digit text for limit', async () => {
    const r = await call('find_events', { object_id: 990001, limit: '1' })
    const body = r.structuredContent as { events: { event_type: string }[]; total: number; truncated: boolean }
    expect([body.events.map((e) => e.event_type), body.total, body.truncated]).toEqual([['Place Order'], 2, true])
  })

  it('takes one string for a list: object_types "orders" means ["orders"]', async () => {
    for (const name of ['process_map', 'performance', 'compare']) {
      const one = await call(name, { object_types: 'orders' })
      const list = await call(name, { object_types: ['orders'] })
      expect(one.isError, name).toBeUndefined()
      const { as_of: _a, ...oneBody } = one.structuredContent as Record<string, unknown>
      const { as_of: _b, ...listBody } = list.structuredContent as Record<string, unknown>
      expect(oneBody, name).toEqual(listBody)
    }
    const map = (await call('process_map', { object_types: 'orders' })).structuredContent as { object_types: { object_type: string }[] }
    expect(map.object_types.map((m) => m.object_type)).toEqual(['orders'])
  })

  it('still refuses what has no plain meaning, naming the argument', async () => {
    const r = await call('get_object', { type: 'orders', id: { n: 990001 } })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toMatch(/^id: /)
    const list = await call('process_map', { object_types: [1, { x: 1 }] })
    expect(list.isError).toBe(true)
    expect(textOf(list)).toMatch(/^object_types\/1: /)
  })
})

describe('MCP tool schemas', () => {
  it('have no patternProperties whose value schema has no type, in any input or output schema', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((x) => x.name)).toEqual(READ_TOOLS.map((x) => x.name))
    const untyped: string[] = []
    const visit = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return
      for (const [key, value] of Object.entries(node)) {
        if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
          for (const [pattern, sub] of Object.entries(value))
            if (typeof sub !== 'object' || sub === null || !('type' in sub)) untyped.push(`${path}/${pattern}`)
        }
        visit(value, `${path}/${key}`)
      }
    }
    for (const tool of tools) {
      visit(tool.inputSchema, `${tool.name}/inputSchema`)
      visit(tool.outputSchema, `${tool.name}/outputSchema`)
    }
    expect(untyped).toEqual([])
    // The objects of any JSON values are still objects of any keys.
    const getObject = tools.find((x) => x.name === 'get_object')?.outputSchema?.properties?.object as { properties: Record<string, unknown> } | undefined
    const attributes = getObject?.properties.attributes
    expect(attributes).toMatchObject({ type: 'object', additionalProperties: true })
  })
})
