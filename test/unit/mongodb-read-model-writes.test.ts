/**
 * The bulkWrite operations of the MongoDB read-model store (src/adapters/mongodb/read-model-writes.ts).
 * MongoDB cannot run here, so the update pipelines are run through `evaluate` below: a small
 * interpreter of the aggregation operators these pipelines use, written from MongoDB's documented
 * semantics ($min/$max ignore missing values, $mergeObjects lets later fields win, $literal is never
 * interpreted). It checks the pipelines' logic (guards, merges, counts); it is no substitute for
 * the MongoDB contract suite (test/contract/mongodb.test.ts), which runs where an engine answers.
 */
import type { AnyBulkWriteOperation, Document } from 'mongodb'
import { describe, expect, it } from 'vitest'
import { nameObjects } from '../../projections/named-objects.js'
import { foldRecords } from '../../projections/registry.js'
import {
  eventsWrites,
  guardedUpdate,
  identityWrite,
  lit,
  objectRelationshipsWrites,
  objectsWrites,
  READ_MODEL_INDEXES,
  storedKey,
  typeWrites,
} from '../../src/adapters/mongodb/read-model-writes.js'
import { decodeKey, decodeKeys, encodeKey } from '../../src/adapters/mongodb/field-names.js'
import { countNewObjects, type NamedObject } from '../../src/core/read-model-changes.js'
import { objectIdOf } from '../../src/core/ids.js'
import { declarationRecords, eventRecord, stored, upsertRecord } from '../contract/fixtures.js'
import { declaredAttributeWrites, declaredTypeWrite } from '../../src/adapters/mongodb/mongodb-declared-types.js'

type Value = unknown

function isPlainObject(v: Value): v is Record<string, Value> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function args(v: Value): Value[] {
  return Array.isArray(v) ? v : [v]
}

/** Evaluates an aggregation expression against `root` (undefined = missing). */
function evaluate(expr: Value, root: Record<string, Value>): Value {
  if (typeof expr === 'string' && expr.startsWith('$$')) {
    if (expr === '$$ROOT') return root
    throw new Error(`variable ${expr}`)
  }
  if (typeof expr === 'string' && expr.startsWith('$')) return root[expr.slice(1)]
  if (Array.isArray(expr)) return expr.map((e) => evaluate(e, root))
  if (!isPlainObject(expr)) return expr
  const keys = Object.keys(expr)
  const op = keys[0]
  if (keys.length === 1 && op !== undefined && op.startsWith('$')) {
    const a = expr[op]
    const ev = (e: Value) => evaluate(e, root)
    switch (op) {
      case '$literal':
        return a
      case '$cond': {
        const c = isPlainObject(a) ? a : {}
        return ev(c.if) === true ? ev(c.then) : ev(c.else)
      }
      case '$lt': {
        const [x, y] = args(a).map(ev)
        return (x as number) < (y as number)
      }
      case '$eq': {
        const [x, y] = args(a).map(ev)
        return x === y
      }
      case '$type':
        return ev(a) === undefined ? 'missing' : typeof ev(a)
      case '$ifNull': {
        const [x, y] = args(a).map(ev)
        return x === undefined || x === null ? y : x
      }
      case '$mergeObjects':
        return Object.assign({}, ...args(a).map(ev).filter(isPlainObject))
      case '$min':
      case '$max': {
        const vs = args(a)
          .map(ev)
          .filter((v) => v !== undefined && v !== null) as string[]
        return vs.reduce((m, v) => ((op === '$min' ? v < m : v > m) ? v : m))
      }
      case '$add':
        return args(a)
          .map(ev)
          .reduce((s: number, v) => s + (v as number), 0)
      case '$setUnion':
        return [...new Set(args(a).flatMap(ev))]
      case '$sortArray': {
        const c = isPlainObject(a) ? a : {}
        return [...(ev(c.input) as string[])].sort()
      }
      default:
        throw new Error(`operator ${op} is not in this interpreter`)
    }
  }
  const out: Record<string, Value> = {}
  for (const [k, v] of Object.entries(expr)) {
    const r = evaluate(v, root)
    if (r !== undefined) out[k] = r
  }
  return out
}

