/**
 * The shape of an import plan's batches (pure): how many of each kind, their items on average, and
 * the plan's critical path (bench/plan-shape.ts measures it on a log; docs/import.md § Two bounds:
 * the plan's critical path, and the CPU of two cores).
 */
import type { PlannedBatch } from '../src/ocel/import/plan.js'

/** The shape of an import plan's batches (planShape): what bounds how fast it can be sent. */
export interface PlanShape {
  /** Batches in the plan, and of each kind. */
  batches: number
  eventBatches: number
  upsertBatches: number
  /** Items per batch of each kind, on average (0 when there is no batch of the kind). */
  meanEvents: number
  meanUpserts: number
  /**
   * The longest chain of batches each of which waits for the one before it (through `after`): that
   * many round trips follow one another however many batches are in flight (`--concurrency`), so a
   * plan cannot be sent in less than `criticalPath` times the time of one request answered.
   */
  criticalPath: number
}

/**
 * The shape of the batches of a plan, read once as they come (a staged plan's `batches()` or an
 * ImportPlan's array), in a valid sending order (every `after` index below the batch's own).
 * Holds 4 bytes per batch. See docs/import.md § Two bounds: the plan's critical path, and the CPU of two cores.
 * @throws RangeError when a batch names an `after` at or above its own index (not a valid order).
 */
export function planShape(batches: Iterable<PlannedBatch>): PlanShape {
  let depth = new Int32Array(1024)
  let n = 0
  let criticalPath = 0
  const items = { events: 0, objects: 0 }
  const counts = { events: 0, objects: 0 }
  for (const b of batches) {
    let d = 1
    for (const a of b.after) {
      if (a < 0 || a >= n) throw new RangeError(`batch ${String(n)} waits for batch ${String(a)}, which does not come before it`)
      d = Math.max(d, (depth[a] ?? 0) + 1)
    }
    if (n >= depth.length) {
      const grown = new Int32Array(depth.length * 2)
      grown.set(depth)
      depth = grown
    }
    depth[n++] = d
    criticalPath = Math.max(criticalPath, d)
    counts[b.kind] += 1
    items[b.kind] += b.items.length
  }
  return {
    batches: n,
    eventBatches: counts.events,
    upsertBatches: counts.objects,
    meanEvents: counts.events === 0 ? 0 : items.events / counts.events,
    meanUpserts: counts.objects === 0 ? 0 : items.objects / counts.objects,
    criticalPath,
  }
}
