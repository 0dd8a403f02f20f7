/**
 * The import plan of a log in memory (plan.ts gives its shape): the actions of every object, then of
 * every event (action-planner.ts), sorted in sending order and cut into batches (cutter.ts).
 * `ocelog import` plans the same actions from its on-disk staging (staged-plan.ts).
 */
import { LIMITS } from '../../core/limits.js'
import { ActionPlanner, compareActions, ObjectNumbers, objectKey, type Action } from './action-planner.js'
import { Cutter } from './cutter.js'
import type { OcelLog } from './model.js'
import { UNDEFINED_OBJECT_TYPE, type ImportPlan, type PlanOptions } from './plan.js'

/**
 * Plans the import of `log` in memory (see action-planner.ts for the mapping and the skips,
 * cutter.ts for the order); `ocelog import` plans the same actions from its on-disk staging (staged-plan.ts).
 * @returns the batches in a valid sending order (every `after` index is smaller than the batch's own).
 */
export function planImport(log: OcelLog, options: PlanOptions = {}): ImportPlan {
  const batchSize = Math.min(options.batchSize ?? LIMITS.batchItemsMax, LIMITS.batchItemsMax)
  // Objects by id: OCEL ids are unique in a log; when a log reuses one under two types, E2O
  // references resolve to the first definition, and both objects are still upserted.
  const numbers = new ObjectNumbers()
  for (const o of log.objects) numbers.define(o.type, o.id)
  const planner = new ActionPlanner(numbers, options.unknownObjectType ?? UNDEFINED_OBJECT_TYPE, options.keyPrefix ?? '')
  const actions: Action[] = []
  const defined = new Set<string>()
  for (const o of log.objects) {
    defined.add(objectKey(o.type, o.id))
    actions.push(...planner.objectActions(o))
  }
  for (const e of log.events) {
    const a = planner.eventAction(e)
    if (a !== null) actions.push(a)
  }
  actions.sort(compareActions)
  const cutter = new Cutter(batchSize)
  const batches = actions.flatMap((a) => cutter.push(a))
  batches.push(...cutter.finish())
  return {
    batches,
    events: planner.events,
    upserts: actions.length - planner.events,
    objects: defined.size,
    undefinedObjects: planner.undefinedObjects(),
    skipped: planner.skipped,
  }
}
