#!/usr/bin/env node
/**
 * The test command (`npm test`, after its `pretest` build): vitest (its projects in vitest.config.ts: test/ by tier, and
 * clients/typescript/test), then pytest over the
 * Python client (clients/python). Both always run; the exit code is 0 only when both pass.
 *
 * - Arguments go to vitest: `npm test -- --reporter=json --outputFile.json=out.json` runs
 *   `vitest run --reporter=json --outputFile.json=out.json`.
 * - pytest's exit code 5 (no tests collected) is a failure, like any other non-zero code: a
 *   suite that checks nothing must never pass.
 * - OCELOG_PYTEST_JUNIT=<file> adds `--junitxml=<file>` (JUnit XML), for CI's closing count.
 * - OCELOG_PYTHON picks the interpreter (default python3).
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Runs a command in the repository root with inherited stdio; its exit code (1 when it could not start or died by a signal). */
function run(command, args) {
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (r.error !== undefined) {
    console.error(`test: could not run ${command}: ${r.error.message}`)
    return 1
  }
  if (r.status === null) {
    console.error(`test: ${command} ended by ${String(r.signal)}`)
    return 1
  }
  return r.status
}

const vitest = run(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)])

const python = process.env.OCELOG_PYTHON ?? 'python3'
const junit = process.env.OCELOG_PYTEST_JUNIT
const pytestArgs = ['-m', 'pytest', 'clients/python', ...(junit === undefined || junit === '' ? [] : [`--junitxml=${junit}`])]
console.log(`\n> ${python} ${pytestArgs.join(' ')}`)
const pytest = run(python, pytestArgs)
if (pytest === 5) console.error('test: pytest collected no tests (exit code 5): that is a failure')

const failed = [vitest !== 0 ? `vitest (exit ${String(vitest)})` : null, pytest !== 0 ? `pytest (exit ${String(pytest)})` : null].filter((x) => x !== null)
if (failed.length > 0) {
  console.error(`test: failed: ${failed.join(', ')}`)
  process.exit(1)
}
