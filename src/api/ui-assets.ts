/**
 * Where the `/ui/` page's assets are served from (built by `npm run build`: scripts/build-ui-assets.ts).
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package's root: the nearest folder above this module with a package.json (from src/ or dist/src/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir)
    if (up === dir) throw new Error('no package.json above the server module')
    dir = up
  }
  return dir
}

/** Where the page's assets are built and served from. */
export const UI_ASSET_DIR = join(packageRoot(), 'dist', 'ui')
