/**
 * e2e: what `ocelog serve` loads. Every module it loads stays in its heap for good, in the API
 * thread (and the projector worker's modules in the worker's), so the modules that only other
 * commands or rare routes need are loaded when they are used (docs/operations.md#lazy-modules):
 * - the MCP SDK and zod, on the first `/mcp` call (src/api/mcp-route.ts);
 * - the OCEL readers and writers (fast-xml-parser) and the HTTP client, by `import` and `export`;
 * - ioredis, only with REDIS_URL (src/adapters/rate-limiter.ts).
 * The built service runs with test/helpers/trace-modules.mjs, which writes down every module it loads.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedKey } from '../../src/write/admin.js'
import { startService, type RunningService } from '../helpers/service.js'

const TRACER = fileURLToPath(new URL('../helpers/trace-modules.mjs', import.meta.url))

/** Modules that serve must not load before they are used, by the path segment that names them. */
const LOADED_ON_USE = {
  mcpSdk: '/node_modules/@modelcontextprotocol/sdk/',
  zod: '/node_modules/zod/',
  xml: '/node_modules/fast-xml-parser/',
  ioredis: '/node_modules/ioredis/',
  // The client's own modules; the API contract it ships (/clients/typescript/dist/contract/) is the service's schemas, loaded at start.
  client: '/clients/typescript/dist/client.js',
  ocelReaders: '/dist/src/ocel/import/read',
  ocelWriters: '/dist/src/ocel/write-',
}

let traceDir: string
let trace: string
let service: RunningService
let key: CreatedKey

/** The modules loaded so far, as file paths, without repeats. */
function loaded(): string[] {
  const paths = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (line.startsWith('file:') ? fileURLToPath(line) : line))
  return [...new Set(paths)]
}

const matching = (paths: string[], segment: string) => paths.filter((p) => p.includes(segment))

beforeAll(async () => {
  traceDir = mkdtempSync(join(tmpdir(), 'ocelog-e2e-footprint-'))
  trace = join(traceDir, 'modules.txt')
  writeFileSync(trace, '')
  service = await startService({ nodeArgs: ['--import', TRACER], env: { OCELOG_TRACE_MODULES: trace } })
  key = await service.createKey({ name: 'footprint' })
})
afterAll(async () => {
  await service.stop()
  rmSync(traceDir, { recursive: true, force: true })
})

describe('ocelog serve', () => {
  it('accepts and reads records without loading the modules of MCP, the OCEL files, the client or Redis', async () => {
    const auth = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' }
    const posted = await fetch(`${service.url}/v1/event`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ event: 'Place Order', objects: [{ type: 'order', id: 'o1' }] }),
    })
    expect(posted.status).toBe(200)
    const map = await fetch(`${service.url}/v1/process/map`, { headers: auth })
    expect(map.status).toBe(200)

    const paths = loaded()
    // The trace sees both kinds of module: Fastify is CommonJS, the service's own code ES modules.
    expect(matching(paths, '/node_modules/fastify/').length).toBeGreaterThan(0)
    expect(matching(paths, '/dist/src/api/mcp-route.js')).toHaveLength(1)
    for (const [name, segment] of Object.entries(LOADED_ON_USE)) expect({ name, loaded: matching(paths, segment) }).toEqual({ name, loaded: [] })
  })

  it('loads the MCP SDK on the first /mcp call, and answers it', async () => {
    const res = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'footprint', version: '1' } },
      }),
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { id: number; result: { serverInfo: { name: string } } }
    expect(body.id).toBe(1)
    expect(body.result.serverInfo.name).toBe('ocelog')
    const paths = loaded()
    expect(matching(paths, LOADED_ON_USE.mcpSdk).length).toBeGreaterThan(0)
    expect(matching(paths, LOADED_ON_USE.zod).length).toBeGreaterThan(0)
    expect(matching(paths, LOADED_ON_USE.xml)).toEqual([])
  })
})
