/**
 * API tier: every MCP tool's default answer fits its budget (docs/analysis.md#answers-that-fit-an-agents-context)
 * on a dataset like the running example's employees, sent through the HTTP API: one object type whose
 * traces run to thousands of events. Through the SDK's own client over an in-memory transport, which
 * checks each `structuredContent` against the tool's `outputSchema`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { READ_TOOLS } from '../../src/mcp/tools.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { callWithinBudget as callOn, connectReadClient, textOf } from '../helpers/mcp-client.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

/** Employees, each with a trace of STEPS events; every event also has an order (orders have 4 events each). */
const EMPLOYEES = 6
const STEPS = 2000
const ACTIVITIES = ['Check Item', 'Pick Item', 'Pack Item', 'Confirm Order', 'Send Package']

let t: TestApp
let client: Client

/** The activity of event `i`: a fixed pseudo-random walk that often repeats the previous one, so traces have runs and differ. */
function activities(n: number): string[] {
  let seed = 12345
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    const previous = out[i - 1]
    out.push(previous !== undefined && seed % 3 === 0 ? previous : (ACTIVITIES[seed % ACTIVITIES.length] as string))
  }
  return out
}

beforeAll(async () => {
  t = await makeTestApp({ perMinute: 100_000 })
  const k = await t.newKey({ scopes: ['ingest:write', 'process:read'] })
  const names = activities(EMPLOYEES * STEPS)
  const start = Date.UTC(2024, 0, 1)
  const events = names.map((event, i) => ({
    event,
    timestamp: new Date(start + i * 60_000).toISOString(),
    properties: { station: `s${String(i % 7)}`, shift: i % 3 },
    objects: [
      { type: 'employees', id: `emp-${String(i % EMPLOYEES)}` },
      { type: 'orders', id: `o-${String(Math.floor(i / 4))}` },
    ],
  }))
  for (let b = 0; b < events.length; b += 100) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/event/batch',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ events: events.slice(b, b + 100) }),
    })
    expect(res.statusCode).toBe(200)
  }
  await t.projector.catchUp()
  client = await connectReadClient(new ProcessReader({ query: new SqliteReadModelQuery(t.rmDb), log: t.log }), k.dataset_id)
}, 300_000)
afterAll(async () => {
  await client?.close()
  await t?.close()
})

interface Budgeted {
  truncated: boolean
  approx_tokens: number
}

const callWithinBudget = (name: string, args: Record<string, unknown>, maxBytes?: number) => callOn(client, name, args, maxBytes)

/** Each tool's default call on this dataset (the one argument some need). */
const DEFAULT_CALLS: [string, Record<string, unknown>][] = [
  ['dataset_summary', {}],
  ['list_event_types', {}],
  ['list_object_types', {}],
  ['get_object', { type: 'employees', id: 'emp-0' }],
  ['find_events', {}],
  ['process_map', {}],
  ['performance', {}],
  ['variants', { object_type: 'employees' }],
  ['type_relations', {}],
  ['compare', {}],
]

