/**
 * The one record decoder (event sourcing: records are versioned and never edited; readers keep
 * reading every version ever written). Every log adapter turns what its engine stored (a SQLite
 * row, an EventStoreDB event) into an EncodedRecord and calls `decodeRecord`; nothing else decides
 * whether a (type, version) is readable.
 *
 * Older versions are upcast here, in one place, to the current version of their type (NewRecord),
 * so projections see one shape per type. The switch over (type, version) is exhaustive: adding a variant to NewRecord (a new type or a
 * new version) fails to compile here, and in every projection's `evolve`, until it is handled.
 * An unknown type or version, or data that does not match its schema, throws
 * UnreadableRecordError with the record's name and position: skipping it would silently corrupt
 * the read models, and an auditor's replay would miss it.
 */
import { Compile } from 'typebox/compile'
import { EventRecordedV1, type NewRecord, ObjectUpsertedV1, ObjectUpsertedV2, STREAM_PREFIX, type StoredRecord, TypesDeclaredV1 } from '../schemas/records.js'
import { messageOf } from './errors.js'

/** `"<type> v<version>"` of each record variant, e.g. `"EventRecorded v1"`: the decoder's switch keys. */
type KeyOf<R> = R extends { type: infer T extends string; version: infer V extends number } ? `${T} v${V}` : never
export type RecordKey = KeyOf<NewRecord>

/** Every (type, version) ever written: the current ones (RecordKey) and the older ones upcast on read. */
type StoredKey = RecordKey | 'ObjectUpserted v1'

/** Every readable (type, version). A missing or extra key fails to compile. */
const READABLE: Record<StoredKey, true> = { 'EventRecorded v1': true, 'ObjectUpserted v1': true, 'ObjectUpserted v2': true, 'TypesDeclared v1': true }

/** The stored record of one (type, version), e.g. `RecordOf<'EventRecorded', 1>`. */
export type RecordOf<T extends StoredRecord['type'], V extends number> = Extract<StoredRecord, { type: T; version: V }>

/** A record as an engine stored it, before decoding. */
export interface EncodedRecord {
  /** The log's global position (an integer below 2^53). */
  position: number
  /** `dataset-<id>`: the dataset is taken from it. */
  stream: string
  /** The record type as stored (SQLite column `type`, EventStoreDB event type). */
  type: string
  /** The schema version as stored (SQLite column `version`, EventStoreDB metadata `schema_version`). */
  version: unknown
  /** The record's data: parsed JSON, or the JSON text (then parsed here). */
  data: unknown
  /** UTC ISO 8601 with ms: when the log committed it. */
  appendedAt: string
}

/** A record this build cannot read: unknown type or version, data off its schema, or not in a dataset stream. */
export class UnreadableRecordError extends Error {
  override readonly name = 'UnreadableRecordError'
  constructor(
    readonly position: number,
    readonly stream: string,
    readonly type: string,
    readonly version: unknown,
    reason: string,
  ) {
    super(`log: record ${type} v${String(version)} at position ${String(position)} in ${stream} is unreadable: ${reason}`)
  }
}

const checkEventRecordedV1 = Compile(EventRecordedV1)
const checkObjectUpsertedV1 = Compile(ObjectUpsertedV1)
const checkObjectUpsertedV2 = Compile(ObjectUpsertedV2)
const checkTypesDeclaredV1 = Compile(TypesDeclaredV1)

/**
 * The one upcast: `ObjectUpserted` v1 → v2. A v1 upsert carried no time of its own, so its values
 * took effect when it was received (`time = received_at`, what v1 read models showed), and no O2O.
 */
export function upcastObjectUpsertedV1(v1: ObjectUpsertedV1): ObjectUpsertedV2 {
  const { object_id, type, id, properties, received_at, key_id, request_id } = v1
  return { object_id, type, id, properties, time: received_at, relationships: [], received_at, key_id, request_id }
}

function isReadable(key: string): key is StoredKey {
  return Object.hasOwn(READABLE, key)
}

export interface DecodeOptions {
  /**
   * Check the data against its (type, version) schema (default true). A log whose every record was
   * written by this service's own append, after validation, into a store that refuses edits (the
   * SQLite file) may pass false: the check costs about half as much again as parsing the JSON.
   * The (type, version) is always checked.
   */
  checkData?: boolean
}

/**
 * Decodes one stored record.
 * @returns the StoredRecord in the current version of its type: data exactly as stored, or upcast
 *   from an older version (`ObjectUpserted` v1 → v2, upcastObjectUpsertedV1).
 * @throws UnreadableRecordError naming the type, version, position and stream when the stream is not a
 *   dataset stream, the (type, version) is unknown to this build, the data is not JSON, or it breaks its schema.
 */
export function decodeRecord(encoded: EncodedRecord, options: DecodeOptions = {}): StoredRecord {
  const { position, stream, type, version, appendedAt } = encoded
  const checkData = options.checkData ?? true
  const fail = (reason: string) => new UnreadableRecordError(position, stream, type, version, reason)
  if (!stream.startsWith(STREAM_PREFIX)) throw fail(`stream ${stream} is not a dataset stream (${STREAM_PREFIX}<id>)`)
  const key = `${type} v${String(version)}`
  if (!Number.isInteger(version) || !isReadable(key)) throw fail(`this build reads only ${Object.keys(READABLE).join(', ')}`)
  let data = encoded.data
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data)
    } catch (error) {
      throw fail(`its data is not JSON (${messageOf(error)})`)
    }
  }
  // Each case writes the record's members in one literal (no spread of a shared base): one object per record.
  const datasetId = stream.slice(STREAM_PREFIX.length)
  switch (key) {
    case 'EventRecorded v1':
      if (checkData && !checkEventRecordedV1.Check(data)) throw fail('its data does not match the EventRecorded v1 schema')
      return { position, stream, datasetId, appendedAt, type: 'EventRecorded', version: 1, data: data as EventRecordedV1 }
    case 'ObjectUpserted v1':
      if (checkData && !checkObjectUpsertedV1.Check(data)) throw fail('its data does not match the ObjectUpserted v1 schema')
      return {
        position,
        stream,
        datasetId,
        appendedAt,
        type: 'ObjectUpserted',
        version: 2,
        upcastFrom: 1,
        data: upcastObjectUpsertedV1(data as ObjectUpsertedV1),
      }
    case 'ObjectUpserted v2':
      if (checkData && !checkObjectUpsertedV2.Check(data)) throw fail('its data does not match the ObjectUpserted v2 schema')
      return { position, stream, datasetId, appendedAt, type: 'ObjectUpserted', version: 2, data: data as ObjectUpsertedV2 }
    case 'TypesDeclared v1':
      if (checkData && !checkTypesDeclaredV1.Check(data)) throw fail('its data does not match the TypesDeclared v1 schema')
      return { position, stream, datasetId, appendedAt, type: 'TypesDeclared', version: 1, data: data as TypesDeclaredV1 }
    default:
      return unhandledRecord(key)
  }
}

/**
 * The `default` of an exhaustive switch over record variants: reached only when the compiler
 * already knows no variant is left, so a new (type, version) fails to compile where it is not handled.
 * @throws Error naming what reached it, should an unchecked value get there at run time.
 */
export function unhandledRecord(value: never): never {
  const v: unknown = value
  const shown = typeof v === 'object' && v !== null ? `${String(Reflect.get(v, 'type'))} v${String(Reflect.get(v, 'version'))}` : String(v)
  throw new Error(`record variant ${shown} is not handled`)
}
