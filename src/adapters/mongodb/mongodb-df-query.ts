/**
 * The process map on MongoDB, from the directly-follows read model (docs/read-models.md#the-directly-follows-read-model-on-mongodb;
 * definitions: docs/process-map.md; collections written by mongodb-df-writes.ts):
 * - all time: the stored aggregates (`df_aggregates`), one document per activity and edge of the
 *   asked types, whatever the number of events (medians as src/core/duration-stats.ts keeps them);
 * - a window: the steps whose event lies in it (`df_steps`, index `by_time`), each with its
 *   predecessor, grouped in the server into the same MapRow kinds as the SQLite adapter's query
 *   (src/core/process-map-rows.ts). Distinct counts group twice (never an `$addToSet` array, which
 *   one document must hold); medians are exact: `$documentNumber` and `$count` windows over each
 *   group's sorted durations, then the mean of the one or two middle values (`$median` is
 *   approximate). The kinds run as parallel aggregations, each of which may spill to disk
 *   (`allowDiskUse`; not `$facet`, whose output is one document of at most 16 MB).
 */
import type { Db, Document } from 'mongodb'
import type { ProcessMapAnswer, ProcessMapFilter } from '../../ports/read-model-query.js'
import { assembleProcessMap, fillWindowEnds, type MapRow, type NamedAggregate, rowsOfAggregates } from '../../core/process-map-rows.js'
import { aggregateOfDoc, type DfStepDoc } from './mongodb-df-writes.js'
import { lit, READ_MODEL_COLLECTIONS } from './read-model-writes.js'
import { joinKey } from '../../core/keys.js'

const AGGREGATE = { allowDiskUse: true } as const

/** The group key of a row: object type, `k1` and `k2` (MapRow). */
const ROW_KEY = { ot: '$_id.ot', k1: '$_id.k1', k2: '$_id.k2' }

/**
 * The stages that end a statistics row (`edge`, `waiting`, `run`; see MapRow) from documents
 * `{ot, k1, k2, d}`: per (ot, k1, k2), count, sum, min, max and the exact median of `d` (ms) from
 * `$documentNumber` and `$count` windows (the mean of the one or two middle values), into `c3`..`c7`.
 */
function statsStages(): Document[] {
  const key = { ot: '$ot', k1: '$k1', k2: '$k2' }
  const half = (plus: number) => ({ $floor: { $divide: [{ $add: ['$n', plus] }, 2] } })
  return [
    { $setWindowFields: { partitionBy: key, sortBy: { d: 1 }, output: { rn: { $documentNumber: {} }, n: { $count: {} } } } },
    {
      $group: {
        _id: key,
        c3: { $sum: 1 },
        c4: { $sum: '$d' },
        c5: { $min: '$d' },
        c6: { $max: '$d' },
        c7: { $avg: { $cond: [{ $in: ['$rn', [half(1), half(2)]] }, '$d', null] } },
      },
    },
    { $project: { _id: 0, ...ROW_KEY, c3: 1, c4: 1, c5: 1, c6: 1, c7: 1 } },
  ]
}

/** The stages that count the distinct `distinct` of each (ot, k1, k2) group into `field`: two groupings, no set held in a document. */
function distinctStages(group: Document, distinct: Document | string, field: 'c1' | 'c2'): Document[] {
  return [
    { $group: { _id: { ...group, x: distinct } } },
    { $group: { _id: { ot: '$_id.ot', k1: '$_id.k1', k2: '$_id.k2' }, [field]: { $sum: 1 } } },
    { $project: { _id: 0, ...ROW_KEY, [field]: 1 } },
  ]
}

/** A part of a MapRow of one kind, as a window's aggregation answers it. */
export type RowPart = Pick<MapRow, 'ot' | 'k1' | 'k2'> & Partial<Pick<MapRow, 'c1' | 'c2' | 'c3' | 'c4' | 'c5' | 'c6' | 'c7'>>

/** The all-time process map of stored `df_aggregates` documents (DfAggregateDoc), and its medians' error bound (rowsOfAggregates). */
export function processMapOfAggregates(docs: readonly Document[]): ProcessMapAnswer {
  const text = (v: unknown): string => (typeof v === 'string' ? v : '')
  const aggregates = docs.map((d): NamedAggregate => ({ ...aggregateOfDoc(d), ot: text(d.object_type), a: text(d.a), b: typeof d.b === 'string' ? d.b : null }))
  const { rows, medianRelativeError } = rowsOfAggregates(aggregates)
  return { object_types: assembleProcessMap(rows), median_relative_error: medianRelativeError }
}

/**
 * The aggregations of a window's map over `df_steps`, one per part of a MapRow kind (see
 * windowMap): the steps of dataset `datasetId` whose event lies in `filter`'s window (at least one
 * of `from`, `to`) and whose object is of an asked type.
 */