/** A collection as an array, applying updateOne upserts with pipelines like MongoDB would. */
class Collection {
  docs: Record<string, Value>[] = []
  upserted: number[] = []
  bulkWrite<T extends Document>(ops: AnyBulkWriteOperation<T>[]): void {
    this.upserted = []
    ops.forEach((op, index) => {
      if (!('updateOne' in op)) throw new Error('only updateOne')
      const { filter, update, upsert } = op.updateOne
      if (!Array.isArray(update)) throw new Error('only pipelines')
      const matches = (d: Record<string, Value>) => Object.entries(filter).every(([k, v]) => (d[k] ?? null) === (v ?? null))
      let doc = this.docs.find(matches)
      if (doc === undefined) {
        if (upsert !== true) return
        doc = { ...filter }
        this.docs.push(doc)
        this.upserted.push(index)
      }
      let next: Record<string, Value> = doc
      for (const stage of update) {
        const replaced = evaluate(stage.$replaceWith, next)
        if (!isPlainObject(replaced)) throw new Error('$replaceWith needs a document')
        next = { ...replaced }
      }
      for (const k of Object.keys(doc)) delete doc[k]
      Object.assign(doc, next)
    })
  }
}

/** The stored positions of a collection's rows by StoredPositions key, as MongoReadModelStore reads them. */
function positions(c: Collection | undefined, field: 'name' | 'object_id'): Map<string, number> {
  return new Map((c?.docs ?? []).map((d) => [storedKey(d.dataset_id as string, d[field] as string), d.position as number]))
}

/** The writes of every slice of `records`, with nothing stored (no positions, every object new). */
function writesOf(records: ReturnType<typeof stored>) {
  const slices = foldRecords(records)
  const objects = objectsWrites(slices.objects, new Map())
  const events = eventsWrites(slices.events)
  return {
    eventTypes: typeWrites(slices.event_types, new Map()),
    objectTypes: typeWrites(slices.object_types, new Map()),
    objects: objects.objects,
    objectChanges: objects.objectChanges,
    events: events.events,
    eventObjects: events.eventObjects,
  }
}

/**
 * What MongoReadModelStore.apply writes for `records` (every projection's slice): the objects'
 * identities, then each slice reduced by the replay rule over the stored positions, the object
 * types counted from the identities' first positions (countNewObjects).
 */
function applyAll(db: Record<string, Collection>, records: ReturnType<typeof stored>): void {
  const slices = foldRecords(records)
  const named = new Map<string, NamedObject>()
  for (const r of records) nameObjects(named, r)
  db.objects?.bulkWrite([...named.values()].map(identityWrite))
  const first = new Map((db.objects?.docs ?? []).map((d) => [storedKey(d.dataset_id as string, d.object_id as string), d.first_position as number]))
  const applied = db.objectTypes?.docs.reduce((max, d) => Math.max(max, d.position as number), 0) ?? 0
  countNewObjects(slices.object_types, named.values(), applied === 0 ? null : applied, (o) => first.get(storedKey(o.datasetId, o.objectId)))
  db.eventTypes?.bulkWrite(typeWrites(slices.event_types, positions(db.eventTypes, 'name')))
  db.objectTypes?.bulkWrite(typeWrites(slices.object_types, positions(db.objectTypes, 'name')))
  const o = objectsWrites(slices.objects, positions(db.objects, 'object_id'))
  db.objects?.bulkWrite(o.objects)
  db.objectChanges?.bulkWrite(o.objectChanges)
  const e = eventsWrites(slices.events)
  db.events?.bulkWrite(e.events)
  db.eventObjects?.bulkWrite(e.eventObjects)
}

function emptyDb(): Record<string, Collection> {
  return Object.fromEntries(['eventTypes', 'objectTypes', 'objects', 'objectChanges', 'events', 'eventObjects'].map((n) => [n, new Collection()]))
}

const T1 = '2024-05-01T10:00:00.000Z'
const T2 = '2024-05-01T11:00:00.000Z'
const ds = 'ds1'

