/**
 * The object-centric analysis reads on the MongoDB read models (performance, variants, type
 * relations; definitions in docs/analysis.md), for MongoReadModelQuery. The server does the joins,
 * the per-object order and the grouping:
 * - performance: one document per (object, event) pair of the chosen types up to `to`,
 *   `$setWindowFields` partitioned by object and sorted by (timestamp, position) with `$shift` for
 *   the previous event, then one document per event in the window with its inputs, streamed (cursor) into
 *   PerformanceFold (src/core/analysis-rows.ts), as on SQLite;
 * - variants: each object's activities in order (`$push` after `$sort`), grouped by sequence; the
 *   exact median of a variant's durations is taken from its durations' list;
 * - type relations: per (event, object type) then per (activity, object type), and O2O per
 *   (source type, qualifier, target type).
 * All stages may spill to disk (`allowDiskUse`).
 */
import type { Collection, Document } from 'mongodb'
import type { PerformanceFilter, TimeWindow, TypeRelations, VariantsFilter, VariantsPage } from '../../ports/read-model-query.js'
import {
  type ActivityTypeRow,
  assembleActivityTypes,
  assemblePerformance,
  type EventInputs,
  pageVariants,
  PerformanceFold,
  sortO2o,
  type VariantRow,
} from '../../core/analysis-rows.js'
import type { O2oTypeRelation, PerformanceActivity } from '../../schemas/analysis.js'
import type { EventObjectRow, ObjectRelationshipRow } from '../../schemas/read-models.js'
import { READ_MODEL_COLLECTIONS } from './read-model-writes.js'

const AGGREGATE = { allowDiskUse: true } as const

/** Milliseconds since the epoch of a UTC ISO 8601 field (an expression). */
const msOf = (field: string): Document => ({ $toLong: { $toDate: field } })

/** `event_time` conditions of a window. */
function timeMatch(window: TimeWindow, withFrom: boolean): Document | null {
  const time: Document = {}
  if (withFrom && window.from !== undefined) time.$gte = window.from
  if (window.to !== undefined) time.$lt = window.to
  return Object.keys(time).length > 0 ? time : null
}

/**
 * One document per (object, event) pair of `event_objects` matching `match`: `oid`, `eid`, `ot`,
 * `ext`, `ts` and `pos` (the event's timestamp and log position), the event's activity `act`, and
 * in epoch ms its `t`, end `te` (null when none) and ready time `r` (`te`, else `t`). Also the
 * process map's base (mongodb-read-model-query.ts).
 */
export function pairsPipeline(datasetId: string, match: Document): Document[] {
  return [
    { $match: match },
    {
      $group: {
        _id: { oid: '$object_id', eid: '$event_id' },
        ot: { $first: '$object_type' },
        ext: { $first: '$external_id' },
        ts: { $first: '$event_time' },
        pos: { $first: '$position' },
      },
    },
    {
      $lookup: {
        from: READ_MODEL_COLLECTIONS.events,
        localField: '_id.eid',
        foreignField: 'event_id',
        pipeline: [{ $match: { dataset_id: datasetId } }, { $project: { _id: 0, event_type: 1, end_timestamp: 1 } }],
        as: 'e',
      },
    },
    { $unwind: '$e' },
    {
      $project: {
        _id: 0,
        oid: '$_id.oid',
        eid: '$_id.eid',
        ot: 1,
        ext: 1,
        ts: 1,
        pos: 1,
        act: '$e.event_type',
        t: msOf('$ts'),
        te: { $cond: [{ $eq: [{ $ifNull: ['$e.end_timestamp', null] }, null] }, null, msOf('$e.end_timestamp')] },
        r: { $cond: [{ $eq: [{ $ifNull: ['$e.end_timestamp', null] }, null] }, msOf('$ts'), msOf('$e.end_timestamp')] },
      },
    },
  ]
}

/** Object-centric performance (ReadModelQuery.performance). */
export async function mongoPerformance(eventObjects: Collection<EventObjectRow>, datasetId: string, filter: PerformanceFilter): Promise<PerformanceActivity[]> {
  const match: Document = { dataset_id: datasetId }
  const upTo = timeMatch(filter, false)
  if (upTo !== null) match.event_time = upTo
  if (filter.objectTypes !== undefined && filter.objectTypes.length > 0) match.object_type = { $in: [...filter.objectTypes] }
  const inWindow = timeMatch(filter, true)
  const pipeline: Document[] = [
    ...pairsPipeline(datasetId, match),
    {
      $setWindowFields: {
        partitionBy: '$oid',
        sortBy: { ts: 1, pos: 1 },
        output: { p_r: { $shift: { output: '$r', by: -1, default: null } }, p_pos: { $shift: { output: '$pos', by: -1, default: null } } },
      },
    },
    ...(inWindow === null ? [] : [{ $match: { ts: inWindow } }]),
    {
      $group: {
        _id: '$eid',
        act: { $first: '$act' },
        t: { $first: '$t' },
        position: { $first: '$pos' },
        inputs: { $push: { ot: '$ot', ext: '$ext', p_r: '$p_r', p_pos: '$p_pos' } },
      },
    },
    { $project: { _id: 0, event_id: '$_id', act: 1, t: 1, position: 1, inputs: 1 } },
  ]
  // Each event is folded into the activities' figures as the cursor delivers it.
  const fold = new PerformanceFold(filter.slowest)
  for await (const e of eventObjects.aggregate<EventInputs>(pipeline, AGGREGATE)) fold.add({ ...e, t: Number(e.t), position: Number(e.position) })
  return assemblePerformance(fold.rows())
}

