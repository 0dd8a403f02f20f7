/**
 * Shared test fixtures: the real OCEL 2.0 logs in ../shared/data/ocel/ (beside the repository; never
 * copied into it), and a snapshot of every read model of a dataset for equality checks.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe } from 'vitest'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'
import type { RowReader } from './read-model-rows.js'

/** Folder of the real OCEL 2.0 logs (see its SOURCES.md). */
export const OCEL_DIR = fileURLToPath(new URL('../../../shared/data/ocel/', import.meta.url))

/** Whether ../shared/data/ocel is beside the repository (CI has it; a plain clone does not). */
export const SHARED_OCEL_PRESENT = existsSync(OCEL_DIR)

/** Why a suite that needs the shared logs was skipped; printed once per suite. */
export const SHARED_SKIP_REASON = `the real OCEL 2.0 logs are not at ${OCEL_DIR} (the shared/ folder beside the repository); a plain clone has none`

/**
 * `describe` for suites that read the real OCEL 2.0 logs: skipped, with the reason printed, when
 * ../shared is absent, so that `npm test` passes on a plain clone.
 */
export function describeWithSharedOcel(name: string, fn: () => void): void {
  if (!SHARED_OCEL_PRESENT) process.stdout.write(`skip: ${name}: ${SHARED_SKIP_REASON}\n`)
  describe.skipIf(!SHARED_OCEL_PRESENT)(name, fn)
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

/** Every read model of `datasetId`, in each one's documented order: the rows from `rows`, the object links from the store. */
export async function readModelSnapshot(rows: RowReader, store: ReadModelStore, datasetId: string) {
  return { ...(await rows(datasetId)), objectLinks: await store.objectLinks(datasetId) }
}
