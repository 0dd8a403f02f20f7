#!/usr/bin/env node
/**
 * The build's stamp, so that `npm start` builds only when dist/ is older than its inputs (README § Set-up).
 *
 * - `node scripts/build-stamp.mjs begin`: first step of `npm run build`. Removes the stamp and notes
 *   the time the build starts (dist/.build-begun, milliseconds since the epoch).
 * - `node scripts/build-stamp.mjs end`: last step of `npm run build`, reached only when every step
 *   before it succeeded. Turns the note into the stamp (dist/.build-stamp). The stamp holds the
 *   start time, not the end, so a file saved while the build ran counts as newer than the build.
 * - `node scripts/build-stamp.mjs check`: exit 0 when dist/ is current, 1 when it must be built,
 *   saying why on stderr: no stamp (never built, a build that failed or is still running, or dist/
 *   removed), no dist/src/cli/main.js, or an input changed at or after the stamp's time.
 *
 * The inputs are the files and folders under INPUT_DIRS and the files INPUT_FILES (tsconfig files,
 * package manifests, the lockfile). Folders count by their own mtime as well, which changes when a
 * file in them is added, removed or renamed. `--root DIR` works on another checkout (default: the
 * repository holding this script).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Folders whose files the build reads, relative to the repository root. */
export const INPUT_DIRS = ['src', 'projections', 'bench', 'scripts', 'ui', 'clients/typescript/src']
/** Single files the build reads, relative to the repository root. */
export const INPUT_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'clients/typescript/tsconfig.json',
  'package.json',
  'clients/typescript/package.json',
  'package-lock.json',
]

/**
 * The newest input under `root`: its path relative to `root` and its mtime in ms, or null when
 * there is no input at all. Missing inputs are ignored.
 * @param {string} root
 * @returns {{ path: string, mtimeMs: number } | null}
 */
export function newestInput(root) {
  /** @type {{ path: string, mtimeMs: number } | null} */
  let newest = null
  /** @param {string} path */
  const consider = (path) => {
    const s = statSync(path, { throwIfNoEntry: false })
    if (s === undefined) return
    if (newest === null || s.mtimeMs > newest.mtimeMs) newest = { path: relative(root, path), mtimeMs: s.mtimeMs }
    if (s.isDirectory()) for (const entry of readdirSync(path)) consider(join(path, entry))
  }
  for (const dir of INPUT_DIRS) consider(join(root, dir))
  for (const file of INPUT_FILES) consider(join(root, file))
  return newest
}

/**
 * Why dist/ under `root` must be built, or null when it is current.
 * @param {string} root
 * @returns {string | null}
 */
export function staleReason(root) {
  const stampFile = join(root, 'dist', '.build-stamp')
  if (!existsSync(stampFile)) return 'dist/ has no stamp of a finished build'
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) return 'dist/src/cli/main.js is missing'
  const started = Number(readFileSync(stampFile, 'utf8').trim())
  if (!Number.isFinite(started)) return 'dist/.build-stamp is unreadable'
  const newest = newestInput(root)
  if (newest !== null && newest.mtimeMs >= started) return `${newest.path} changed after the last build`
  return null
}

/**
 * Runs one command (begin, end, check) on `root`; the process's exit code.
 * @param {string} command
 * @param {string} root
 * @returns {number}
 */
function main(command, root) {
  const dist = join(root, 'dist')
  const begun = join(dist, '.build-begun')
  const stamp = join(dist, '.build-stamp')
  switch (command) {
    case 'begin':
      mkdirSync(dist, { recursive: true })
      rmSync(stamp, { force: true })
      writeFileSync(begun, `${String(Date.now())}\n`)
      return 0
    case 'end':
      if (!existsSync(begun)) {
        console.error('build-stamp: dist/.build-begun is missing: run `build-stamp begin` before the build')
        return 1
      }
      renameSync(begun, stamp)
      return 0
    case 'check': {
      const reason = staleReason(root)
      if (reason === null) return 0
      console.error(`build: ${reason}; building`)
      return 1
    }
    default:
      console.error(`build-stamp: unknown command ${JSON.stringify(command)}; commands: begin, end, check [--root DIR]`)
      return 2
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--root')
  const root = at === -1 ? join(dirname(fileURLToPath(import.meta.url)), '..') : resolve(args[at + 1] ?? '.')
  process.exit(main(args[0] ?? '', root))
}
