/**
 * The dependency rules of the pure parts (README § Architecture): projections/ depends only on
 * src/core and the schemas, and the ports name only core, schema and port types. Read from the files'
 * import statements, resolved against the repository root.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Every relative import of the .ts files directly in `folder`, as repository paths (`src/core/merge.js`). */
function importsOf(folder: string): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = []
  for (const name of readdirSync(join(ROOT, folder)).filter((n) => n.endsWith('.ts'))) {
    const file = join(folder, name)
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const spec = m[1]
      if (spec !== undefined) out.push({ file, target: relative(ROOT, resolve(ROOT, folder, spec)) })
    }
  }
  return out
}

function outside(imports: { file: string; target: string }[], allowed: readonly string[]): string[] {
  return imports.filter((i) => !allowed.some((a) => i.target.startsWith(a))).map((i) => `${i.file} → ${i.target}`)
}

describe('module boundaries', () => {
  it('lets projections/ import only src/core, src/schemas and its own modules', () => {
    const imports = importsOf('projections')
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'projections/'])).toEqual([])
  })

  it('lets src/ports import only src/core, src/schemas and other ports (never projections/ or an adapter)', () => {
    const imports = importsOf('src/ports')
    expect(imports.length).toBeGreaterThan(0)
    expect(outside(imports, ['src/core/', 'src/schemas/', 'src/ports/'])).toEqual([])
  })
})
