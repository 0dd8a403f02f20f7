/**
 * Shared test fixtures: the real OCEL 2.0 logs of the shared folder beside the repository (never
 * copied into it), the guards that skip the tests needing them on a plain clone, and a snapshot of
 * every read model of a dataset for equality checks. Tests that only need "some OCEL 2.0 log" use
 * the generated one (test/helpers/generated-ocel.ts), which every clone has.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it, type TestContext } from 'vitest'

/**
 * Folder of the real OCEL 2.0 logs (with a note of their sources), ending in a slash: `OCELOG_TEST_OCEL_DIR`
 * when set, else `data/ocel/` of the shared folder beside the repository.
 */
export const OCEL_DIR = ((): string => {
  const fromEnv = process.env.OCELOG_TEST_OCEL_DIR
  const dir = fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : fileURLToPath(new URL('../../../shared/data/ocel/', import.meta.url))
  return dir.endsWith('/') ? dir : `${dir}/`
})()

/** Whether the real logs are there (CI has them; a plain clone does not). */
export const SHARED_OCEL_PRESENT = existsSync(OCEL_DIR)

/** Why a test that needs the real logs was skipped; printed with its name. */
export const SHARED_SKIP_REASON = `the real OCEL 2.0 logs are not at ${OCEL_DIR} (the shared/ folder beside the repository, or OCELOG_TEST_OCEL_DIR); a plain clone has none`

function printSkip(name: string): void {
  console.info(`skip: ${name}: ${SHARED_SKIP_REASON}`)
}

/**
 * `describe` for suites that read the real OCEL 2.0 logs: skipped, with the reason printed, when
 * they are absent, so that `npm test` passes on a plain clone. Vitest runs the body of a skipped
 * suite to collect its tests, so read the logs in hooks or tests, never in the body itself.
 */
export function describeWithSharedOcel(name: string, fn: () => void): void {
  if (!SHARED_OCEL_PRESENT) printSkip(name)
  describe.skipIf(!SHARED_OCEL_PRESENT)(name, fn)
}

/**
 * `it` for one test that reads the real OCEL 2.0 logs inside a suite that otherwise runs anywhere:
 * skipped, with the reason printed, when they are absent. `fn` gets the test's context (its own
 * `expect`, which tests of a `describe.concurrent` suite use).
 * @param timeout ms, as vitest's third argument of `it`.
 */
export function itWithSharedOcel(name: string, fn: (context: TestContext) => unknown, timeout?: number): void {
  if (!SHARED_OCEL_PRESENT) printSkip(name)
  it.skipIf(!SHARED_OCEL_PRESENT)(
    name,
    async (context) => {
      await fn(context)
    },
    timeout,
  )
}

/**
 * Path of one fixture under OCEL_DIR, e.g. `raw/pm4py__ocel20_example.jsonocel`.
 * @throws a message saying where the shared folder is expected when it is missing.
 */
export function ocelFixture(relative: string): string {
  const path = join(OCEL_DIR, relative)
  if (!existsSync(path)) throw new Error(`OCEL fixture ${path} is missing: the shared/ folder must sit beside the repository (../shared)`)
  return path
}
