/**
 * ReadModelQuery adapter on MongoDB (`mongodb` 7 driver, server 7.0): reads the collections the
 * projector writes (read-model-writes.ts: READ_MODEL_COLLECTIONS). Every method filters, sorts,
 * pages and aggregates in the server; JavaScript only shapes the few documents an answer holds.
 *
 * The process map reads the directly-follows read model (mongodb-df-query.ts): all time from its
 * aggregates, a window from the steps in it.
 * All stages may spill to disk (`allowDiskUse`). `$setWindowFields` cannot run inside a
 * transaction or with snapshot read concern; these reads use neither.
 */
import { cutPage, nextCursor, type PageCut, probeLimit } from '../../core/page.js'
import { type AuditChainDoc, readAuditChain, readAuditChainAt } from './mongodb-audit-chain.js'
import { readDeclaredTypes } from './mongodb-declared-types.js'
import type { DeclaredTypes } from '../../schemas/read-models.js'
import type { AuditChainEntry } from '../../schemas/audit.js'
import type { Collection, Db, Document, IndexDescription } from 'mongodb'
import type {
  DatasetCounts,
  EventFilter,
  EventPage,
  ObjectDetail,
  ObjectHistory,
  ObjectHistoryFilter,
  ObjectHistoryPage,
  PerformanceFilter,
  ProcessMapAnswer,
  ProcessMapFilter,
  ReadModelQuery,
  TimeWindow,
  TypeRelations,
  VariantsFilter,
  VariantsPage,
} from '../../ports/read-model-query.js'
import type { PerformanceActivity } from '../../schemas/analysis.js'
import { mongoPerformance, mongoTypeRelations, mongoVariants } from './mongodb-analysis-query.js'
import { mongoProcessMap } from './mongodb-df-query.js'
import { type AttributeTypeRow, compareText, withAttributes } from '../../core/process-map-rows.js'
import type { EventObjectLink, EventView, ObjectRelationship, TypeInfo } from '../../schemas/process.js'
import type { EventObjectRow, EventRow, EventTypeRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow, ObjectTypeRow } from '../../schemas/read-models.js'
import { READ_MODEL_COLLECTIONS } from './read-model-writes.js'
import { decodeKey, decodeKeys } from './field-names.js'

/** Indexes of the read side's queries, created by `createIndexes` beside the writer's (names prefixed `q_`). */
export const READ_QUERY_INDEXES: Record<string, IndexDescription[]> = {
  [READ_MODEL_COLLECTIONS.eventObjects]: [
    { key: { dataset_id: 1, object_id: 1, event_time: 1, position: 1 }, name: 'q_by_object' },
    { key: { dataset_id: 1, external_id: 1, object_type: 1 }, name: 'q_by_external_id' },
    { key: { dataset_id: 1, object_type: 1, event_time: 1 }, name: 'q_by_type_time' },
  ],
  [READ_MODEL_COLLECTIONS.events]: [{ key: { dataset_id: 1, event_type: 1, timestamp: 1, position: 1 }, name: 'q_by_type' }],
}

const AGGREGATE = { allowDiskUse: true } as const

/** Attribute rows whose names were read from stored field names (field-names.ts), with the names as written. */
function decodedNames(rows: readonly AttributeTypeRow[]): AttributeTypeRow[] {
  return rows.map((r) => ({ ...r, name: decodeKey(r.name) }))
}

export class MongoReadModelQuery implements ReadModelQuery {
  private readonly eventTypesC: Collection<EventTypeRow>
  private readonly objectTypesC: Collection<ObjectTypeRow>
  private readonly objectsC: Collection<ObjectRow>
  private readonly objectChangesC: Collection<ObjectChangeRow>
  private readonly eventsC: Collection<EventRow>
  private readonly eventObjectsC: Collection<EventObjectRow>
  private readonly objectRelationshipsC: Collection<ObjectRelationshipRow>
  private readonly checkpointsC: Collection<{ _id: string; position: number }>

