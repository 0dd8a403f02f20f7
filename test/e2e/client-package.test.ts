/**
 * e2e: the TypeScript client as a new user gets it. The workspace clients/typescript is packed
 * (`npm pack`), a fresh project in a temp dir installs the tarball alone, and scripts there import
 * `@ocelog/client` and send to the built service, running as a real process with a low rate limit
 * (20 requests per 2-second window per key), so the queue meets 429s.
 * The tests that run scripts or tsc in the project run side by side (each its own files and its own
 * key, so its own budget): the queue's test spends most of its time waiting out 429s.
 * Needs `npm run build` (npm test does it) and the npm registry or npm's cache for `typebox`.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, type ExpectStatic, expect, it } from 'vitest'
import { startService, type RunningService } from '../helpers/service.js'

const execFileP = promisify(execFile)
const ROOT = process.cwd()
const CLIENT_DIR = join(ROOT, 'clients/typescript')
const CLIENT_ENTRY = join(CLIENT_DIR, 'dist/index.js')
/** The server's dependencies that the client package must not bring along. */
const SERVER_ONLY = ['better-sqlite3', 'mongodb', '@eventstore/db-client', 'fastify', 'ioredis']
/** 600 per minute in a 2 s window: a budget of 20 requests per window. */
const LOW_LIMIT = { OCELOG_RATE_LIMIT_PER_MINUTE: '600', OCELOG_RATE_LIMIT_WINDOW_SECONDS: '2' }

interface ReplayLine {
  type: string
  data: { event_id: string; event_type: string; objects: { type: string; id: string }[]; properties: Record<string, unknown> }
}

let service: RunningService
let project: string
let tarballFiles: string[]

async function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  return execFileP(file, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 })
}

/** Runs a script of the fresh project with node; its stdout is one JSON line. */
async function runScript(name: string, source: string, env: Record<string, string>): Promise<unknown> {
  writeFileSync(join(project, name), source)
  const { stdout } = await run(process.execPath, [name], project, env)
  return JSON.parse(stdout)
}

/** The dataset's records by `ocelog replay --json`; its exit code is checked with `expect`, the calling test's own. */
async function replay(expect: ExpectStatic, datasetId: string): Promise<ReplayLine[]> {
  const r = await service.cli(['replay', '--dataset', datasetId, '--json'])
  expect(r.code, r.stderr).toBe(0)
  const text = r.stdout.trim()
  return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line))
}

