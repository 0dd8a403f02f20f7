/**
 * Claims on MongoDB: first-writer-wins upserts on a unique index (object claims, idempotency-key
 * claims). Of two concurrent claims of one key exactly one inserts its document.
 */
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb'
import { MongoBulkWriteError } from 'mongodb'

/** MongoDB's duplicate key error code (E11000). */
export const DUPLICATE_KEY = 11000

/**
 * Runs `ops` (upserts with `$setOnInsert`) unordered.
 * @returns the indexes of `ops` whose upsert inserted a document: the claims this call took first.
 * @throws what MongoDB throws, except duplicate keys: a concurrent claim of the same key may
 *   surface as one, and means that key was claimed first elsewhere.
 */
export async function takeClaims<T extends Document>(collection: Collection<T>, ops: AnyBulkWriteOperation<T>[]): Promise<Set<number>> {
  let upserted: Record<number, unknown>
  try {
    upserted = (await collection.bulkWrite(ops, { ordered: false })).upsertedIds
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError) || [error.writeErrors].flat().some((e) => e.code !== DUPLICATE_KEY)) throw error
    upserted = error.result.upsertedIds
  }
  return new Set(Object.keys(upserted).map(Number))
}