  /** @param db the database holding the read models (MONGODB_URL's database). */
  constructor(private readonly db: Db) {
    const c = READ_MODEL_COLLECTIONS
    this.eventTypesC = db.collection<EventTypeRow>(c.eventTypes)
    this.objectTypesC = db.collection<ObjectTypeRow>(c.objectTypes)
    this.objectsC = db.collection<ObjectRow>(c.objects)
    this.objectChangesC = db.collection<ObjectChangeRow>(c.objectChanges)
    this.eventsC = db.collection<EventRow>(c.events)
    this.eventObjectsC = db.collection<EventObjectRow>(c.eventObjects)
    this.objectRelationshipsC = db.collection<ObjectRelationshipRow>(c.objectRelationships)
    this.checkpointsC = db.collection<{ _id: string; position: number }>(c.checkpoints)
  }

  /** Creates READ_QUERY_INDEXES (idempotent); run once at start. */
  async createIndexes(): Promise<void> {
    for (const [name, indexes] of Object.entries(READ_QUERY_INDEXES)) await this.db.collection(name).createIndexes(indexes)
  }

  async asOf(): Promise<number> {
    const [row] = await this.checkpointsC.aggregate<{ p: number }>([{ $group: { _id: null, p: { $min: '$position' } } }]).toArray()
    return row?.p ?? 0
  }

  async summary(datasetId: string): Promise<DatasetCounts> {
    const d = { dataset_id: datasetId }
    const [events, objects, event_types, object_types, e2o, first, last] = await Promise.all([
      this.eventsC.countDocuments(d),
      this.objectsC.countDocuments(d),
      this.eventTypesC.countDocuments(d),
      this.objectTypesC.countDocuments(d),
      this.eventObjectsC.countDocuments(d),
      this.eventsC.findOne(d, { sort: { timestamp: 1, position: 1 }, projection: { timestamp: 1 } }),
      this.eventsC.findOne(d, { sort: { timestamp: -1, position: -1 }, projection: { timestamp: 1 } }),
    ])
    return { events, objects, event_types, object_types, e2o, first_event_time: first?.timestamp ?? null, last_event_time: last?.timestamp ?? null }
  }

