/**
 * Builds the `/ui/` page's assets into `dist/ui` (run by `npm run build`, hence by `npm install`, as
 * `node dist/scripts/build-ui-assets.js`):
 * the page and its stylesheet from `ui/`, the page script compiled by `tsc -p ui/tsconfig.json`
 * (into `dist/ui-tsc`), and Graphviz as WebAssembly (the ESM bundle of @hpcc-js/wasm-graphviz,
 * which carries its wasm inline) as `vendor/graphviz.js`. Everything the page loads comes from the
 * service itself.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { packageRoot, UI_ASSET_DIR } from '../src/api/ui-assets.js'

/**
 * Copies the assets into UI_ASSET_DIR, replacing what was there.
 * @throws Error naming the missing input when the page script was not compiled first.
 */
export function buildUiAssets(root = packageRoot()): string[] {
  const out = UI_ASSET_DIR
  const compiled = join(root, 'dist', 'ui-tsc', 'ui')
  if (!existsSync(join(compiled, 'main.js'))) throw new Error(`${compiled}/main.js is missing: run tsc -p ui/tsconfig.json first`)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(join(out, 'vendor'), { recursive: true })
  const written: string[] = []
  const copy = (from: string, to: string) => {
    copyFileSync(from, join(out, to))
    written.push(to)
  }
  copy(join(root, 'ui', 'index.html'), 'index.html')
  copy(join(root, 'ui', 'style.css'), 'style.css')
  for (const f of readdirSync(compiled)) if (f.endsWith('.js')) copy(join(compiled, f), f)
  copy(createRequire(import.meta.url).resolve('@hpcc-js/wasm-graphviz'), join('vendor', 'graphviz.js'))
  return written
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const written = buildUiAssets()
  process.stdout.write(`ui assets: ${String(written.length)} files in ${UI_ASSET_DIR}\n`)
}