describe('MCP answers on traces of thousands of events', () => {
  it('covers every tool', () => {
    expect(DEFAULT_CALLS.map(([name]) => name).sort()).toEqual(READ_TOOLS.map((x) => x.name).sort())
  })

  it.each(DEFAULT_CALLS)('%s: the default answer fits 100,000 bytes and 10,000 characters, with truncated and approx_tokens', async (name, args) => {
    await callWithinBudget(name, args)
  })

  it('variants of employees: the top variants that fit, the cut said in the text, long paths shortened, and a cursor to the rest', async () => {
    const { text, body } = await callWithinBudget('variants', { object_type: 'employees' })
    const page = body as unknown as Budgeted & { total: number; next_cursor: string | null; variants: { activities: string[] }[] }
    expect(page.total).toBe(EMPLOYEES)
    expect(page.variants.length).toBeGreaterThanOrEqual(1)
    expect(page.variants.length).toBeLessThan(EMPLOYEES)
    expect(page.variants.every((v) => v.activities.length === STEPS)).toBe(true)
    expect(page.truncated).toBe(true)
    expect(text.split('\n')[0]).toContain(`employees: ${String(EMPLOYEES)} objects in ${String(EMPLOYEES)} variants`)
    expect(text).toContain('2,000 steps: ')
    expect(text).toMatch(/ → … [\d,]+ steps … → /)
    expect(text).toContain('The answer was cut to fit 100000 bytes')
    expect(text).toContain('narrow it with a lower limit or a shorter from/to window')
    // The cursor, deflated, continues with the next variant.
    expect(page.next_cursor?.startsWith('z.')).toBe(true)
    expect(page.next_cursor?.length ?? 0).toBeLessThan(5000)
    const rest = await callWithinBudget('variants', { object_type: 'employees', cursor: page.next_cursor, max_bytes: 1024 * 1024 }, 1024 * 1024)
    const paths = (list: { activities: string[] }[]) => list.map((v) => v.activities.join('>'))
    const following = paths((rest.body as unknown as { variants: { activities: string[] }[] }).variants)
    expect(following).toHaveLength(EMPLOYEES - page.variants.length)
    expect(new Set([...paths(page.variants), ...following]).size).toBe(EMPLOYEES)
  })

  it('get_object of an employee: the first events of its trace, trace_truncated, and how to page the rest', async () => {
    const { text, body } = await callWithinBudget('get_object', { type: 'employees', id: 'emp-0' })
    const object = body as unknown as Budgeted & { trace: { timestamp: string }[]; trace_truncated: boolean }
    expect(object.trace.length).toBeGreaterThan(100)
    expect(object.trace[0]?.timestamp).toBe('2024-01-01T00:00:00.000Z')
    expect([object.trace_truncated, object.truncated]).toEqual([true, true])
    expect(text).toContain('find_events {object_type, object_id, limit}')
  })

  it('find_events {limit: 1000}: a shorter page within the budget that continues with its cursor', async () => {
    const { body } = await callWithinBudget('find_events', { object_type: 'employees', limit: 1000 })
    const page = body as unknown as Budgeted & { events: unknown[]; total: number; next_cursor: string | null }
    expect(page.events.length).toBeGreaterThan(100)
    expect(page.events.length).toBeLessThan(1000)
    expect([page.total, page.truncated]).toEqual([EMPLOYEES * STEPS, true])
  })

  it('pages list_event_types within max_bytes 1,000 to the end', async () => {
    const names: string[] = []
    let cursor: string | undefined
    let pages = 0
    for (; pages < 10; pages++) {
      const { body } = await callWithinBudget('list_event_types', { max_bytes: 1000, ...(cursor === undefined ? {} : { cursor }) }, 1000)
      names.push(...(body.event_types as { name: string }[]).map((e) => e.name))
      cursor = (body.next_cursor as string | null) ?? undefined
      if (cursor === undefined) break
    }
    // Five types with their attributes take more than 1,000 bytes: the first page was cut, and the cursor went on after it.
    expect(pages).toBeGreaterThan(0)
    expect(names).toEqual([...ACTIVITIES].sort())
  })

  it('max_bytes raises the budget up to 1 MiB and lowers it to 1,000', async () => {
    const big = await callWithinBudget('variants', { object_type: 'employees', max_bytes: 1024 * 1024 }, 1024 * 1024)
    expect((big.body as unknown as { variants: unknown[] }).variants).toHaveLength(EMPLOYEES)
    const small = await callWithinBudget('find_events', { max_bytes: 1000 }, 1000)
    expect((small.body as unknown as { events: unknown[] }).events.length).toBeGreaterThanOrEqual(1)
    const refused = (await client.callTool({ name: 'find_events', arguments: { max_bytes: 999 } })) as CallToolResult
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/^max_bytes: /)
  })
})
