/**
 * scripts/pytest-step.mjs, the Python half of `npm test` (README § Tests), run as a process with a real
 * interpreter that lacks pytest (a venv made without pip) and with no interpreter at all: outside CI
 * it skips, printing why and how to install pytest; in CI the same is a failure.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const SCRIPT = join(process.cwd(), 'scripts', 'pytest-step.mjs')
const INSTALL = 'install it: apt-get install python3-pytest, or python3 -m pip install pytest'
let dir: string
/** A python3 without pytest (a venv without pip or site packages), made in beforeAll when there is a python3. */
let bare = ''
const HAS_PYTHON3 = spawnSync('python3', ['--version']).status === 0
if (!HAS_PYTHON3) console.info('skip: the pytest step with a python3 that lacks pytest: there is no python3 on the PATH')

/** Runs the step with OCELOG_PYTHON = `python` and CI = `ci` (empty: not CI). */
function step(python: string, ci: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env: { ...process.env, OCELOG_PYTHON: python, CI: ci } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-pytest-step-'))
  if (!HAS_PYTHON3) return
  const venv = join(dir, 'venv')
  const made = spawnSync('python3', ['-m', 'venv', '--without-pip', venv], { encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`python3 -m venv --without-pip failed: ${made.error?.message ?? made.stderr}`)
  bare = join(venv, 'bin', 'python')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the pytest step without pytest', () => {
  it.skipIf(!HAS_PYTHON3)('skips outside CI, saying why and how to install it', () => {
    const r = step(bare, '')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`skip: pytest: the Python client's tests did not run: ${bare} has no pytest (No module named pytest); ${INSTALL}\n`)
  })

  it.skipIf(!HAS_PYTHON3)('fails in CI', () => {
    const r = step(bare, 'true')
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`test: pytest is missing in CI: ${bare} has no pytest (No module named pytest); ${INSTALL}\n`)
  })

  it('skips without an interpreter outside CI (CI=false is not CI), and fails in CI', () => {
    const python = join(dir, 'no-such-python')
    const outside = step(python, 'false')
    expect(outside.code).toBe(0)
    expect(outside.stdout).toContain(`skip: pytest: the Python client's tests did not run: there is no ${python} (`)
    const inCi = step(python, '1')
    expect(inCi.code).toBe(1)
    expect(inCi.stderr).toContain(`test: pytest is missing in CI: there is no ${python} (`)
  })
})