describe('guardedUpdate', () => {
  it('merges the fields into a document whose position is below minPosition', () => {
    const [stage] = guardedUpdate(5, { count: { $add: ['$count', 1] }, position: 7 })
    expect(evaluate(stage?.$replaceWith, { count: 1, position: 4 })).toEqual({ count: 2, position: 7 })
  })

  it('leaves a document at or past minPosition exactly as it is', () => {
    const [stage] = guardedUpdate(5, { count: { $add: ['$count', 1] }, position: 7 })
    expect(evaluate(stage?.$replaceWith, { count: 1, position: 5 })).toEqual({ count: 1, position: 5 })
  })

  it('treats a new document (no position) as below every position', () => {
    const [stage] = guardedUpdate(0, { position: 3 })
    expect(evaluate(stage?.$replaceWith, { dataset_id: 'd' })).toEqual({ dataset_id: 'd', position: 3 })
  })
})

describe('slice writes', () => {
  it('wraps every user value in $literal, so "$price" is a value and not a field path', () => {
    const w = writesOf(stored(ds, [upsertRecord(ds, '$type', '$id', { $k: '$price' })], 1))
    const text = JSON.stringify(w.objects[0])
    expect(text).toContain('{"$literal":"$type"}')
    expect(text).toContain('{"$literal":{"%24k":"$price"}}')
    expect(lit('$x')).toEqual({ $literal: '$x' })
  })

  it('upserts only on filters that are exactly a unique index key', () => {
    const w = writesOf(
      stored(
        ds,
        [
          eventRecord(ds, 'Pay', [
            { type: 'order', id: 'o1' },
            { type: 'item', id: 'i1', properties: { p: 1 } },
          ]),
        ],
        1,
      ),
    )
    const keyOf = (collection: keyof typeof READ_MODEL_INDEXES) => Object.keys(READ_MODEL_INDEXES[collection][0]?.key ?? {}).sort()
    const filterOf = <T extends Document>(op: AnyBulkWriteOperation<T> | undefined) =>
      op !== undefined && 'updateOne' in op ? Object.keys(op.updateOne.filter).sort() : []
    expect(filterOf(identityWrite({ datasetId: ds, objectId: 'x', type: 't', externalId: 'i', firstSeenAt: T1, position: 1, index: 0 }))).toEqual(
      keyOf('objects').slice(0, 2),
    )
    expect(filterOf(w.eventTypes[0])).toEqual(keyOf('event_types'))
    expect(filterOf(w.objectTypes[0])).toEqual(keyOf('object_types'))
    expect(filterOf(w.objects[0])).toEqual(keyOf('objects'))
    expect(filterOf(w.objectChanges[0])).toEqual(keyOf('object_changes'))
    expect(filterOf(w.events[0])).toEqual(keyOf('events'))
    expect(filterOf(w.eventObjects[0])).toEqual(keyOf('event_objects'))
    const all = [...w.eventTypes, ...w.objectTypes, ...w.objects, ...w.objectChanges, ...w.events, ...w.eventObjects]
    expect(all.every((op) => 'updateOne' in op && op.updateOne.upsert === true)).toBe(true)
  })
})

