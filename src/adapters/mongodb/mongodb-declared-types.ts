/**
 * The `declared_types` read model in MongoDB (docs/read-models.md#declared_types): the write of a
 * run's declared types by the replay rule (declaredAttributesToApply, src/core/read-model-changes.ts)
 * and the read. Two collections, each upserted only on its unique key (read-model-writes.ts):
 * - `declared_types`: one document per (dataset_id, kind, name), kind `event` or `object`, with
 *   the highest position of a record that declared the type;
 * - `declared_attributes`: one per (dataset_id, kind, type_name, name), with the OCEL 2.0 attribute
 *   type of its latest declaration and that record's position.
 * Names are stored as values (never as field names), inside `$literal` in the updates.
 */
import type { AnyBulkWriteOperation, ClientSession, Db, Document } from 'mongodb'
import { type DeclaredTypeChange, type DeclaredTypeChanges, declaredAttributesToApply } from '../../core/read-model-changes.js'
import { groupDeclaredTypes } from '../../core/declared-types.js'
import type { DeclaredTypes } from '../../schemas/read-models.js'
import { guardedUpdate, lit, READ_MODEL_COLLECTIONS } from './read-model-writes.js'

/** A `declared_types` document. */
export interface DeclaredTypeDoc {
  dataset_id: string
  kind: string
  name: string
  position: number
}

/** A `declared_attributes` document. */
export interface DeclaredAttributeDoc {
  dataset_id: string
  kind: string
  type_name: string
  name: string
  type: string
  position: number
}

/** The type's document: created with the change's last position, or raised to it (positions only grow). */
export function declaredTypeWrite(t: DeclaredTypeChange): AnyBulkWriteOperation<DeclaredTypeDoc> {
  return {
    updateOne: {
      filter: { dataset_id: t.datasetId, kind: t.kind, name: t.name },
      update: [{ $replaceWith: { $mergeObjects: ['$$ROOT', { position: { $max: [{ $ifNull: ['$position', -1] }, lit(t.maxPosition)] } }] } }],
      upsert: true,
    },
  }
}

/**
 * The attribute documents of `t` that the replay rule keeps over `stored` (the stored position of
 * each of the type's attributes, by name), each guarded as well by its position (guardedUpdate), so
 * that a concurrent later declaration is never overwritten.
 */
export function declaredAttributeWrites(t: DeclaredTypeChange, stored: ReadonlyMap<string, number>): AnyBulkWriteOperation<DeclaredAttributeDoc>[] {
  return declaredAttributesToApply(t, (name) => stored.get(name)).map((a) => ({
    updateOne: {
      filter: { dataset_id: t.datasetId, kind: t.kind, type_name: t.name, name: a.name },
      update: guardedUpdate(a.position, { type: lit(a.type), position: lit(a.position) }),
      upsert: true,
    },
  }))
}

/** Writes a run's declared types (Slices.declared_types) in the store's transaction `session`. */
export async function writeDeclaredTypes(db: Db, session: ClientSession, slice: DeclaredTypeChanges): Promise<void> {
  if (slice.size === 0) return
  const types = db.collection<DeclaredTypeDoc>(READ_MODEL_COLLECTIONS.declaredTypes)
  const attributes = db.collection<DeclaredAttributeDoc>(READ_MODEL_COLLECTIONS.declaredAttributes)
  const attributeOps: AnyBulkWriteOperation<DeclaredAttributeDoc>[] = []
  for (const t of slice.values()) {
    const rows = attributes.find({ dataset_id: t.datasetId, kind: t.kind, type_name: t.name }, { session, projection: { _id: 0, name: 1, position: 1 } })
    const stored = new Map<string, number>()
    for await (const row of rows) stored.set(row.name, row.position)
    attributeOps.push(...declaredAttributeWrites(t, stored))
  }
  await types.bulkWrite([...slice.values()].map(declaredTypeWrite), { ordered: false, session })
  if (attributeOps.length > 0) await attributes.bulkWrite(attributeOps, { ordered: false, session })
}

/** The declared types of `datasetId` (ReadModelQuery.declaredTypes), by name, attributes by name. */
export async function readDeclaredTypes(db: Db, datasetId: string): Promise<DeclaredTypes> {
  const projection: Document = { _id: 0 }
  const types = await db
    .collection<DeclaredTypeDoc>(READ_MODEL_COLLECTIONS.declaredTypes)
    .find({ dataset_id: datasetId }, { projection })
    .sort({ kind: 1, name: 1 })
    .toArray()
  const attributes = await db
    .collection<DeclaredAttributeDoc>(READ_MODEL_COLLECTIONS.declaredAttributes)
    .find({ dataset_id: datasetId }, { projection })
    .sort({ kind: 1, type_name: 1, name: 1 })
    .toArray()
  return groupDeclaredTypes(types, attributes)
}
