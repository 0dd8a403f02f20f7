/**
 * Every MCP tool's default answer fits its budget (docs/analysis.md#answers-that-fit-an-agents-context)
 * on the real running example (order management: its `employees` have traces of about 1,500 events),
 * for every object type: the log imported into SQLite the way `ocelog import` does, the tools called
 * through the SDK's own client over an in-memory transport (which checks each `structuredContent`
 * against the tool's `outputSchema`). Skipped, with the reason printed, without the shared logs.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { loadOcel } from '../helpers/load-ocel.js'
import { callWithinBudget, connectReadClient } from '../helpers/mcp-client.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const RUNNING_EXAMPLE = 'derived/ocpa__running-example.ocel2.json'

describeWithSharedOcel('MCP answers on the running example fit their budget', () => {
  let fx: SqliteFixture
  let client: Client

  beforeAll(async () => {
    fx = openSqliteFixture('ocelog-mcp-budget-')
    const ds = freshDatasetId()
    await loadOcel(readOcelFile(ocelFixture(RUNNING_EXAMPLE), parseTimeZone('UTC')), ds, { log: fx.log, store: fx.store })
    client = await connectReadClient(new ProcessReader({ query: new SqliteReadModelQuery(fx.rmDb), log: fx.log }), ds)
  }, 300_000)
  afterAll(async () => {
    await client?.close()
    await fx?.log.close()
    fx?.close()
  })

  const call = (name: string, args: Record<string, unknown>) => callWithinBudget(client, name, args)

  // One test: the object types come from the dataset itself.
  it('for the whole dataset and for every object type', { timeout: 600_000 }, async () => {
    for (const name of ['dataset_summary', 'list_event_types', 'type_relations', 'process_map', 'performance', 'compare', 'find_events']) await call(name, {})
    const types = (await call('list_object_types', {})).body.object_types as { name: string }[]
    expect(types.map((x) => x.name)).toEqual(expect.arrayContaining(['employees', 'orders', 'items']))
    const cut: string[] = []
    for (const { name: type } of types) {
      const events = (await call('find_events', { object_type: type, limit: 1 })).body.events as { objects: { type: string; id: string }[] }[]
      const id = events[0]?.objects.find((o) => o.type === type)?.id
      if (id !== undefined) await call('get_object', { type, id })
      for (const [name, args] of [
        ['variants', { object_type: type }],
        ['find_events', { object_type: type }],
        ['process_map', { object_types: type }],
        ['performance', { object_types: [type] }],
        ['compare', { object_types: [type] }],
      ] as const) {
        const { body } = await call(name, args)
        if (body.truncated === true) cut.push(`${name} ${type}`)
      }
    }
    // The employees' variants (about 24 KB each) do not all fit: the page is cut, and says so.
    expect(cut).toContain('variants employees')
    const { text } = await call('variants', { object_type: 'employees' })
    expect(text).toMatch(/ → … [\d,]+ steps … → /)
    expect(text).toContain('The answer was cut to fit 100000 bytes')
  })
})
