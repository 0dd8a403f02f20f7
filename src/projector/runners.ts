/**
 * Projection runners (docs/architecture.md#projection-runners-and-leases): the projections grouped
 * into runners that apply independently, each with its projections' own checkpoints and stops. A
 * runner on a shard is the unit a projector process leases on PostgreSQL: lease `entities`, or
 * `process-0-of-2` for shard 0 of 2.
 * - `entities`: event and object types, objects and their attribute history, events, E2O, O2O, the
 *   audit chain and the declared types;
 * - `process`: the directly-follows read model, which the process map and the analysis reads use.
 */
import { RUNNER_NAMES, runnerOf, type RunnerName, isRunnerName, runnerProjections } from '../core/runner-groups.js'
import { PROJECTION_NAMES, type ProjectionName } from '../core/read-model-changes.js'
import { checkpointName, parseCheckpointName, type Shard } from './checkpoints.js'

export { isRunnerName, RUNNER_NAMES, type RunnerName, runnerOf, runnerProjections }

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
  if (!(PROJECTION_NAMES as readonly string[]).includes(base)) return null
  return leaseName(runnerOf(base as ProjectionName), shard)
}
