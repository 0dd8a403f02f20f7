/**
 * scripts/build-stamp.mjs, the check that lets `npm start` skip the build when dist/ is current
 * (README § Set-up), run as a process on a scratch checkout: the inputs it watches, the stamp a
 * finished build leaves, and every way dist/ goes stale.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const SCRIPT = join(process.cwd(), 'scripts', 'build-stamp.mjs')
let root: string

/** Runs `node scripts/build-stamp.mjs <command> --root <scratch checkout>`. */
function stamp(command: string): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, command, '--root', root], { encoding: 'utf8' })
  return { code: r.status, stderr: r.stderr }
}

/** Writes `text` to `path` under the scratch checkout, making its folders. */
function write(path: string, text = ''): void {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

/** Sets the mtime of `path` (under the scratch checkout) to `ms` from now. */
function age(path: string, ms: number): void {
  const at = new Date(Date.now() + ms)
  utimesSync(join(root, path), at, at)
}

/** A checkout whose inputs are a minute old, built by `begin`, the build's output, then `end`. */
function built(): void {
  for (const p of ['src/app/config.ts', 'ui/index.html', 'clients/typescript/src/index.ts', 'tsconfig.json', 'package.json']) write(p)
  for (const p of [
    'src/app/config.ts',
    'src',
    'ui/index.html',
    'ui',
    'clients/typescript/src/index.ts',
    'clients/typescript/src',
    'tsconfig.json',
    'package.json',
  ])
    age(p, -60_000)
  expect(stamp('begin').code).toBe(0)
  write('dist/src/cli/main.js')
  expect(stamp('end').code).toBe(0)
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ocelog-build-stamp-'))
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe('build-stamp check', () => {
  it('finds dist/ current after a finished build', () => {
    built()
    expect(stamp('check')).toEqual({ code: 0, stderr: '' })
  })

  it('finds it stale when never built, naming why', () => {
    write('src/app/config.ts')
    expect(stamp('check')).toEqual({ code: 1, stderr: 'build: dist/ has no stamp of a finished build; building\n' })
  })

  it('finds it stale after a build that began but did not end (a failed step)', () => {
    built()
    expect(stamp('begin').code).toBe(0)
    expect(stamp('check')).toEqual({ code: 1, stderr: 'build: dist/ has no stamp of a finished build; building\n' })
  })

  it('finds it stale when a source file changed after the build began, naming the file', () => {
    built()
    age('src/app/config.ts', 1_000)
    expect(stamp('check')).toEqual({ code: 1, stderr: 'build: src/app/config.ts changed after the last build; building\n' })
  })

  it('finds it stale when a file is added to an input folder (its folder changes)', () => {
    built()
    write('clients/typescript/src/extra.ts')
    age('clients/typescript/src/extra.ts', -60_000)
    expect(stamp('check').stderr).toBe('build: clients/typescript/src changed after the last build; building\n')
  })

  it('finds it stale when a tsconfig or manifest changed', () => {
    built()
    age('tsconfig.json', 1_000)
    expect(stamp('check').stderr).toBe('build: tsconfig.json changed after the last build; building\n')
  })

  it('finds it stale when the built CLI is gone', () => {
    built()
    rmSync(join(root, 'dist', 'src'), { recursive: true })
    expect(stamp('check')).toEqual({ code: 1, stderr: 'build: dist/src/cli/main.js is missing; building\n' })
  })

  it('ignores what is not an input (tests, data, docs)', () => {
    built()
    write('test/unit/config.test.ts')
    write('data/ocelog.db')
    write('README.md')
    expect(stamp('check').code).toBe(0)
  })

  it('refuses end without begin, and an unknown command', () => {
    expect(stamp('end')).toEqual({ code: 1, stderr: 'build-stamp: dist/.build-begun is missing: run `build-stamp begin` before the build\n' })
    expect(stamp('stamp')).toEqual({ code: 2, stderr: 'build-stamp: unknown command "stamp"; commands: begin, end, check [--root DIR]\n' })
  })
})
