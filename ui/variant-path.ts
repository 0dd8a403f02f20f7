/**
 * A variant's activity path as shown by the page (README § The web page): consecutive repeats of
 * one activity collapsed into one step with its count ("Check Item ×12"), and a path of more than
 * 2 × KEPT_STEPS + 1 steps cut to its first and last KEPT_STEPS steps with "… n steps …" (n: the
 * events left out) between them, so that a trace of thousands of events takes one line. Pure.
 */
import { formatCount } from './dot.js'

/** A run of one activity repeated `count` times in a row. */
export interface Step {
  activity: string
  count: number
}

/** A variant's path as shown: runs of one activity, and where steps are left out, how many events they held. */
export type PathPart = Step | { skipped: number }

/** The runs of `activities`: consecutive repeats of one activity become one step with their count. */
export function collapseRuns(activities: readonly string[]): Step[] {
  const steps: Step[] = []
  for (const activity of activities) {
    const last = steps[steps.length - 1]
    if (last !== undefined && last.activity === activity) last.count += 1
    else steps.push({ activity, count: 1 })
  }
  return steps
}

/** Steps kept at each end of a long path. */
export const KEPT_STEPS = 5

/**
 * `activities` collapsed into runs and, when more than 2 × `keep` + 1 runs remain, cut to the first
 * and last `keep` runs with the number of events left out between them.
 */
export function pathParts(activities: readonly string[], keep = KEPT_STEPS): PathPart[] {
  const steps = collapseRuns(activities)
  if (steps.length <= 2 * keep + 1) return steps
  const hidden = steps.slice(keep, steps.length - keep)
  return [...steps.slice(0, keep), { skipped: hidden.reduce((n, s) => n + s.count, 0) }, ...steps.slice(steps.length - keep)]
}

/** One part as text: `Check Item`, `Check Item ×12`, or `… 40 steps …`. */
export function partText(part: PathPart): string {
  if ('skipped' in part) return `… ${formatCount(part.skipped)} ${part.skipped === 1 ? 'step' : 'steps'} …`
  return part.count === 1 ? part.activity : `${part.activity} ×${formatCount(part.count)}`
}

/** `activities` as one line: the parts joined by ` → `, with the total number of steps when any was collapsed or cut. */
export function pathText(activities: readonly string[]): string {
  const parts = pathParts(activities)
  const line = parts.map(partText).join(' → ')
  return parts.length === activities.length ? line : `${line} (${formatCount(activities.length)} steps)`
}