beforeAll(async () => {
  if (!existsSync(CLIENT_ENTRY)) throw new Error(`${CLIENT_ENTRY} is missing: run \`npm run build\` first (npm test does it)`)
  project = mkdtempSync(join(tmpdir(), 'ocelog-client-user-'))
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], CLIENT_DIR)
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[]
  if (info === undefined) throw new Error(`npm pack printed no tarball:\n${packed.stdout}`)
  tarballFiles = info.files.map((f) => f.path).sort()
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'ocelog-client-user', private: true, type: 'module' }, null, 2)}\n`)
  await run('npm', ['install', join(project, info.filename), '--prefer-offline', '--no-audit', '--no-fund'], project)
  service = await startService({ env: LOW_LIMIT })
}, 180_000)

afterAll(async () => {
  await service?.stop()
  if (project !== undefined) rmSync(project, { recursive: true, force: true })
})

describe('@ocelog/client installed alone in a fresh project', () => {
  it('packs only its built files and package.json', () => {
    expect(tarballFiles).toContain('package.json')
    expect(tarballFiles).toContain('dist/index.js')
    expect(tarballFiles).toContain('dist/index.d.ts')
    // The contract (request and response schemas, limits) that the declarations import and the service validates with.
    expect(tarballFiles).toContain('dist/contract/schemas.d.ts')
    expect(tarballFiles).toContain('dist/contract/limits.js')
    expect(tarballFiles.filter((f) => f !== 'package.json' && !/^dist\/.+\.(js|d\.ts)$/.test(f))).toEqual([])
  })

  it('brings in none of the server dependencies: only itself, typebox and uuid (its idempotency keys)', () => {
    const modules = join(project, 'node_modules')
    for (const name of SERVER_ONLY) expect(existsSync(join(modules, name)), name).toBe(false)
    const installed = readdirSync(modules)
      .filter((d) => !d.startsWith('.'))
      .flatMap((d) => (d.startsWith('@') ? readdirSync(join(modules, d)).map((s) => `${d}/${s}`) : [d]))
      .sort()
    expect(installed).toEqual(['@ocelog/client', 'typebox', 'uuid'])
  })

  it.concurrent('has declarations that type-check in the fresh project, with the API types enforced', async ({ expect }) => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          // Checking every library's declarations takes minutes on a busy machine; the two @ts-expect-error
          // lines below fail the check if the package's declarations do not resolve (their types would be any).
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    )
    writeFileSync(
      join(project, 'consumer.ts'),
      [
        "import { OcelogClient, OcelogQueueError, type ClientStats, type EventInput } from '@ocelog/client'",
        "const client = new OcelogClient({ baseUrl: 'http://localhost:8080', apiKey: 'k', whenFull: 'drop', onError: (e: OcelogQueueError) => console.error(e.kind) })",
        "const event: EventInput = { event: 'place order', objects: [{ type: 'order', id: 'o1' }] }",
        '// @ts-expect-error: objects is required, so EventInput is the real schema type, not any',
        "const bad: EventInput = { event: 'place order' }",
        'const queued: Promise<boolean> = client.enqueueEvent(event)',
        '// @ts-expect-error: enqueueEvent takes an event, so the client class is typed, not any',
        'client.enqueueEvent(42)',
        'const stats: ClientStats = client.stats()',
        'console.log(bad, queued, stats.rateLimited)',
        '',
      ].join('\n'),
    )
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', project], project).catch((error: { stdout?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: `tsc exited ${String(error.code)}`,
    }))
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe('')
  }, 120_000)

  it.concurrent('exports the contract (the schemas the service validates with, and its limits) as @ocelog/client/contract', async ({ expect }) => {
    const out = await runScript(
      'contract.mjs',
      [
        "import { EventInput, LIMITS } from '@ocelog/client/contract'",
        "import { Compile } from 'typebox/compile'",
        'const check = Compile(EventInput)',
        "const ok = check.Check({ event: 'place order', objects: [{ type: 'order', id: 'o1' }] })",
        "const tooLong = check.Check({ event: 'x'.repeat(LIMITS.eventNameMax + 1), objects: [{ type: 'order', id: 'o1' }] })",
        'console.log(JSON.stringify({ ok, tooLong, batchItemsMax: LIMITS.batchItemsMax }))',
      ].join('\n'),
      {},
    )
    expect(out).toEqual({ ok: true, tooLong: false, batchItemsMax: 100 })
  })

  it.concurrent('sends an event from a script that imports it', async ({ expect }) => {
    const key = await service.createKey({ name: 'package-send' })
    const out = await runScript(
      'send.mjs',
      [
        "import { OcelogClient } from '@ocelog/client'",
        'const client = new OcelogClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY })',
        "const r = await client.sendEvent({ event: 'place order', timestamp: '2024-05-01T10:00:00Z', objects: [{ type: 'order', id: 'o-1', qualifier: 'order' }] })",
        'console.log(JSON.stringify(r))',
      ].join('\n'),
      { BASE: service.url, KEY: key.key },
    )
    expect(out).toEqual(expect.objectContaining({ success: true, event_type: 'place order', objects_count: 1 }))
    const records = await replay(expect, key.dataset_id)
    expect(records.map((r) => [r.type, r.data.event_id, r.data.objects[0]?.id])).toEqual([['EventRecorded', (out as { event_id: string }).event_id, 'o-1']])
  })

  it.concurrent('enqueues 10,000 events in a tight loop under the low rate limit and records each exactly once, waiting out Retry-After', async ({
    expect,
  }) => {
    const key = await service.createKey({ name: 'package-queue' })
    const stats = (await runScript(
      'enqueue.mjs',
      [
        "import { OcelogClient } from '@ocelog/client'",
        'const errors = []',
        'const client = new OcelogClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY, maxQueueSize: 1000, onError: (e) => errors.push(e.message) })',
        'for (let i = 0; i < 10000; i++) {',
        "  await client.enqueueEvent({ event: 'ship parcel', timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(), objects: [{ type: 'parcel', id: 'p' + i }], properties: { i } })",
        '}',
        'await client.flush()',
        'await client.close()',
        'console.log(JSON.stringify({ ...client.stats(), errors }))',
      ].join('\n'),
      { BASE: service.url, KEY: key.key },
    )) as Record<string, unknown>

    expect(stats).toEqual(expect.objectContaining({ enqueued: 10_000, recorded: 10_000, failed: 0, dropped: 0, queued: 0, errors: [] }))
    // The key's budget is 20 requests per window and the queue needs 100: the client met 429s and waited them out.
    expect(stats.rateLimited).toBeGreaterThan(0)
    expect(stats.requests).toBe(100 + (stats.rateLimited as number))

    const records = await replay(expect, key.dataset_id)
    expect(records).toHaveLength(10_000)
    expect(records.every((r) => r.type === 'EventRecorded')).toBe(true)
    expect(new Set(records.map((r) => r.data.event_id)).size).toBe(10_000)
    // Exactly once, and in enqueue order: the queue sends one batch at a time.
    expect(records.map((r) => r.data.properties.i)).toEqual(Array.from({ length: 10_000 }, (_, i) => i))
    expect(records.map((r) => r.data.objects[0]?.id)).toEqual(Array.from({ length: 10_000 }, (_, i) => `p${String(i)}`))
  }, 180_000)

  it.concurrent('sends what is still queued when a script ends without flush or close', async ({ expect }) => {
    const key = await service.createKey({ name: 'package-exit' })
    await runScript(
      'forget.mjs',
      [
        "import { OcelogClient } from '@ocelog/client'",
        'const client = new OcelogClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY, flushIntervalMs: 3600000 })',
        "for (let i = 0; i < 5; i++) await client.enqueueEvent({ event: 'ship parcel', objects: [{ type: 'parcel', id: 'q' + i }] })",
        'console.log(JSON.stringify(client.stats()))',
      ].join('\n'),
      { BASE: service.url, KEY: key.key },
    )
    const records = await replay(expect, key.dataset_id)
    expect(records.map((r) => r.data.objects[0]?.id)).toEqual(['q0', 'q1', 'q2', 'q3', 'q4'])
  })
})