describe('read-model writes through the pipeline interpreter', () => {
  const b1 = stored(
    ds,
    [
      eventRecord(
        ds,
        'Create Order',
        [
          { type: 'order', id: 'o1' },
          { type: 'item', id: 'i1' },
        ],
        { timestamp: T1, receivedAt: T1 },
      ),
      upsertRecord(ds, 'order', 'o1', { a: 1, b: { c: 1 }, 'x.y': 1, n: 5 }, T1),
    ],
    1,
  )
  const b2 = stored(
    ds,
    [
      eventRecord(
        ds,
        'Pick',
        [
          { type: 'order', id: 'o1' },
          { type: 'item', id: 'i1' },
          { type: 'item', id: 'i2' },
        ],
        { timestamp: T2, receivedAt: T2 },
      ),
      upsertRecord(ds, 'order', 'o1', { b: { d: 2 }, n: null, $z: 3 }, T2),
    ],
    3,
  )

  it('merges attributes per top-level key across batches', () => {
    const db = emptyDb()
    applyAll(db, b1)
    applyAll(db, b2)
    const order = db.objects?.docs.find((d) => d.object_id === objectIdOf(ds, 'order', 'o1'))
    expect(order).toMatchObject({ properties: { a: 1, b: { d: 2 }, 'x%2Ey': 1, n: null, '%24z': 3 }, created_at: T1, updated_at: T2, position: 4 })
    expect(decodeKeys(order?.properties as Record<string, unknown>)).toEqual({ a: 1, b: { d: 2 }, 'x.y': 1, n: null, $z: 3 })
  })

  it('counts events per type and distinct objects per type', () => {
    const db = emptyDb()
    applyAll(db, b1)
    applyAll(db, b2)
    expect(db.eventTypes?.docs.map((d) => [d.name, d.count, d.first_seen_at, d.last_seen_at])).toEqual([
      ['Create Order', 1, T1, T1],
      ['Pick', 1, T2, T2],
    ])
    expect(db.objectTypes?.docs.map((d) => [d.name, d.count, d.source])).toEqual([
      ['order', 1, 'public_api'],
      ['item', 2, 'public_api'],
    ])
  })

  it('changes nothing when a batch is applied again', () => {
    const db = emptyDb()
    applyAll(db, b1)
    applyAll(db, b2)
    const once = JSON.stringify(Object.values(db).map((c) => c.docs))
    applyAll(db, b1)
    applyAll(db, b2)
    expect(JSON.stringify(Object.values(db).map((c) => c.docs))).toBe(once)
  })

  it("applies only the records after a row's position when a replay straddles it (the replay rule), as one apply of them all would", () => {
    const all = [...b1, ...b2]
    const straddled = emptyDb()
    applyAll(straddled, b1)
    applyAll(straddled, all)
    const once = emptyDb()
    applyAll(once, all)
    expect(JSON.stringify(Object.values(straddled).map((c) => c.docs))).toBe(JSON.stringify(Object.values(once).map((c) => c.docs)))
    expect(straddled.eventTypes?.docs.map((d) => [d.name, d.count])).toEqual([
      ['Create Order', 1],
      ['Pick', 1],
    ])
    expect(straddled.objects?.docs.find((d) => d.object_id === objectIdOf(ds, 'order', 'o1'))?.properties).toEqual({
      a: 1,
      b: { d: 2 },
      'x%2Ey': 1,
      n: null,
      '%24z': 3,
    })
  })

  it('writes position-keyed rows once', () => {
    const db = emptyDb()
    applyAll(db, b1)
    applyAll(db, b1)
    expect(db.events?.docs).toHaveLength(1)
    expect(db.eventObjects?.docs.map((d) => [d.external_id, d.qualifier, d.position])).toEqual([
      ['o1', null, 1],
      ['i1', null, 1],
    ])
    expect(db.objectChanges?.docs.map((d) => [d.position, d.attributes])).toEqual([[2, { a: 1, b: { c: 1 }, 'x%2Ey': 1, n: 5 }]])
  })
})

/** Every field name in `value` at every depth (objects inside arrays included). */
function fieldNames(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(fieldNames)
  if (!isPlainObject(value)) return []
  return Object.entries(value).flatMap(([k, v]) => [k, ...fieldNames(v)])
}

