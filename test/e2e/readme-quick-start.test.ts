/**
 * e2e: README § Quick start as a newcomer runs it. `npm start` (the real script, as a process group,
 * OCELOG_DATA_DIR in a temp dir, PORT free), then every `sh` block of the section through bash, in
 * order, in a temp working dir (the variables a block sets carry to the next), with two rewrites only:
 * `npm run --silent ocelog --` is the built CLI and `localhost:8080` the service's port. Each
 * `json` block after a block must match what the block printed: the same values in the same order,
 * the same keys in the same order, equal values except where the README writes `…`. The log lines of
 * the `text` block must be among the service's, and the MCP error example is the service's text.
 * The Order Management import reads the running example of the shared folder of real logs (a
 * variant of it, with the same object types) and is skipped, saying why, without it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, requireBuild } from '../helpers/cli.js'
import { itWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { freePort } from '../helpers/free-port.js'
import { exited } from '../helpers/serve-process.js'

const ROOT = process.cwd()
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** One fenced block of the README: its language and text. */
interface Block {
  lang: string
  text: string
}

/** The fenced blocks of README section `heading` (`## …`), in order. */
function sectionBlocks(heading: string): Block[] {
  const start = README.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`README has no ${heading}`)
  const end = README.indexOf('\n## ', start + heading.length + 2)
  const section = README.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? '', text: m[2] ?? '' }))
}

/** Splits text holding JSON values one after another (on lines of their own, wrapped, or run together) into the values. */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = []
  let depth = 0
  let inString = false
  let from = -1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === '{' || c === '[') {
      if (depth === 0) from = i
      depth++
    } else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) values.push(JSON.parse(text.slice(from, i + 1)))
    }
  }
  return values
}

/** Keys whose shown values are examples of their type (the log lines' time, pid and host name). */
const EXAMPLE_KEYS = new Set(['time', 'pid', 'hostname'])

/**
 * Where `actual` departs from `shown` (a README value): [] when they match. Objects need the same
 * keys in the same order, arrays the same length; a shown string with `…` matches any string with
 * the text around each `…`; other values must be equal.
 */
function mismatches(shown: unknown, actual: unknown, path = '$'): string[] {
  if (typeof shown === 'string' && shown.includes('…')) {
    const pattern = new RegExp(
      `^${shown
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      's',
    )
    return typeof actual === 'string' && pattern.test(actual) ? [] : [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(shown)}`]
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length) return [`${path}: ${JSON.stringify(actual)} is not an array of ${String(shown.length)}`]
    return shown.flatMap((s, i) => mismatches(s, actual[i], `${path}[${String(i)}]`))
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: ${JSON.stringify(actual)} is not an object`]
    const keys = Object.keys(shown)
    const actualKeys = Object.keys(actual)
    if (keys.join() !== actualKeys.join()) return [`${path}: keys ${actualKeys.join(', ')} are not ${keys.join(', ')}`]
    const a = actual as Record<string, unknown>
    const s = shown as Record<string, unknown>
    return keys.flatMap((k) =>
      EXAMPLE_KEYS.has(k)
        ? typeof a[k] === typeof s[k]
          ? []
          : [`${path}.${k}: ${JSON.stringify(a[k])} is not a ${typeof s[k]}`]
        : mismatches(s[k], a[k], `${path}.${k}`),
    )
  }
  return Object.is(shown, actual) ? [] : [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(shown)}`]
}

let port = 0
let work = ''
let serve: ChildProcess | null = null
let serveOut = ''
let blocks: Block[] = []
let next = 0

/** The README text with its port (8080) made the test service's. */
const onPort = (text: string) => text.replaceAll(':8080', `:${String(port)}`)

/**
 * Runs the next `sh` block of the section (past `text` blocks, the log lines) through bash in the working dir, with the variables that
 * earlier blocks set, and returns what it printed with the `json` block that follows it (if any).
 * @throws Error when the next block is not `sh`, or bash exits non-zero (with its stderr).
 */
