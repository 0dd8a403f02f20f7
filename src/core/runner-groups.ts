/**
 * The projection runners (docs/architecture.md#projection-runners-and-leases): the projections
 * grouped into runners that apply independently, each with its projections' own checkpoints and
 * stops, and on the embedded default a read-models file of its own:
 * - `entities`: event and object types, objects and their attribute history, events, E2O, O2O, the
 *   audit chain and the declared types;
 * - `process`: the directly-follows read model, which the process map and the analysis reads use.
 * The projector (src/projector/runners.ts: leases, shards) and the stores (which file a projection's
 * rows and checkpoints are in) share this one table.
 */
import { PROJECTION_NAMES, type ProjectionName } from './read-model-changes.js'

export type RunnerName = 'entities' | 'process'

/** The runner of each projection (a projection missing here does not compile). */
const RUNNER_OF: { readonly [K in ProjectionName]: RunnerName } = {
  event_types: 'entities',
  object_types: 'entities',
  objects: 'entities',
  events: 'entities',
  object_relationships: 'entities',
  audit_chain: 'entities',
  declared_types: 'entities',
  directly_follows: 'process',
}

/** The runner of `projection`. */
export function runnerOf(projection: ProjectionName): RunnerName {
  return RUNNER_OF[projection]
}

/** Every runner, in the order a projector process offers to take them. */
export const RUNNER_NAMES: readonly RunnerName[] = ['entities', 'process']

/** The projections of `runner`, in PROJECTION_NAMES order. */
export function runnerProjections(runner: RunnerName): ProjectionName[] {
  return PROJECTION_NAMES.filter((p) => RUNNER_OF[p] === runner)
}

/** Whether `text` names a runner. */
export function isRunnerName(text: string): text is RunnerName {
  return (RUNNER_NAMES as readonly string[]).includes(text)
}

/** A shard's suffix of a checkpoint name (`-<i>-of-<n>`, src/projector/checkpoints.ts). */
export const SHARD_SUFFIX = /^(.+)-(\d+)-of-(\d+)$/

/**
 * The projection whose checkpoint (or stop) `name` is, whatever its projector (a `<projector>.`
 * prefix) and shard (a `-<i>-of-<n>` suffix; src/projector/checkpoints.ts names them).
 * @returns null for a name of no projection.
 */
export function projectionOfCheckpoint(name: string): ProjectionName | null {
  const base = SHARD_SUFFIX.exec(name)?.[1] ?? name
  const projection = base.slice(base.lastIndexOf('.') + 1)
  return (PROJECTION_NAMES as readonly string[]).includes(projection) ? (projection as ProjectionName) : null
}
