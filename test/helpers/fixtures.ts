/**
 * Shared test fixtures: the real OCEL 2.0 logs in ../shared/data/ocel/ (beside the repository; never
 * copied into it), and a snapshot of every read model of a dataset for equality checks.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'

/** Folder of the real OCEL 2.0 logs (see its SOURCES.md). */
export const OCEL_DIR = fileURLToPath(new URL('../../../shared/data/ocel/', import.meta.url))

/**
 * Path of one fixture under OCEL_DIR, e.g. `raw/pm4py__ocel20_example.jsonocel`.
 * @throws a message saying where the shared folder is expected when it is missing.
 */
export function ocelFixture(relative: string): string {
  const path = join(OCEL_DIR, relative)
  if (!existsSync(path)) throw new Error(`OCEL fixture ${path} is missing: the shared/ folder must sit beside the repository (../shared)`)
  return path
}

/** Every read model of `datasetId`, in the store's documented order. */
export async function readModelSnapshot(store: ReadModelStore, datasetId: string) {
  return {
    eventTypes: await store.eventTypes(datasetId),
    objectTypes: await store.objectTypes(datasetId),
    objects: await store.objects(datasetId),
    objectChanges: await store.objectChanges(datasetId),
    events: await store.events(datasetId),
    eventObjects: await store.eventObjects(datasetId),
    objectLinks: await store.objectLinks(datasetId),
  }
}
