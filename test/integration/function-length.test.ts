/**
 * No function over 100 lines in the code that ships (src/, projections/, bench/, ui/ and the client
 * library's clients/typescript/src), read with the TypeScript compiler's parser: every function-like
 * node with a body (declarations, methods, constructors, accessors, function expressions and arrow
 * functions, nested ones included), its span from its first token to its closing brace.
 *
 * A table (a list of routes or schemas, long because it has many rows, not many steps) is exempt by
 * the comment `// function-length: table` on the line before the function, or by an entry in
 * ALLOWED. Anything else over the limit is named in ALLOWED with the reason; a function there "to
 * split" may not grow past the length it is listed with, and an entry whose function is gone or back
 * under the limit must be removed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Lines a function may span (first token to closing brace, both included). */
const MAX_LINES = 100

/** Where functions are checked (subfolders included). */
const FOLDERS = ['src', 'projections', 'bench', 'ui', 'clients/typescript/src']

/** The comment, on the line before a function, that marks it as a table of routes or schemas. */
const TABLE_MARKER = '// function-length: table'

/**
 * Functions over the limit, by `file:name` (see nameOf), and why each may be: a table (no `lines`:
 * it grows with its rows), or "to split", with the length it may not exceed. Split them and remove
 * their entry.
 */
const ALLOWED: Record<string, { lines?: number; reason: string }> = {
  'src/api/process-routes.ts:processRoutes': { reason: 'route table: the /v1/process routes, each with its schema and a short handler' },
  'src/api/v1-routes.ts:v1Routes': { reason: 'route table: the /v1 ingestion and read routes, each with its schema and a short handler' },
}

interface LongFunction {
  /** `file:name`, the key of ALLOWED. */
  id: string
  lines: number
  line: number
}

/** The .ts files (not .d.ts) below `folder`, as repository paths. */
function tsFiles(folder: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(ROOT, folder))) {
    const path = join(folder, name)
    if (name === 'node_modules' || name === 'dist') continue
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...tsFiles(path))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/** The name a node gives the function it holds or is, or undefined when it names none. */
function ownName(node: ts.Node, sf: ts.SourceFile): string | undefined {
  if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name !== undefined) return node.name.text
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node) || ts.isPropertyDeclaration(node)) {
    return node.name.getText(sf)
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  if (ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node)) return node.name.getText(sf)
  if (ts.isFunctionExpression(node) && node.name !== undefined) return node.name.text
  return undefined
}

/**
 * The name of function `node`: the names of the functions, classes, variables and properties it
 * sits in, outermost first, joined by `.` (`Cutter.push`, `registerRoutes.handler`); an unnamed
 * callback is named by the call it is given to (`registerImport.action()`).
 */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const parts: string[] = []
  for (let n: ts.Node | undefined = node; n !== undefined && !ts.isSourceFile(n); n = n.parent) {
    const own = ownName(n, sf)
    if (own !== undefined) parts.unshift(own)
    else if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isCallExpression(n.parent)) {
      const callee = n.parent.expression
      parts.unshift(`${ts.isPropertyAccessExpression(callee) ? callee.name.text : callee.getText(sf)}()`)
    }
  }
  return parts.join('.') || '<anonymous>'
}

/** The functions of `text` (file `file`) over MAX_LINES lines, those marked as tables left out. */
function longFunctions(file: string, text: string): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const lines = text.split('\n')
  const out: LongFunction[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line
      const last = sf.getLineAndCharacterOfPosition(node.end).line
      const span = last - first + 1
      if (span > MAX_LINES && lines[first - 1]?.trim() !== TABLE_MARKER) out.push({ id: `${file}:${nameOf(node, sf)}`, lines: span, line: first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

describe('function length', () => {
  const found = FOLDERS.flatMap(tsFiles).flatMap((file) => longFunctions(relative(ROOT, join(ROOT, file)), readFileSync(join(ROOT, file), 'utf8')))

  it(`finds no function over ${String(MAX_LINES)} lines but the allowed ones, and none grown past its allowance`, () => {
    const over = found
      .filter((f) => {
        const allowed = ALLOWED[f.id]
        return allowed === undefined || (allowed.lines !== undefined && allowed.lines < f.lines)
      })
      .map((f) => `${f.id} (line ${String(f.line)}): ${String(f.lines)} lines${ALLOWED[f.id] === undefined ? '' : `, allowed ${String(ALLOWED[f.id]?.lines)}`}`)
    expect(over).toEqual([])
  })

  it('lists no allowed function that is gone or back under the limit (remove its entry)', () => {
    const present = new Set(found.map((f) => f.id))
    expect(Object.keys(ALLOWED).filter((id) => !present.has(id))).toEqual([])
  })

  it('measures spans, names nested functions, and exempts a marked table', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${String(i)}`).join('\n')
    const text = [
      `export function short(): void {\n${body(98)}\n}`,
      `export function long(): void {\n${body(99)}\n}`,
      `class Plan {\n  cut(): void {\n${body(100)}\n  }\n}`,
      `const f = () => {\n  const inner = function () {\n${body(100)}\n  }\n}`,
      `program.action(async () => {\n${body(99)}\n})`,
      `${TABLE_MARKER}\nexport function routes(): void {\n${body(120)}\n}`,
    ].join('\n')
    expect(longFunctions('sample.ts', text).map((f) => `${f.id} ${String(f.lines)}`)).toEqual([
      'sample.ts:long 101',
      'sample.ts:Plan.cut 102',
      'sample.ts:f 104',
      'sample.ts:f.inner 102',
      'sample.ts:action() 101',
    ])
  })
})