/** A page of trace variants (ReadModelQuery.variants). */
export async function mongoVariants(eventObjects: Collection<EventObjectRow>, datasetId: string, filter: VariantsFilter): Promise<VariantsPage> {
  const match: Document = { dataset_id: datasetId, object_type: filter.objectType }
  const time = timeMatch(filter, true)
  if (time !== null) match.event_time = time
  const rows = await eventObjects
    .aggregate<{ _id: string[]; objects: number; ds: number[]; examples: string[] }>(
      [
        ...pairsPipeline(datasetId, match),
        { $sort: { oid: 1, ts: 1, pos: 1 } },
        { $group: { _id: '$oid', ext: { $first: '$ext' }, seq: { $push: '$act' }, first: { $min: '$t' }, last: { $max: '$t' } } },
        {
          $group: {
            _id: '$seq',
            objects: { $sum: 1 },
            ds: { $push: { $subtract: ['$last', '$first'] } },
            examples: { $bottomN: { n: 3, sortBy: { ext: -1 }, output: '$ext' } },
          },
        },
      ],
      AGGREGATE,
    )
    .toArray()
  const variants: VariantRow[] = rows.map((r) => {
    const ds = r.ds.map(Number).sort((a, b) => a - b)
    const n = ds.length
    const median = n % 2 === 1 ? (ds[(n - 1) / 2] as number) : ((ds[n / 2 - 1] as number) + (ds[n / 2] as number)) / 2
    return { seq: r._id, examples: r.examples, c3: n, c4: ds.reduce((s, x) => s + x, 0), c5: ds[0] ?? 0, c6: ds[n - 1] ?? 0, c7: median }
  })
  return pageVariants(variants, filter.limit, filter.after)
}

/** Type relations (ReadModelQuery.typeRelations). */
export async function mongoTypeRelations(
  eventObjects: Collection<EventObjectRow>,
  relationships: Collection<ObjectRelationshipRow>,
  datasetId: string,
  window: TimeWindow,
): Promise<TypeRelations> {
  const match: Document = { dataset_id: datasetId }
  const time = timeMatch(window, true)
  if (time !== null) match.event_time = time
  const [activityTypes, o2o] = await Promise.all([
    eventObjects
      .aggregate<ActivityTypeRow>(
        [
          { $match: match },
          { $group: { _id: { eid: '$event_id', ot: '$object_type' }, objects: { $addToSet: '$object_id' }, k: { $sum: 1 } } },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.events,
              localField: '_id.eid',
              foreignField: 'event_id',
              pipeline: [{ $match: { dataset_id: datasetId } }, { $project: { _id: 0, event_type: 1 } }],
              as: 'e',
            },
          },
          { $unwind: '$e' },
          { $project: { act: '$e.event_type', ot: '$_id.ot', n: { $size: '$objects' }, k: 1 } },
          {
            $group: {
              _id: { act: '$act', ot: '$ot' },
              events: { $sum: 1 },
              e2o: { $sum: '$k' },
              n_min: { $min: '$n' },
              n_sum: { $sum: '$n' },
              n_max: { $max: '$n' },
            },
          },
          { $project: { _id: 0, act: '$_id.act', ot: '$_id.ot', events: 1, e2o: 1, n_min: 1, n_sum: 1, n_max: 1 } },
        ],
        AGGREGATE,
      )
      .toArray(),
    relationships
      .aggregate<O2oTypeRelation>(
        [
          { $match: { dataset_id: datasetId } },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.objects,
              localField: 'object_id',
              foreignField: 'object_id',
              pipeline: [{ $match: { dataset_id: datasetId } }, { $project: { _id: 0, type: 1 } }],
              as: 's',
            },
          },
          { $unwind: '$s' },
          { $group: { _id: { s: '$s.type', q: { $ifNull: ['$qualifier', null] }, t: '$target_type' }, relationships: { $sum: 1 } } },
          { $project: { _id: 0, source_type: '$_id.s', qualifier: '$_id.q', target_type: '$_id.t', relationships: 1 } },
        ],
        AGGREGATE,
      )
      .toArray(),
  ])
  return { activity_object_types: assembleActivityTypes(activityTypes), o2o: sortO2o(o2o) }
}
