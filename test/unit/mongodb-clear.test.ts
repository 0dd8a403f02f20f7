/**
 * Clearing one projection's MongoDB read models in bounded steps (src/adapters/mongodb/mongodb-clear.ts),
 * against an in-memory fake of its ClearIo: collections as arrays ordered by `_id`, checkpoints and
 * stops as maps, a log of every operation. MongoDB cannot run here; the operations the fake stands
 * for (find by `_id` range, deleteMany, updateMany, no session) are checked on an engine by the
 * ReadModelStore contract suite (test/contract/mongodb.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { CLEAR_BATCH, CLEARING_VERSION, type ClearIo, clearProjectionInSteps } from '../../src/adapters/mongodb/mongodb-clear.js'
import { READ_MODEL_COLLECTIONS } from '../../src/adapters/mongodb/read-model-writes.js'

type Doc = { _id: number } & Record<string, unknown>

class FakeMongo implements ClearIo {
  readonly collections = new Map<string, Doc[]>()
  readonly checkpoints = new Map<string, { position: number; version: number }>()
  readonly stops = new Set<string>()
  /** Every operation, with the documents it touched. */
  readonly ops: { op: string; collection?: string; touched?: number }[] = []
  /** Throws on the n-th operation from now (a worker killed mid-clear). */
  failAt: number | null = null

  private step(op: string, collection?: string, touched?: number): void {
    if (this.failAt !== null && --this.failAt === 0) {
      this.failAt = null
      throw new Error('killed')
    }
    this.ops.push({ op, collection, touched })
  }

  fill(collection: string, n: number, doc: (i: number) => Record<string, unknown> = () => ({})): void {
    this.collections.set(
      collection,
      Array.from({ length: n }, (_, i) => ({ _id: i + 1, ...doc(i) })),
    )
  }

  async markClearing(names: readonly string[]) {
    this.step('mark')
    for (const n of names) {
      const c = this.checkpoints.get(n)
      if (c !== undefined) this.checkpoints.set(n, { ...c, version: CLEARING_VERSION })
    }
  }
  async ids(collection: string, after: unknown, limit: number) {
    this.step('ids', collection)
    return (this.collections.get(collection) ?? [])
      .filter((d) => after === null || d._id > (after as number))
      .slice(0, limit)
      .map((d) => d._id)
  }
  async deleteUpTo(collection: string, upTo: unknown) {
    const docs = this.collections.get(collection) ?? []
    const kept = docs.filter((d) => d._id > (upTo as number))
    this.step('delete', collection, docs.length - kept.length)
    this.collections.set(collection, kept)
  }
  async resetObjects(after: unknown, upTo: unknown) {
    const docs = (this.collections.get(READ_MODEL_COLLECTIONS.objects) ?? []).filter(
      (d) => (after === null || d._id > (after as number)) && d._id <= (upTo as number),
    )
    this.step('reset', READ_MODEL_COLLECTIONS.objects, docs.length)
    for (const d of docs) Object.assign(d, { properties: {}, updated_at: d.created_at, position: -1 })
  }
  async dropCheckpoints(names: readonly string[]) {
    this.step('drop')
    for (const n of names) {
      this.stops.delete(n)
      this.checkpoints.delete(n)
    }
  }
}

const names = ['read_models/events', 'read_models/events#1of2']

function seeded(events: number, links: number): FakeMongo {
  const m = new FakeMongo()
  m.fill(READ_MODEL_COLLECTIONS.events, events)
  m.fill(READ_MODEL_COLLECTIONS.eventObjects, links)
  m.fill(READ_MODEL_COLLECTIONS.eventTypes, 3)
  for (const n of names) m.checkpoints.set(n, { position: 900, version: 4 })
  m.checkpoints.set('read_models/event_types', { position: 900, version: 2 })
  m.stops.add(names[0] ?? '')
  return m
}

describe('clearProjectionInSteps', () => {
  it('empties the projection alone, no step touching more than CLEAR_BATCH documents, the checkpoints dropped last', async () => {
    const m = seeded(2 * CLEAR_BATCH + 7, 3 * CLEAR_BATCH)
    await clearProjectionInSteps(m, 'events', names)
    expect(m.collections.get(READ_MODEL_COLLECTIONS.events)).toEqual([])
    expect(m.collections.get(READ_MODEL_COLLECTIONS.eventObjects)).toEqual([])
    expect(m.collections.get(READ_MODEL_COLLECTIONS.eventTypes)).toHaveLength(3)
    expect([...m.checkpoints.keys()]).toEqual(['read_models/event_types'])
    expect(m.stops.size).toBe(0)
    expect(Math.max(...m.ops.map((o) => o.touched ?? 0))).toBe(CLEAR_BATCH)
    expect(m.ops.filter((o) => o.op === 'delete').map((o) => o.touched)).toEqual([CLEAR_BATCH, CLEAR_BATCH, 7, CLEAR_BATCH, CLEAR_BATCH, CLEAR_BATCH])
    expect(m.ops[0]?.op).toBe('mark')
    expect(m.ops[m.ops.length - 1]?.op).toBe('drop')
  })

  it('interrupted, leaves the checkpoints in place and marked with a version no build writes; cleared again, ends as one clear', async () => {
    const m = seeded(2 * CLEAR_BATCH + 7, 10)
    m.failAt = 4
    await expect(clearProjectionInSteps(m, 'events', names)).rejects.toThrow('killed')
    expect(m.collections.get(READ_MODEL_COLLECTIONS.events)).toHaveLength(CLEAR_BATCH + 7)
    expect(names.map((n) => m.checkpoints.get(n))).toEqual([
      { position: 900, version: CLEARING_VERSION },
      { position: 900, version: CLEARING_VERSION },
    ])
    await clearProjectionInSteps(m, 'events', names)
    const once = seeded(2 * CLEAR_BATCH + 7, 10)
    await clearProjectionInSteps(once, 'events', names)
    expect([...m.collections]).toEqual([...once.collections])
    expect([...m.checkpoints]).toEqual([...once.checkpoints])
  })

  it('keeps the objects and their identities, resetting attributes, last-seen time and position in batches', async () => {
    const m = new FakeMongo()
    m.fill(READ_MODEL_COLLECTIONS.objects, CLEAR_BATCH + 1, (i) => ({
      object_id: `o${String(i)}`,
      type: 'order',
      first_position: i,
      created_at: 't0',
      updated_at: 't9',
      properties: { a: i },
      position: 50 + i,
    }))
    m.fill(READ_MODEL_COLLECTIONS.objectChanges, 5)
    await clearProjectionInSteps(m, 'objects', [])
    const objects = m.collections.get(READ_MODEL_COLLECTIONS.objects) ?? []
    expect(objects).toHaveLength(CLEAR_BATCH + 1)
    expect(objects.every((o) => o.position === -1 && o.updated_at === 't0' && JSON.stringify(o.properties) === '{}')).toBe(true)
    expect(objects.map((o) => o.first_position)).toEqual(Array.from({ length: CLEAR_BATCH + 1 }, (_, i) => i))
    expect(m.ops.filter((o) => o.op === 'reset').map((o) => o.touched)).toEqual([CLEAR_BATCH, 1])
    expect(m.collections.get(READ_MODEL_COLLECTIONS.objectChanges)).toEqual([])
  })
})
