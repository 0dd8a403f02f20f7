/**
 * Keeps the unit tier (test/unit, README § Tests) free of I/O: no unit test file loads, directly or
 * through any file or package it imports, a module that reaches files, sockets, processes or threads,
 * or a database or redis driver. A test that needs any of these belongs in test/integration, test/api
 * or test/e2e.
 *
 * Imports are followed to their ends: through our own files by reading their import and re-export
 * statements (type-only ones are left out: they vanish at run time), and into each package they
 * reach by loading that package in a node process of its own with test/helpers/trace-modules.mjs,
 * which writes down every module the load pulls in, the package's own imports included.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const UNIT = join(ROOT, 'test', 'unit')
const TRACER = join(ROOT, 'test', 'helpers', 'trace-modules.mjs')

/** Modules that do I/O: Node's file, network, process and thread modules, and the database and redis drivers. */
const IO_MODULES = [
  'fs',
  'fs/promises',
  'net',
  'http',
  'https',
  'http2',
  'dgram',
  'child_process',
  'worker_threads',
  'cluster',
  'better-sqlite3',
  'pg',
  'mongodb',
  'ioredis',
  '@eventstore/db-client',
  'testcontainers',
]

/** Bare specifiers of our own sources, as tsconfig.json's `paths` and vitest.config.ts's aliases resolve them. */
const ALIASES: Record<string, string> = {
  '@ocelog/client': 'clients/typescript/src/index.ts',
  '@ocelog/client/contract': 'clients/typescript/src/contract/index.ts',
}

/** The test runner, loaded in every tier before any test file: not followed. */
const RUNNER = 'vitest'

/** The value imports of a TypeScript file: each module specifier of an import, a re-export or a dynamic import, type-only ones left out. */
function valueImports(text: string): string[] {
  const out: string[] = []
  // The clause between `import`/`export` and `from` holds no quote, parenthesis, `=` or `:`: a declaration (`export function f(`) stops there.
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?([^'"();=:]*?)\s*from\s+'([^']+)'/gm)) {
    const [, , typeOnly, clause, spec] = m
    if (typeOnly !== undefined || spec === undefined) continue
    // `import { type A, type B } from` names types alone, and goes as `import type` does.
    const named = /^\{([^}]*)\}$/.exec(clause?.trim() ?? '')?.[1]
    const names = named
      ?.split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '')
    if (names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type '))) continue
    out.push(spec)
  }
  for (const m of text.matchAll(/^\s*import\s+'([^']+)'/gm)) if (m[1] !== undefined) out.push(m[1])
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) if (m[1] !== undefined) out.push(m[1])
  return out
}

/** The file of ours a specifier names (a `.js` specifier names its `.ts` source), or undefined for a built-in or a package. */
function ownFile(from: string, spec: string): string | undefined {
  const alias = ALIASES[spec]
  if (alias !== undefined) return join(ROOT, alias)
  if (!spec.startsWith('.')) return undefined
  const path = resolve(dirname(from), spec)
  const source = path.replace(/\.js$/, '.ts')
  return existsSync(source) ? source : path
}

/** A module reached from a unit test file, and the chain of our files that leads to it (the test file first). */
interface Reached {
  /** A built-in or package specifier, or the repository path of a file of ours that is not there. */
  spec: string
  via: string[]
  /** True when `spec` is a file of ours that is not there. */
  missing: boolean
}

/**
 * The built-ins and packages that `start` loads, following its value imports through our own
 * files to their ends (each with the shortest chain that reaches it), and the files of ours it
 * imports that are not there.
 */
function reachedFrom(start: string): Reached[] {
  const chains = new Map<string, string[]>([[start, [relative(ROOT, start)]]])
  const queue = [start]
  const out = new Map<string, Reached>()
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const via = chains.get(file) ?? []
    for (const spec of valueImports(readFileSync(file, 'utf8'))) {
      const own = ownFile(file, spec)
      if (own === undefined) {
        if (!out.has(spec)) out.set(spec, { spec, via, missing: false })
      } else if (!existsSync(own)) out.set(own, { spec: relative(ROOT, own), via, missing: true })
      else if (!chains.has(own)) {
        chains.set(own, [...via, relative(ROOT, own)])
        queue.push(own)
      }
    }
  }
  return [...out.values()]
}

/** The name of a Node built-in without its `node:` prefix, or undefined for anything else. */
function builtinName(spec: string): string | undefined {
  return isBuiltin(spec) ? spec.replace(/^node:/, '') : undefined
}

/** The package a specifier names (`@scope/name` or `name`), without the path inside it. */
function packageOf(spec: string): string {
  const parts = spec.split('/')
  return (spec.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/')
}

const execFileAsync = promisify(execFile)

/**
 * The I/O modules (IO_MODULES) that loading `specs` (the entry points of one package that the tier
 * imports) pulls in, found by importing them in a node process of their own (cwd ROOT) under
 * test/helpers/trace-modules.mjs; `dir` holds the trace file.
 */
async function ioModulesLoadedBy(specs: string[], dir: string): Promise<string[]> {
  const trace = join(dir, `${(specs[0] ?? '').replace(/[^a-z0-9]+/gi, '-')}.txt`)
  writeFileSync(trace, '')
  const load = 'for (const spec of process.argv.slice(1)) await import(spec)'
  await execFileAsync(process.execPath, ['--import', TRACER, '--input-type=module', '-e', load, ...specs], {
    cwd: ROOT,
    env: { ...process.env, OCELOG_TRACE_MODULES: trace },
  })
  const loaded = new Set<string>()
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const name = builtinName(line)
    if (name !== undefined && IO_MODULES.includes(name)) loaded.add(name)
    // A package's own file, as a path or URL inside node_modules: the package it belongs to.
    const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line)?.[1]
    if (inPackage !== undefined && IO_MODULES.includes(inPackage)) loaded.add(inPackage)
  }
  return [...loaded].sort()
}