export function windowPipelines(datasetId: string, filter: ProcessMapFilter): [MapRow['kind'], Document[]][] {
  const match: Document = { dataset_id: datasetId }
  const asked = filter.objectTypes ?? []
  if (asked.length > 0) match.object_type = { $in: [...asked] }
  const from = filter.from === undefined ? undefined : Date.parse(filter.from)
  const time: Document = {}
  if (from !== undefined) time.$gte = from
  if (filter.to !== undefined) time.$lt = Date.parse(filter.to)
  match.t = time
  // A predecessor is in the window when its time is (it is never after its successor): as a query
  // filter (null and missing never match $gte of a number) and as an expression.
  const prevIn: Document = from === undefined ? { prev_t: { $ne: null } } : { prev_t: { $gte: from } }
  const prevInExpr: Document = from === undefined ? { $isNumber: '$prev_t' } : { $and: [{ $isNumber: '$prev_t' }, { $gte: ['$prev_t', from] }] }
  const edges: Document = { ...match, ...prevIn }
  const activity = { ot: '$object_type', k1: '$activity', k2: lit('') }
  const edge = { ot: '$object_type', k1: '$prev_act', k2: '$activity' }
  return [
    [
      'activity',
      [
        { $match: match },
        { $group: { _id: { ...activity, e: '$pos' }, n: { $sum: 1 }, s: { $sum: { $cond: [prevInExpr, 0, 1] } } } },
        { $group: { _id: { ot: '$_id.ot', k1: '$_id.k1', k2: '$_id.k2' }, c1: { $sum: 1 }, c3: { $sum: '$n' }, c4: { $sum: '$s' } } },
        { $project: { _id: 0, ...ROW_KEY, c1: 1, c3: 1, c4: 1 } },
      ],
    ],
    ['activity', [{ $match: match }, ...distinctStages(activity, '$object_id', 'c2')]],
    ['edge', [{ $match: edges }, { $project: { _id: 0, ...edge, d: { $subtract: ['$t', '$prev_t'] } } }, ...statsStages()]],
    ['edge', [{ $match: edges }, ...distinctStages(edge, '$object_id', 'c1')]],
    ['edge', [{ $match: edges }, ...distinctStages(edge, { p: '$prev_pos', e: '$pos' }, 'c2')]],
    [
      'waiting',
      [
        { $match: { ...edges, prev_te: { $ne: null } } },
        { $project: { _id: 0, ...edge, d: { $max: [0, { $subtract: ['$t', '$prev_te'] }] } } },
        ...statsStages(),
      ],
    ],
    [
      'run',
      [
        { $match: { ...match, te: { $ne: null } } },
        { $group: { _id: { ...activity, e: '$pos' }, d: { $first: { $subtract: ['$te', '$t'] } } } },
        { $project: { _id: 0, ...ROW_KEY, d: 1 } },
        ...statsStages(),
      ],
    ],
  ]
}

/** A window's map from its aggregations' answers (windowPipelines, in the same order): MapRow parts of one key merged, end counts filled (fillWindowEnds). */
export function windowMap(parts: readonly { kind: MapRow['kind']; rows: readonly RowPart[] }[]): ProcessMapAnswer {
  const rows = new Map<string, MapRow>()
  for (const { kind, rows: found } of parts) {
    for (const part of found) {
      const key = joinKey(kind, part.ot, part.k1, part.k2)
      let row = rows.get(key)
      if (row === undefined) {
        row = { kind, ot: part.ot, k1: part.k1, k2: part.k2, c1: 0, c2: 0, c3: 0, c4: 0, c5: 0, c6: 0, c7: null }
        rows.set(key, row)
      }
      Object.assign(row, part)
    }
  }
  const all = [...rows.values()]
  fillWindowEnds(all)
  return { object_types: assembleProcessMap(all), median_relative_error: 0 }
}

/**
 * The process map of dataset `datasetId` for `filter` (ProcessMapFilter: window on event time,
 * object types).
 * @returns the maps by object type (sorted, assembleProcessMap) and the bound on their medians'
 *   relative error (0 in a window, whose medians are exact).
 */
export async function mongoProcessMap(db: Db, datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer> {
  if (filter.from === undefined && filter.to === undefined) {
    const asked = filter.objectTypes ?? []
    const match: Document = { dataset_id: datasetId, ...(asked.length > 0 ? { object_type: { $in: [...asked] } } : {}) }
    return processMapOfAggregates(
      await db
        .collection(READ_MODEL_COLLECTIONS.dfAggregates)
        .find(match, { projection: { _id: 0 } })
        .toArray(),
    )
  }
  const steps = db.collection<DfStepDoc>(READ_MODEL_COLLECTIONS.dfSteps)
  return windowMap(
    await Promise.all(
      windowPipelines(datasetId, filter).map(async ([kind, pipeline]) => ({ kind, rows: await steps.aggregate<RowPart>(pipeline, AGGREGATE).toArray() })),
    ),
  )
}
