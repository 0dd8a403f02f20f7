/**
 * The state of the log and its projections, for operators: `ocelog status` prints it and
 * `GET /metrics` exports it. A projection's lag is the number of records in the log after its
 * checkpoint, up to the head, and the age of the oldest of them (EventLog.backlog): a count of
 * records on every engine, whatever the positions' unit (SQLite: dense row ids, so a difference of
 * positions; EventStoreDB: byte offsets, counted by reading).
 */
import { datasetCheckpoint, parseCheckpointName, READ_MODELS_PROJECTION } from './checkpoints.js'
import type { EventLog } from '../ports/event-log.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import type { Status } from '../schemas/projections.js'
import { projectionLag } from './lag.js'

/** The export's lag warning counts a dataset's records behind up to this many (datasetLag). */
export const LAG_COUNT_MAX = 100_000

/**
 * The log head and every projection in the store with its lag, ordered by name.
 * @param expected projection names to show even before they have a checkpoint (e.g. the projector
 *   this process runs), unless a shard of that name is in the store; they show position null and
 *   the whole log as lag.
 */
export async function readStatus(log: EventLog, store: ReadModelStore, expected: readonly string[] = []): Promise<Status> {
  const head = await log.lastPosition()
  const states = await store.projections()
  for (const name of expected) {
    if (!states.some((s) => parseCheckpointName(s.projection).base === name))
      states.push({ projection: name, position: null, version: null, updated_at: null, stopped: null })
  }
  states.sort((a, b) => (a.projection < b.projection ? -1 : a.projection > b.projection ? 1 : 0))
  const projections = []
  for (const s of states) {
    projections.push({ ...s, ...(await projectionLag(log, s.position, head)) })
  }
  return { head, projections }
}

export interface DatasetLag {
  /** The position up to which every projection holds the dataset (datasetCheckpoint), or null. */
  checkpoint: number | null
  /** Records of the dataset's stream after that checkpoint (at most LAG_COUNT_MAX). */
  behind: number
  /** Position of the dataset's last record, or null when it has none after the checkpoint. */
  lastPosition: number | null
}

const PAGE = 1000

/**
 * How many records of `datasetId` the log holds beyond the read models of projector `projector`
 * (default `read-models`), reading every checkpoint in the store: each projection's and its shards',
 * of which only those that keep the dataset count (datasetCheckpoint in checkpoints.ts).
 */
export async function datasetLag(log: EventLog, store: ReadModelStore, datasetId: string, projector = READ_MODELS_PROJECTION): Promise<DatasetLag> {
  const checkpoint = datasetCheckpoint(await store.projections(), datasetId, projector)
  let after = checkpoint
  let behind = 0
  let lastPosition: number | null = null
  while (behind < LAG_COUNT_MAX) {
    const page = await log.readStream(datasetId, after, PAGE)
    const last = page[page.length - 1]
    if (last === undefined) break
    behind += page.length
    lastPosition = last.position
    after = last.position
    if (page.length < PAGE) break
  }
  return { checkpoint, behind, lastPosition }
}
