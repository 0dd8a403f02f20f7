#!/usr/bin/env node
/**
 * The Python half of `npm test` (README § Tests): pytest over the Python client (clients/python).
 * scripts/test.mjs runs it after vitest; `node scripts/pytest-step.mjs` runs it alone.
 *
 * - Without pytest (no interpreter, or `python3 -m pytest` says No module named pytest), outside CI it prints
 *   `skip: pytest: <why>; install it: …` and counts as passed; in CI (CI set and not `false` or
 *   `0`) it is a failure, since CI installs pytest (.ci/run).
 * - pytest's exit code 5 (no tests collected) is a failure, like any other non-zero code: a suite
 *   that checks nothing must never pass.
 * - OCELOG_PYTEST_JUNIT=<file> adds `--junitxml=<file>` (JUnit XML), for CI's closing count.
 * - OCELOG_PYTHON picks the interpreter (default python3).
 */
import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** How to get pytest, for the skip line and the CI failure. */
const INSTALL = 'install it: apt-get install python3-pytest, or python3 -m pip install pytest'

/** Whether this runs in CI (CI set to anything but empty, `false` or `0`). */
function inCi() {
  const ci = (process.env.CI ?? '').trim().toLowerCase()
  return ci !== '' && ci !== 'false' && ci !== '0'
}

/**
 * Why `python` has no pytest, or null when it has: asks `python -m pytest --version`. Only a missing
 * interpreter or module counts; a pytest that is there but fails is left to fail when it runs.
 * @param {string} python
 * @returns {string | null}
 */
function pytestMissing(python) {
  const r = spawnSync(python, ['-m', 'pytest', '--version'], { cwd: root, encoding: 'utf8' })
  if (r.error !== undefined) return r.error.message.includes('ENOENT') ? `there is no ${python} (${r.error.message})` : null
  if (r.status === 0) return null
  const said = `${r.stderr ?? ''}${r.stdout ?? ''}`
  return /No module named pytest/.test(said) ? `${python} has no pytest (No module named pytest)` : null
}

/**
 * Runs pytest over clients/python with inherited stdio; the step's exit code (0 passed or skipped).
 * @returns {number}
 */
export function pytestStep() {
  const python = process.env.OCELOG_PYTHON ?? 'python3'
  const missing = pytestMissing(python)
  if (missing !== null) {
    if (inCi()) {
      console.error(`test: pytest is missing in CI: ${missing}; ${INSTALL}`)
      return 1
    }
    console.log(`skip: pytest: the Python client's tests did not run: ${missing}; ${INSTALL}`)
    return 0
  }
  const junit = process.env.OCELOG_PYTEST_JUNIT
  const args = ['-m', 'pytest', 'clients/python', ...(junit === undefined || junit === '' ? [] : [`--junitxml=${junit}`])]
  console.log(`\n> ${python} ${args.join(' ')}`)
  const r = spawnSync(python, args, { cwd: root, stdio: 'inherit' })
  if (r.error !== undefined) {
    console.error(`test: could not run ${python}: ${r.error.message}`)
    return 1
  }
  if (r.status === null) {
    console.error(`test: pytest ended by ${String(r.signal)}`)
    return 1
  }
  if (r.status === 5) console.error('test: pytest collected no tests (exit code 5): that is a failure')
  return r.status
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(pytestStep())
