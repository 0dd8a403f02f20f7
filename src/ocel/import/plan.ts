/**
 * The import plan's shape: an OcelLog → the ordered batches of API calls that load it into a dataset
 * (`ocelog import`, docs/import.md). It is made in two steps, one per file:
 * - action-planner.ts maps the log to actions, one per item of POST /v1/event/batch or POST
 *   /v1/object/batch, with their idempotency keys; what cannot be sent is counted in `skipped`;
 * - cutter.ts cuts the actions, in sending order, into batches of at most 100 of one kind, each
 *   listing in `after` the earlier batches it must wait for.
 * planImport (memory-plan.ts) runs both on a log in memory; planStaged (staged-plan.ts) on a log
 * staged on disk, a page at a time. runPlan (run.ts) sends the batches.
 */
import type { EventInput, ObjectUpsertInput } from '../../schemas/api.js'
import type { Tally } from './model.js'

export interface PlannedEvents {
  kind: 'events'
  items: EventInput[]
  /** The log's event id of each item. */
  sources: string[]
  /** Indices of earlier batches that must be answered before this one is sent. */
  after: number[]
}

export interface PlannedUpserts {
  kind: 'objects'
  items: ObjectUpsertInput[]
  /** `<object id> @ <ISO time | initial>` of each item. */
  sources: string[]
  /** Whether each item is its object's first upsert in the plan (the summary counts objects by them, holding no set of objects). */
  firsts: boolean[]
  after: number[]
}

export type PlannedBatch = PlannedEvents | PlannedUpserts

export interface ImportPlan {
  batches: PlannedBatch[]
  /** Events and object upserts in the plan. */
  events: number
  upserts: number
  /** Distinct objects (type, id) that get at least one upsert. */
  objects: number
  /** Objects the log references but never defines, sent with type `type`, and the events that name them. */
  undefinedObjects: { type: string; objects: number; events: number }
  /** What the plan leaves out, by cause (see action-planner.ts). */
  skipped: Record<string, Tally>
}

/** The default type of objects a log references but never defines (`--unknown-object-type`). */
export const UNDEFINED_OBJECT_TYPE = 'ocelog:undefined'

export interface PlanOptions {
  /** Items per batch (default and maximum 100, docs/api.md#limits). */
  batchSize?: number
  /** Type of the objects the log references but never defines (default UNDEFINED_OBJECT_TYPE; 1 to 100 characters, docs/api.md#limits). */
  unknownObjectType?: string
  /** Put into every idempotency key after `ocel:` (default ''): `--key-prefix`, for two logs that reuse event ids in one dataset. */
  keyPrefix?: string
}