describe('attribute keys with "$" and "."', () => {
  const odd = {
    $set: 1,
    'a.b': { $inc: 2, 'c.d': [{ '$x.y': true }, 3], '%2E': 'looks encoded' },
    '50%': 'percent',
    $: null,
    '.': '.$',
  }

  it('encodes one to one, and decodes back', () => {
    for (const key of ['$set', 'a.b', '%2E', '%', '$.%', 'plain', '', 'a\u0000b', '%00', '\u0000']) expect(decodeKey(encodeKey(key))).toBe(key)
    expect(new Set(['.', '%2E', '$', '%24', '\u0000', '%00'].map(encodeKey)).size).toBe(6)
    // BSON refuses U+0000 in a field name (test/integration/mongodb-field-names.test.ts); the encoded key has none.
    expect(encodeKey('st\u0000atus')).toBe('st%00atus')
  })

  it('stores no field name with "$" or "." in properties or attributes, reads them back as sent, and leaves qualifiers alone', () => {
    const records = stored(
      ds,
      [
        eventRecord(
          ds,
          'Pay',
          [
            { type: 'order', id: 'o1', qualifier: '$buyer.main' },
            { type: 'item', id: 'i1', qualifier: 'a.b' },
          ],
          { timestamp: T1, properties: odd },
        ),
        upsertRecord(ds, 'order', 'o1', odd, T1, { relationships: [{ type: 'item', id: 'i1', qualifier: '$part.of' }] }),
      ],
      1,
    )
    const db = emptyDb()
    applyAll(db, records)
    const order = db.objects?.docs.find((d) => d.object_id === objectIdOf(ds, 'order', 'o1'))
    const event = db.events?.docs[0]
    const change = db.objectChanges?.docs[0]
    for (const field of [order?.properties, event?.properties, change?.attributes]) {
      expect(fieldNames(field).filter((k) => k.includes('.') || k.includes('$'))).toEqual([])
      expect(decodeKeys(field as Record<string, unknown>)).toEqual(odd)
    }
    expect(db.eventObjects?.docs.map((d) => d.qualifier)).toEqual(['$buyer.main', 'a.b'])
    const o2o = objectRelationshipsWrites(foldRecords(records).object_relationships)
    expect(o2o.map((op) => ('updateOne' in op ? op.updateOne.filter.qualifier : null))).toEqual(['$part.of'])
  })
})

describe('declared types through the pipeline interpreter', () => {
  const records = stored(ds, declarationRecords(ds), 7)

  /** Applies the declared types' writes of `batch` over `db` as writeDeclaredTypes does: the stored positions read first. */
  function apply(db: { types: Collection; attributes: Collection }, batch: typeof records): void {
    const slice = foldRecords(batch).declared_types
    for (const t of slice.values()) {
      const stored = new Map(db.attributes.docs.filter((d) => d.type_name === t.name).map((d) => [d.name as string, d.position as number]))
      db.attributes.bulkWrite(declaredAttributeWrites(t, stored))
    }
    db.types.bulkWrite([...slice.values()].map(declaredTypeWrite))
  }

  it('keeps each attribute at its latest declaration, names as literals, whether applied once, twice or over a straddle', () => {
    const once = { types: new Collection(), attributes: new Collection() }
    apply(once, records)
    const straddled = { types: new Collection(), attributes: new Collection() }
    apply(straddled, records.slice(0, 1))
    apply(straddled, records)
    apply(straddled, records)
    const key = (d: Record<string, unknown>) => JSON.stringify([d.kind, d.type_name ?? d.name, d.name])
    const rows = (db: typeof once) => [db.types.docs, db.attributes.docs].map((docs) => [...docs].sort((a, b) => (key(a) < key(b) ? -1 : 1)))
    expect(rows(straddled)).toEqual(rows(once))
    expect(rows(once)).toEqual([
      [
        { dataset_id: ds, kind: 'event', name: 'pay order', position: 8 },
        { dataset_id: ds, kind: 'object', name: 'warehouse', position: 9 },
      ],
      [
        { dataset_id: ds, kind: 'event', type_name: 'pay order', name: '$x.y', type: 'string', position: 8 },
        { dataset_id: ds, kind: 'event', type_name: 'pay order', name: 'amount', type: 'integer', position: 8 },
        { dataset_id: ds, kind: 'object', type_name: 'warehouse', name: 'capacity', type: 'integer', position: 9 },
      ],
    ])
  })

  it('writes nothing for an attribute that a later record already set', () => {
    const [t] = foldRecords(records.slice(0, 1)).declared_types.values()
    expect(t === undefined ? null : declaredAttributeWrites(t, new Map([['amount', 8]]))).toEqual([])
  })
})
