/**
 * Keeps the unit tier (test/unit, README § Tests) free of I/O: no unit test file imports a module
 * that reaches files, sockets, processes or threads, a database driver, or a test helper that starts
 * a server or writes files. Read from the files' import statements (type-only imports are fine: they
 * vanish at run time). A test that needs any of these belongs in test/integration, test/api or test/e2e.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const UNIT = resolve(dirname(fileURLToPath(import.meta.url)), '../unit')

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
  'mongodb',
  'ioredis',
  '@eventstore/db-client',
  'testcontainers',
]
/** Test helpers without I/O, the only ones a unit test may import (the others start servers, processes or write files). */
const PURE_HELPERS = ['../helpers/ocel-round-trip.js', '../helpers/duration-stats-reference.js', '../contract/fixtures.js']

/** The value imports (not `import type`) of a file: each module specifier, static or dynamic. */
function valueImports(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/^\s*import\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) if (m[1] === undefined && m[2] !== undefined) out.push(m[2])
  for (const m of text.matchAll(/^\s*import\s+'([^']+)'/gm)) if (m[1] !== undefined) out.push(m[1])
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) if (m[1] !== undefined) out.push(m[1])
  return out
}

function forbidden(spec: string): boolean {
  const bare = spec.startsWith('node:') ? spec.slice('node:'.length) : spec
  if (IO_MODULES.includes(bare)) return true
  return (spec.includes('/helpers/') || spec.includes('/contract/')) && !PURE_HELPERS.includes(spec)
}

describe('the unit tier', () => {
  const files = readdirSync(UNIT).filter((n) => n.endsWith('.test.ts'))

  it('has test files', () => {
    expect(files.length).toBeGreaterThan(10)
  })

  it('imports nothing that does I/O', () => {
    const found = files.flatMap((name) =>
      valueImports(readFileSync(join(UNIT, name), 'utf8'))
        .filter(forbidden)
        .map((spec) => `test/unit/${name} imports ${spec}`),
    )
    expect(found).toEqual([])
  })

  it('finds a forbidden import where there is one', () => {
    const sample =
      "import { readFileSync } from 'node:fs'\nimport type { Db } from 'mongodb'\nimport { makeTestApp } from '../helpers/test-app.js'\nconst m = await import('node:child_process')\n"
    expect(valueImports(sample).filter(forbidden)).toEqual(['node:fs', '../helpers/test-app.js', 'node:child_process'])
  })
})