function runNextBlock(): { stdout: string; stderr: string; shown: Block | null } {
  while (blocks[next]?.lang === 'text') next++
  const block = blocks[next]
  if (block?.lang !== 'sh') throw new Error(`README § Quick start: block ${String(next)} is ${block?.lang ?? 'missing'}, not sh`)
  next++
  const shown = blocks[next]?.lang === 'json' ? (blocks[next++] ?? null) : null
  const script = block.text.replaceAll('npm run --silent ocelog --', `node ${CLI}`).replaceAll('localhost:8080', `127.0.0.1:${String(port)}`)
  const names = [...script.matchAll(/(?:^|;\s*)([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1])
  const vars = join(work, '.quickstart-vars')
  const save = names.length === 0 ? '' : `\ndeclare -p ${names.join(' ')} >> ${vars}`
  const env: NodeJS.ProcessEnv = { ...process.env, OCELOG_DATA_DIR: join(work, 'data') }
  delete env.LOG_LEVEL
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', `if [ -f ${vars} ]; then . ${vars}; fi\n${script}${save}`], {
    cwd: work,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (r.status !== 0) throw new Error(`README block exited ${String(r.status ?? r.signal)}:\n${script}\n${r.stderr}`)
  return { stdout: r.stdout, stderr: r.stderr, shown }
}

/** Runs the next block and checks what it printed against the `json` block after it. */
function runAndCompare(): unknown[] {
  const { stdout, shown } = runNextBlock()
  if (shown === null) throw new Error('README § Quick start: this block has no json block after it')
  const actual = jsonValues(stdout)
  const expected = jsonValues(onPort(shown.text))
  expect(actual).toHaveLength(expected.length)
  expect(expected.flatMap((s, i) => mismatches(s, actual[i], `answer ${String(i)}`))).toEqual([])
  return actual
}

/** Reads a variable that the blocks set (from the vars file they leave). */
function quickstartVar(name: string): string {
  const r = spawnSync('bash', ['-c', `. .quickstart-vars; printf %s "$${name}"`], { cwd: work, encoding: 'utf8' })
  return r.stdout
}

async function getJson(path: string, key: string): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${String(port)}${path}`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

beforeAll(async () => {
  requireBuild()
  const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-stamp.mjs'), 'check'], { encoding: 'utf8' })
  if (check.status !== 0) throw new Error(`dist/ is older than its sources (${check.stderr.trim()}): run \`npm run build\` first (npm test does)`)
  blocks = sectionBlocks('## Quick start')
  port = await freePort()
  work = mkdtempSync(join(tmpdir(), 'ocelog-readme-'))
  mkdirSync(join(work, 'data'))
  if (blocks[0]?.lang !== 'sh' || blocks[0].text.trim() !== 'npm start') throw new Error('README § Quick start does not begin with `npm start`')
  next = 1
  // The README's `npm start`, in the repository, as its own process group so that the whole of it stops.
  const env: NodeJS.ProcessEnv = { ...process.env, OCELOG_DATA_DIR: join(work, 'data'), PORT: String(port) }
  delete env.LOG_LEVEL
  delete env.HOST
  serve = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  serve.stdout?.setEncoding('utf8').on('data', (chunk: string) => (serveOut += chunk))
  serve.stderr?.setEncoding('utf8').on('data', (chunk: string) => (serveOut += chunk))
  const deadline = Date.now() + 30_000
  while (!serveOut.includes('"msg":"Ocelog listening on ')) {
    if (serve.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not listen within 30 s:\n${serveOut}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}, 60_000)

afterAll(async () => {
  if (serve?.pid !== undefined && serve.exitCode === null && serve.signalCode === null) {
    process.kill(-serve.pid, 'SIGTERM')
    const timer = setTimeout(() => serve?.pid !== undefined && process.kill(-serve.pid, 'SIGKILL'), 10_000)
    await exited(serve)
    clearTimeout(timer)
  }
  if (work !== '') rmSync(work, { recursive: true, force: true })
})

describe('README § Quick start', () => {
  it('npm start starts the built service without building and logs the lines shown', () => {
    expect(serveOut).not.toContain('; building')
    const logged = serveOut
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const shown = blocks.find((b) => b.lang === 'text')
    expect(shown).toBeDefined()
    const lines = jsonValues(onPort(shown?.text ?? '')) as Record<string, unknown>[]
    expect(lines.map((l) => l.msg)).toEqual([`Server listening at http://127.0.0.1:${String(port)}`, `Ocelog listening on http://0.0.0.0:${String(port)}`])
    for (const line of lines) {
      const actual = logged.find((l) => l.msg === line.msg)
      expect(actual, String(line.msg)).toBeDefined()
      expect(mismatches(line, actual, String(line.msg))).toEqual([])
    }
  })

  it('creates the key into ./data, which git ignores', () => {
    runNextBlock()
    const created = JSON.parse(readFileSync(join(work, 'data', 'quickstart-key.json'), 'utf8')) as Record<string, unknown>
    expect(Object.keys(created)).toEqual(['key_id', 'key', 'dataset_id', 'dataset_name', 'scopes', 'rate_limit_per_minute'])
    expect(quickstartVar('KEY')).toBe(created.key)
    expect(quickstartVar('DATASET')).toBe(created.dataset_id)
    // git's own answer in a checkout (exit 0: ignored); outside one (128), the rule in .gitignore.
    const ignored = spawnSync('git', ['check-ignore', '-q', 'data/quickstart-key.json'], { cwd: ROOT })
    if (ignored.status === 128) expect(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('data/')
    else expect(ignored.status).toBe(0)
  })

  it('posts the event, the batch and the upserts, answered as shown', () => {
    const [event] = runAndCompare() as Record<string, unknown>[]
    const [batch] = runAndCompare() as Record<string, unknown>[]
    const [first, second] = runAndCompare() as Record<string, unknown>[]
    expect(event?.event_id).toMatch(/^[0-9a-f]{8}-/)
    expect(batch?.event_ids).toEqual([expect.stringMatching(/^[0-9a-f]{8}-/)])
    expect(second?.object_id).toBe(first?.object_id)
  })

  it('exports the dataset as OCEL 2.0 into ./data and replays its log', () => {
    const { stdout, stderr } = runNextBlock()
    const doc = JSON.parse(readFileSync(join(work, 'data', 'quickstart.ocel2.json'), 'utf8')) as { events: { type: string }[]; objects: { id: string }[] }
    expect(doc.events.map((e) => e.type).sort()).toEqual(['Create Order', 'Pay Order'])
    expect(doc.objects.map((o) => o.id).sort()).toEqual(['c-7', 'c-9', 'o-1'])
    // Two events and two upserts, in the order they were recorded; the refused Ship Order is not in the log.
    const records = stdout.trimEnd().split('\n')
    expect(records.map((line) => /^\s+\d+\s+\S+\s+(\w+)/.exec(line)?.[1])).toEqual(['EventRecorded', 'EventRecorded', 'ObjectUpserted', 'ObjectUpserted'])
    expect(stdout).not.toContain('Ship Order')
    expect(stderr).toContain(`4 record(s) in stream dataset-${quickstartVar('DATASET')}`)
  })

  itWithSharedOcel(
    'imports the Order Management log into a dataset of its own and maps its orders',
    async () => {
      symlinkSync(join(OCEL_DIR, 'derived', 'ocpa__running-example.ocel2.json'), join(work, 'data', 'order-management.json'))
      const { stdout } = runNextBlock()
      expect(stdout).toContain('Imported: data/order-management.json (OCEL 2.0 JSON) into dataset ')
      expect(stdout).toMatch(/^ {2}failed {6}none$/m)
      const omKey = quickstartVar('OM_KEY')
      const om = JSON.parse(readFileSync(join(work, 'data', 'order-management-key.json'), 'utf8')) as { key: string; dataset_id: string }
      expect(omKey).toBe(om.key)
      expect(om.dataset_id).not.toBe(quickstartVar('DATASET'))
      const map = JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '') as { dataset_id: string }
      expect(map.dataset_id).toBe(om.dataset_id)
      // Once the read models have caught up, the map is of `orders`, and the toy dataset has only its own types.
      const deadline = Date.now() + 180_000
      for (;;) {
        const summary = await getJson('/v1/process/summary', omKey)
        const caughtUp = await getJson('/v1/process/map?object_type=orders', omKey)
        if (Number(caughtUp.as_of) >= Number(summary.log_position)) {
          expect((caughtUp.object_types as { object_type: string; objects: number }[]).map((t) => t.object_type)).toEqual(['orders'])
          break
        }
        if (Date.now() > deadline) throw new Error(`read models still at ${String(caughtUp.as_of)} of ${String(summary.log_position)} after 180 s`)
        await new Promise((r) => setTimeout(r, 1_000))
      }
      const toyTypes = await getJson('/v1/process/object-types', quickstartVar('KEY'))
      expect((toyTypes.object_types as { name: string }[]).map((t) => t.name).sort()).toEqual(['customer', 'order'])
    },
    300_000,
  )

  it('shows the text of a bad MCP argument as the service gives it', async () => {
    const example = /e\.g\. `(limit: [^`]+)`/.exec(README)?.[1]
    expect(example).toBeDefined()
    const res = await fetch(`http://127.0.0.1:${String(port)}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${quickstartVar('KEY')}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_events', arguments: { limit: 5000 } } }),
    })
    const body = (await res.json()) as { result: { isError: boolean; content: { text: string }[] } }
    expect(body.result.isError).toBe(true)
    expect(body.result.content[0]?.text).toBe(example)
  })

  it('leaves nothing in the working dir outside ./data', () => {
    expect(existsSync(join(work, 'data', 'quickstart-key.json'))).toBe(true)
    expect(readdirSync(work).filter((f) => f !== 'data' && f !== '.quickstart-vars')).toEqual([])
  })
})
