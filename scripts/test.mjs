#!/usr/bin/env node
/**
 * The test command (`npm test`, after its `pretest` build): vitest (its projects in vitest.config.ts: test/ by tier, and
 * clients/typescript/test), then pytest over the Python client (scripts/pytest-step.mjs, which says when pytest
 * is skipped and why). Both always run; the exit code is 0 only when both pass.
 *
 * - Arguments go to vitest: `npm test -- --reporter=json --outputFile.json=out.json` runs
 *   `vitest run --reporter=json --outputFile.json=out.json`.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pytestStep } from './pytest-step.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Runs vitest in the repository root with inherited stdio; its exit code (1 when it could not start or died by a signal). */
function vitest(args) {
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args], { cwd: root, stdio: 'inherit' })
  if (r.error !== undefined) {
    console.error(`test: could not run vitest: ${r.error.message}`)
    return 1
  }
  if (r.status === null) {
    console.error(`test: vitest ended by ${String(r.signal)}`)
    return 1
  }
  return r.status
}

const vitestCode = vitest(process.argv.slice(2))
const pytestCode = pytestStep()

const failed = [vitestCode !== 0 ? `vitest (exit ${String(vitestCode)})` : null, pytestCode !== 0 ? `pytest (exit ${String(pytestCode)})` : null].filter(
  (x) => x !== null,
)
if (failed.length > 0) {
  console.error(`test: failed: ${failed.join(', ')}`)
  process.exit(1)
}