  async eventTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = await this.eventTypesC.find({ dataset_id: datasetId }).sort({ name: 1 }).toArray()
    const attributes = await this.eventsC
      .aggregate<AttributeTypeRow>(
        [
          { $match: { dataset_id: datasetId } },
          { $project: { owner: '$event_type', kv: { $objectToArray: '$properties' } } },
          { $unwind: '$kv' },
          { $group: { _id: { owner: '$owner', name: '$kv.k', type: { $type: '$kv.v' } } } },
          { $replaceWith: '$_id' },
        ],
        AGGREGATE,
      )
      .toArray()
    return withAttributes(types, decodedNames(attributes))
  }

  async declaredTypes(datasetId: string): Promise<DeclaredTypes> {
    return readDeclaredTypes(this.db, datasetId)
  }

  async objectTypes(datasetId: string): Promise<TypeInfo[]> {
    const types = await this.objectTypesC.find({ dataset_id: datasetId }).sort({ name: 1 }).toArray()
    const attributes = await this.objectChangesC
      .aggregate<AttributeTypeRow>(
        [
          { $match: { dataset_id: datasetId } },
          { $project: { object_id: 1, kv: { $objectToArray: '$attributes' } } },
          { $unwind: '$kv' },
          { $group: { _id: { object_id: '$object_id', name: '$kv.k', type: { $type: '$kv.v' } } } },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.objects,
              localField: '_id.object_id',
              foreignField: 'object_id',
              pipeline: [{ $match: { dataset_id: datasetId } }, { $project: { _id: 0, type: 1 } }],
              as: 'o',
            },
          },
          { $unwind: '$o' },
          { $group: { _id: { owner: '$o.type', name: '$_id.name', type: '$_id.type' } } },
          { $replaceWith: '$_id' },
        ],
        AGGREGATE,
      )
      .toArray()
    return withAttributes(types, decodedNames(attributes))
  }

  /**
   * One object by (type, id) with each part of its view (docs/api.md#read-endpoints), read at once:
   * its attribute history, relationships both ways, trace and related objects, each at most
   * `limit` with its `…_truncated` flag (src/core/page.ts).
   */
  async object(datasetId: string, type: string, id: string, limit: number): Promise<ObjectDetail | null> {
    const row = await this.objectsC.findOne({ dataset_id: datasetId, type, external_id: id })
    if (row === null) return null
    const [history, relationships, incoming, trace, related] = await Promise.all([
      this.attributeHistoryOf(datasetId, row.object_id, limit),
      this.relationshipsOf(datasetId, row.object_id, limit),
      this.incomingRelationshipsOf(datasetId, row.object_id, limit),
      this.traceOf(datasetId, row.object_id, limit),
      this.relatedOf(datasetId, row.object_id, limit),
    ])
    return {
      object: {
        object_id: row.object_id,
        type: row.type,
        id: row.external_id,
        attributes: decodeKeys(row.properties),
        created_at: row.created_at,
        updated_at: row.updated_at,
      },
      attribute_history: history.items,
      attribute_history_truncated: history.truncated,
      relationships: relationships.items,
      relationships_truncated: relationships.truncated,
      incoming_relationships: incoming.items,
      incoming_relationships_truncated: incoming.truncated,
      trace: trace.items,
      trace_truncated: trace.truncated,
      related: related.items,
      related_truncated: related.truncated,
    }
  }

  /**
   * The latest `limit` attribute changes of object `objectId` (its `object_id`), oldest first: each a
   * time (ISO 8601), log position and the attributes set (names as written). Read newest first,
   * one more than `limit` to tell whether older ones were left out.
   */
  private async attributeHistoryOf(datasetId: string, objectId: string, limit: number): Promise<PageCut<ObjectDetail['attribute_history'][number]>> {
    const rows = await this.objectChangesC.find({ dataset_id: datasetId, object_id: objectId }).sort({ position: -1 }).limit(probeLimit(limit)).toArray()
    const cut = cutPage(rows, limit)
    return { items: cut.items.reverse().map((h) => ({ time: h.time, position: h.position, attributes: decodeKeys(h.attributes) })), truncated: cut.truncated }
  }

  /**
   * The O2O relationships of object `objectId` (its `object_id`) to others, by target type, target id
   * and qualifier (docs/api.md#o2o-relationships-and-attribute-times): the first `limit`.
   */
  private async relationshipsOf(datasetId: string, objectId: string, limit: number): Promise<PageCut<ObjectDetail['relationships'][number]>> {
    const rows = await this.objectRelationshipsC
      .find({ dataset_id: datasetId, object_id: objectId })
      .sort({ target_type: 1, target_external_id: 1, qualifier: 1 })
      .limit(probeLimit(limit))
      .toArray()
    const cut = cutPage(rows, limit)
    return {
      items: cut.items.map((r) => ({ object_id: r.target_object_id, type: r.target_type, id: r.target_external_id, qualifier: r.qualifier, time: r.time })),
      truncated: cut.truncated,
    }
  }

  /**
   * The O2O relationships of other objects to object `objectId` (its `object_id`; index by_target), each
   * with its source's type and id, by source type, source id and qualifier
   * (docs/api.md#o2o-relationships-and-attribute-times): the first `limit`.
   */
  private async incomingRelationshipsOf(datasetId: string, objectId: string, limit: number): Promise<PageCut<ObjectRelationship>> {
    const rows = await this.objectRelationshipsC
      .aggregate<ObjectRelationship>(
        [
          { $match: { dataset_id: datasetId, target_object_id: objectId } },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.objects,
              localField: 'object_id',
              foreignField: 'object_id',
              pipeline: [{ $match: { dataset_id: datasetId } }, { $project: { _id: 0, type: 1, external_id: 1 } }],
              as: 's',
            },
          },
          { $unwind: '$s' },
          { $sort: { 's.type': 1, 's.external_id': 1, qualifier: 1 } },
          { $limit: probeLimit(limit) },
          { $project: { _id: 0, object_id: 1, type: '$s.type', id: '$s.external_id', qualifier: 1, time: 1 } },
        ],
        AGGREGATE,
      )
      .toArray()
    return cutPage(rows, limit)
  }

  /**
   * The first `limit` events of object `objectId` (its `object_id`) in (timestamp, position) order: its
   * trace, each event with the distinct qualifiers of its links to the object (sorted, no null).
   */
  private async traceOf(datasetId: string, objectId: string, limit: number): Promise<PageCut<ObjectDetail['trace'][number]>> {
    const rows = await this.eventObjectsC
      .aggregate<{ _id: string; qualifiers: (string | null)[]; e: EventRow }>(
        [
          { $match: { dataset_id: datasetId, object_id: objectId } },
          { $group: { _id: '$event_id', qualifiers: { $addToSet: '$qualifier' }, event_time: { $first: '$event_time' }, position: { $first: '$position' } } },
          { $sort: { event_time: 1, position: 1 } },
          { $limit: probeLimit(limit) },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.events,
              localField: '_id',
              foreignField: 'event_id',
              pipeline: [{ $match: { dataset_id: datasetId } }],
              as: 'e',
            },
          },
          { $unwind: '$e' },
          { $sort: { 'e.timestamp': 1, 'e.position': 1 } },
        ],
        AGGREGATE,
      )
      .toArray()
    const cut = cutPage(rows, limit)
    return {
      items: cut.items.map((t) => ({
        event_id: t.e.event_id,
        event_type: t.e.event_type,
        timestamp: t.e.timestamp,
        end_timestamp: t.e.end_timestamp,
        qualifiers: t.qualifiers.filter((q): q is string => q !== null).sort(compareText),
        position: t.e.position,
      })),
      truncated: cut.truncated,
    }
  }

  /**
   * The objects that share events with object `objectId` (its `object_id`), each with the number of
   * events shared, most shared first, then by type and id: the first `limit`.
   */
  private async relatedOf(datasetId: string, objectId: string, limit: number): Promise<PageCut<ObjectDetail['related'][number]>> {
    const rows = await this.eventObjectsC
      .aggregate<{ object_id: string; type: string; id: string; shared_events: number }>(
        [
          { $match: { dataset_id: datasetId, object_id: objectId } },
          { $group: { _id: '$event_id' } },
          {
            $lookup: {
              from: READ_MODEL_COLLECTIONS.eventObjects,
              localField: '_id',
              foreignField: 'event_id',
              pipeline: [
                { $match: { dataset_id: datasetId, object_id: { $ne: objectId } } },
                { $project: { _id: 0, object_id: 1, object_type: 1, external_id: 1 } },
              ],
              as: 'other',
            },
          },
          { $unwind: '$other' },
          {
            $group: {
              _id: { object_id: '$other.object_id', event_id: '$_id' },
              type: { $first: '$other.object_type' },
              id: { $first: '$other.external_id' },
            },
          },
          { $group: { _id: '$_id.object_id', type: { $first: '$type' }, id: { $first: '$id' }, shared_events: { $sum: 1 } } },
          { $sort: { shared_events: -1, type: 1, id: 1 } },
          { $limit: probeLimit(limit) },
          { $project: { _id: 0, object_id: '$_id', type: 1, id: 1, shared_events: 1 } },
        ],
        AGGREGATE,
      )
      .toArray()
    const cut = cutPage(rows, limit)
    return { items: cut.items.map((r) => ({ object_id: r.object_id, type: r.type, id: r.id, shared_events: r.shared_events })), truncated: cut.truncated }
  }

  async events(datasetId: string, filter: EventFilter): Promise<EventPage> {
    const match: Document = { dataset_id: datasetId }
    if (filter.eventType !== undefined) match.event_type = filter.eventType
    const time: Document = {}
    if (filter.from !== undefined) time.$gte = filter.from
    if (filter.to !== undefined) time.$lt = filter.to
    if (Object.keys(time).length > 0) match.timestamp = time
    const pageMatch: Document = { ...match }
    if (filter.after !== undefined) {
      const { timestamp, position } = filter.after
      pageMatch.$or = [{ timestamp: { $gt: timestamp } }, { timestamp, position: { $gt: position } }]
    }
    const linked: Document[] = []
    if (filter.objectId !== undefined || filter.objectType !== undefined) {
      const link: Document = { dataset_id: datasetId }
      if (filter.objectId !== undefined) link.external_id = filter.objectId
      if (filter.objectType !== undefined) link.object_type = filter.objectType
      linked.push(
        {
          $lookup: {
            from: READ_MODEL_COLLECTIONS.eventObjects,
            localField: 'event_id',
            foreignField: 'event_id',
            pipeline: [{ $match: link }, { $limit: 1 }, { $project: { _id: 1 } }],
            as: 'hit',
          },
        },
        { $match: { 'hit.0': { $exists: true } } },
      )
    }
    // Every page's events: the filter without `after`.
    const total =
      filter.count === false
        ? null
        : ((await this.eventsC.aggregate<{ n: number }>([{ $match: match }, ...linked, { $count: 'n' }], AGGREGATE).toArray())[0]?.n ?? 0)
    const pipeline: Document[] = [{ $match: pageMatch }, { $sort: { timestamp: 1, position: 1 } }, ...linked]
    pipeline.push(
      { $limit: probeLimit(filter.limit) },
      { $project: { _id: 0, event_id: 1, event_type: 1, timestamp: 1, end_timestamp: 1, properties: 1, position: 1 } },
    )
    const rows = await this.eventsC.aggregate<Omit<EventView, 'objects'>>(pipeline, AGGREGATE).toArray()
    const cut = cutPage(rows, filter.limit)
    const page = cut.items
    const links = new Map<string, EventObjectLink[]>()
    if (page.length > 0) {
      const linkRows = await this.eventObjectsC
        .find({ dataset_id: datasetId, event_id: { $in: page.map((e) => e.event_id) } })
        .sort({ event_id: 1, object_type: 1, external_id: 1, qualifier: 1 })
        .toArray()
      for (const l of linkRows) {
        const list = links.get(l.event_id) ?? []
        list.push({ object_id: l.object_id, type: l.object_type, id: l.external_id, qualifier: l.qualifier })
        links.set(l.event_id, list)
      }
    }
    const events: EventView[] = page.map((e) => ({
      ...e,
      properties: decodeKeys(e.properties),
      end_timestamp: e.end_timestamp ?? null,
      objects: links.get(e.event_id) ?? [],
    }))
    return {
      events,
      next: nextCursor(cut, (last) => ({ timestamp: last.timestamp, position: last.position })),
      total,
    }
  }

  async processMap(datasetId: string, filter: ProcessMapFilter): Promise<ProcessMapAnswer> {
    return mongoProcessMap(this.db, datasetId, filter)
  }

  async performance(datasetId: string, filter: PerformanceFilter): Promise<PerformanceActivity[]> {
    return mongoPerformance(this.eventObjectsC, datasetId, filter)
  }

  async variants(datasetId: string, filter: VariantsFilter): Promise<VariantsPage> {
    return mongoVariants(this.eventObjectsC, datasetId, filter)
  }

  async typeRelations(datasetId: string, window: TimeWindow): Promise<TypeRelations> {
    return mongoTypeRelations(this.eventObjectsC, this.objectRelationshipsC, datasetId, window)
  }

  async objectHistories(datasetId: string, page: ObjectHistoryFilter): Promise<ObjectHistoryPage> {
    const after = page.after
    const filter = {
      dataset_id: datasetId,
      ...(after === undefined ? {} : { $or: [{ type: { $gt: after.type } }, { type: after.type, external_id: { $gt: after.id } }] }),
      ...(page.objectIds === undefined ? {} : { object_id: { $in: [...page.objectIds] } }),
    }
    const rows = await this.objectsC
      .find(filter, { projection: { _id: 0, object_id: 1, type: 1, external_id: 1 } })
      .sort({ type: 1, external_id: 1 })
      .limit(probeLimit(page.limit))
      .toArray()
    const objects: ObjectHistory[] = cutPage(rows, page.limit).items.map((o) => ({
      object_id: o.object_id,
      type: o.type,
      id: o.external_id,
      changes: [],
      relationships: [],
    }))
    const byId = new Map(objects.map((o) => [o.object_id, o]))
    const changes = await this.objectChangesC
      .find({ dataset_id: datasetId, object_id: { $in: [...byId.keys()] } })
      .sort({ object_id: 1, position: 1 })
      .toArray()
    for (const c of changes) byId.get(c.object_id)?.changes.push({ position: c.position, time: c.time, attributes: decodeKeys(c.attributes) })
    const relationships = await this.objectRelationshipsC
      .find({ dataset_id: datasetId, object_id: { $in: [...byId.keys()] } })
      .sort({ object_id: 1, target_object_id: 1, qualifier: 1 })
      .toArray()
    const targets = new Map(
      (
        await this.objectsC
          .find(
            { dataset_id: datasetId, object_id: { $in: [...new Set(relationships.map((r) => r.target_object_id))] } },
            { projection: { _id: 0, object_id: 1, type: 1, external_id: 1 } },
          )
          .toArray()
      ).map((t) => [t.object_id, t]),
    )
    for (const r of relationships) {
      const target = targets.get(r.target_object_id)
      if (target === undefined) continue
      byId.get(r.object_id)?.relationships.push({ object_id: r.target_object_id, type: target.type, id: target.external_id, qualifier: r.qualifier })
    }
    return { objects, next: nextCursor(cutPage(rows, page.limit), (last) => ({ type: last.type, id: last.external_id })) }
  }

  async sharedObjectIds(datasetId: string): Promise<string[]> {
    const groups = await this.objectsC
      .aggregate<{ _id: string }>(
        [{ $match: { dataset_id: datasetId } }, { $group: { _id: '$external_id', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }, { $sort: { _id: 1 } }],
        { allowDiskUse: true },
      )
      .toArray()
    return groups.map((g) => g._id)
  }

  async objectsWithIds(datasetId: string, ids: readonly string[]): Promise<{ object_id: string; type: string; id: string }[]> {
    if (ids.length === 0) return []
    const rows = await this.objectsC
      .find({ dataset_id: datasetId, external_id: { $in: [...ids] } }, { projection: { _id: 0, object_id: 1, type: 1, external_id: 1 } })
      .sort({ type: 1, external_id: 1 })
      .toArray()
    return rows.map((o) => ({ object_id: o.object_id, type: o.type, id: o.external_id }))
  }

  /** Each read sees the data as it is then (see the port): no multi-document snapshot is held for an export's length. */
  async consistentRead<T>(fn: () => Promise<T>): Promise<T> {
    return fn()
  }

  /** The MongoClient is shared with the other stores and closed by the composition root. */
  async auditChain(datasetId: string, after: number | null, limit: number): Promise<AuditChainEntry[]> {
    return readAuditChain(this.db.collection<AuditChainDoc>(READ_MODEL_COLLECTIONS.auditChain), datasetId, after, limit)
  }

  async auditChainAt(datasetId: string, position: number | null): Promise<AuditChainEntry | null> {
    return readAuditChainAt(this.db.collection<AuditChainDoc>(READ_MODEL_COLLECTIONS.auditChain), datasetId, position)
  }

  async close(): Promise<void> {}
}
