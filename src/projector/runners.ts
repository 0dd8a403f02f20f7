/**
 * Projection runners (docs/architecture.md#projection-runners-and-leases): the projections grouped
 * into runners that apply independently, each with its projections' own checkpoints and stops. A
 * runner on a shard is the unit a projector process leases on PostgreSQL: lease `entities`, or
 * `process-0-of-2` for shard 0 of 2.
 * - `entities`: event and object types, objects and their attribute history, events, E2O, O2O, the
 *   audit chain and the declared types;
 * - `process`: the directly-follows read model, which the process map and the analysis reads use.
 */
import { PROJECTION_NAMES, type ProjectionName } from '../core/read-model-changes.js'
import { checkpointName, parseCheckpointName, type Shard } from './checkpoints.js'

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

/** The lease of `runner` on `shard`: the runner's name, with the shard's suffix (checkpointName). */
export function leaseName(runner: RunnerName, shard?: Shard): string {
  return checkpointName(runner, shard)
}

/**
 * The runner (on its shard: its lease name, leaseName) that moves checkpoint `name` of the read
 * models' projector: `process` for `directly_follows`, `entities-1-of-2` for `events-1-of-2`.
 * @returns null for a checkpoint of no projection of the read models (another projector's).
 */
export function runnerOfCheckpoint(name: string): string | null {
  const { base, shard } = parseCheckpointName(name)
  const runner = (RUNNER_OF as Readonly<Record<string, RunnerName | undefined>>)[base]
  return runner === undefined ? null : leaseName(runner, shard)
}