/**
 * One line per way `reached` leads to I/O: `a.test.ts → b.ts → node:fs`, or `… → pkg/entry (pkg loads net)`.
 * @param packageIo the I/O modules each package loads, by package name (packageOf).
 */
function findings(reached: Reached[], packageIo: Map<string, string[]>): string[] {
  const out: string[] = []
  for (const { spec, via, missing } of reached) {
    const chain = via.join(' → ')
    const builtin = builtinName(spec)
    if (missing) out.push(`${chain} imports a file that is not there: ${spec}`)
    else if (builtin !== undefined) {
      if (IO_MODULES.includes(builtin)) out.push(`${chain} → ${spec}`)
    } else if (IO_MODULES.includes(packageOf(spec))) out.push(`${chain} → ${spec}`)
    else {
      const io = packageIo.get(packageOf(spec)) ?? []
      if (io.length > 0) out.push(`${chain} → ${spec} (${packageOf(spec)} loads ${io.join(', ')})`)
    }
  }
  return out
}

/** The package specifiers in `reached` to trace: neither built-ins, nor I/O modules themselves, nor the test runner. */
function packagesToTrace(reached: Reached[]): string[] {
  return reached
    .filter((r) => !r.missing)
    .map((r) => r.spec)
    .filter((spec) => builtinName(spec) === undefined && !IO_MODULES.includes(packageOf(spec)) && packageOf(spec) !== RUNNER)
}

describe('the unit tier', () => {
  const files = readdirSync(UNIT).filter((n) => n.endsWith('.test.ts'))
  let traces: string

  beforeAll(() => {
    traces = mkdtempSync(join(tmpdir(), 'ocelog-unit-tier-'))
  })
  afterAll(() => {
    rmSync(traces, { recursive: true, force: true })
  })

  it('has test files', () => {
    expect(files.length).toBeGreaterThan(10)
  })

  it('loads nothing that does I/O, through any file or package it imports', async () => {
    const reached = files.map((name) => reachedFrom(join(UNIT, name)))
    // Each package once, with every entry point of it that the tier imports (typebox and typebox/compile).
    const packages = new Map<string, Set<string>>()
    for (const spec of reached.flatMap(packagesToTrace)) packages.set(packageOf(spec), (packages.get(packageOf(spec)) ?? new Set()).add(spec))
    // The packages the tier reaches today; a new one is traced like these.
    expect(packages.size).toBeGreaterThan(3)
    const io = new Map(await Promise.all([...packages].map(async ([name, specs]) => [name, await ioModulesLoadedBy([...specs], traces)] as const)))
    expect(reached.flatMap((r) => findings(r, io))).toEqual([])
  })

  it('reads value imports and re-exports, and leaves type-only ones out', () => {
    const sample = [
      "import { readFileSync } from 'node:fs'",
      "import type { Db } from 'mongodb'",
      "import { type Pool, type PoolClient } from 'pg'",
      "import { type Redis, Cluster } from 'ioredis'",
      'import {',
      '  makeTestApp,',
      "} from '../helpers/test-app.js'",
      "export { openLog } from '../../src/adapters/sqlite/log/database.js'",
      "export type { Config } from '../../src/app/config.js'",
      "const m = await import('node:child_process')",
    ].join('\n')
    expect(valueImports(sample)).toEqual(['node:fs', 'ioredis', '../helpers/test-app.js', '../../src/adapters/sqlite/log/database.js', 'node:child_process'])
  })

  it('follows a file to the I/O module another file of its imports loads, and a package to the I/O module it loads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-unit-tier-sample-'))
    try {
      writeFileSync(join(dir, 'a.test.ts'), "import { b } from './b.js'\nimport { c } from './c.js'\n")
      writeFileSync(join(dir, 'b.ts'), "export { c } from './c.js'\nimport { createServer } from 'node:net'\n")
      writeFileSync(join(dir, 'c.ts'), "import { RateLimiterMemory } from 'rate-limiter-flexible'\nimport { x } from './gone.js'\n")
      const reached = reachedFrom(join(dir, 'a.test.ts'))
      // rate-limiter-flexible's index requires its cluster limiter, which requires node's cluster module.
      const io = new Map([['rate-limiter-flexible', await ioModulesLoadedBy(['rate-limiter-flexible'], dir)]])
      const at = (name: string) => relative(ROOT, join(dir, name))
      expect(findings(reached, io)).toEqual([
        `${at('a.test.ts')} → ${at('b.ts')} → node:net`,
        `${at('a.test.ts')} → ${at('c.ts')} → rate-limiter-flexible (rate-limiter-flexible loads cluster)`,
        `${at('a.test.ts')} → ${at('c.ts')} imports a file that is not there: ${at('gone.js')}`,
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
