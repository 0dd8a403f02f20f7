/**
 * The dependency rules (README § Architecture), read from the files' import statements (static and
 * dynamic), resolved against the repository root:
 * - src/core depends only on itself and the schemas, and the schemas on themselves and the limits,
 *   so each rule below holds through every import it allows (the imports followed to their ends);
 * - projections/ depends only on src/core and the schemas; the ports name only core, schema and
 *   port types; the adapters only core, schemas, ports and each other; the projector runtime
 *   (src/projector) never reaches an adapter or the composition root (src/app), which gives it its adapters;
 * - no import cycle, between files or between folders (a folder's files count as one node).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

interface Import {
  file: string
  target: string
}

/** The .ts files of `folder` (repository paths), its subfolders included when `deep`. */
function filesOf(folder: string, deep: boolean): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(ROOT, folder))) {
    const path = join(folder, name)
    if (statSync(join(ROOT, path)).isDirectory()) {
      if (deep) out.push(...filesOf(path, true))
    } else if (name.endsWith('.ts')) out.push(path)
  }
  return out
}

/** Every relative import of `files`, as repository paths without extension (`src/core/merge`). */
function importsOf(files: readonly string[]): Import[] {
  const out: Import[] = []
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const spec = m[1]
      if (spec !== undefined) out.push({ file, target: relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '') })
    }
  }
  return out
}

function outside(imports: readonly Import[], allowed: readonly string[]): string[] {
  return imports.filter((i) => !allowed.some((a) => i.target.startsWith(a))).map((i) => `${i.file} → ${i.target}`)
}

/**
 * The cycles of a directed graph, each as its nodes in order with the first repeated at the end
 * (one per strongly connected component of more than one node, or a node that reaches itself).
 * Tarjan's algorithm for the components, then a path through each.
 */
function cyclesOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  let next = 0
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next += 1
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
        onStack.delete(w)
        component.push(w)
        if (w === v) break
      }
      if (component.length > 1 || edges.get(v)?.has(v) === true) components.push(component)
    }
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  return components.map((component) => {
    // A path from the component's first node (sorted) back to itself, inside the component.
    const members = new Set(component)
    const start = [...component].sort()[0] ?? ''
    const path = [start]
    const seen = new Set<string>([start])
    for (let at = start; ; ) {
      const outs = [...(edges.get(at) ?? [])].filter((w) => members.has(w)).sort()
      const back = outs.find((w) => w === start)
      const step = back ?? outs.find((w) => !seen.has(w)) ?? outs[0]
      if (step === undefined) break
      path.push(step)
      if (step === start || seen.has(step)) break
      seen.add(step)
      at = step
    }
    return path
  })
}

function graph(imports: readonly Import[], node: (path: string) => string): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>()
  for (const i of imports) {
    const from = node(i.file.replace(/\.ts$/, ''))
    const to = node(i.target)
    if (from === to) continue
    const set = edges.get(from) ?? new Set<string>()
    set.add(to)
    edges.set(from, set)
  }
  return edges
}

/** A file's folder as a node of the folder graph: its first two segments (`src/cli/commands/x` → `src/cli`, `projections/x` → `projections`). */
const folderOf = (path: string): string => dirname(path).split('/').slice(0, 2).join('/')

const SOURCE = [...filesOf('src', true), ...filesOf('projections', true)]
const ALL = importsOf(SOURCE)

describe('module boundaries', () => {
  it('lets projections/ import only src/core, src/schemas and its own modules', () => {
    const imports = importsOf(filesOf('projections', true))
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'projections/'])).toEqual([])
  })

  it('lets src/ports import only src/core, src/schemas and other ports (never projections/ or an adapter)', () => {
    const imports = importsOf(filesOf('src/ports', true))
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'src/ports/'])).toEqual([])
  })

  it('keeps the projector runtime (src/projector) off the adapters and the composition root', () => {
    const imports = importsOf(filesOf('src/projector', true))
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'src/ports/', 'src/projector/', 'projections/'])).toEqual([])
  })

  it('lets src/core import only itself and src/schemas, and src/schemas only itself and src/core/limits', () => {
    const core = importsOf(filesOf('src/core', true))
    expect(core.length).toBeGreaterThan(0)
    expect(outside(core, ['src/core/', 'src/schemas/'])).toEqual([])
    expect(outside(importsOf(filesOf('src/schemas', true)), ['src/schemas/', 'src/core/limits'])).toEqual([])
  })

  it('lets src/adapters import only src/core, src/schemas, src/ports and other adapters (never the read side or the app)', () => {
    const imports = importsOf(filesOf('src/adapters', true))
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'src/ports/', 'src/adapters/'])).toEqual([])
  })

  it('leaves no loose files in src/ besides the entry point', () => {
    expect(filesOf('src', false)).toEqual([])
  })

  it('finds the cycles of a graph (the detector itself)', () => {
    const edges = new Map<string, Set<string>>([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a', 'd'])],
      ['d', new Set<string>()],
      ['e', new Set(['e'])],
    ])
    expect(cyclesOf(edges)).toEqual([
      ['a', 'b', 'c', 'a'],
      ['e', 'e'],
    ])
    expect(cyclesOf(new Map([['a', new Set(['b'])]]))).toEqual([])
  })

  it('has no import cycle between files', () => {
    expect(ALL.length).toBeGreaterThan(100)
    expect(cyclesOf(graph(ALL, (path) => path)).map((c) => c.join(' → '))).toEqual([])
  })

  it('has no import cycle between folders', () => {
    expect(cyclesOf(graph(ALL, folderOf)).map((c) => c.join(' → '))).toEqual([])
  })
})
