/**
 * runPlan (src/ocel/import/run.ts) over a plan still being planned, as `ocelog import` sends a
 * staged plan (StagedPlanner): the iterable yields null where a batch is not planned yet, and runPlan
 * asks again after the event loop's next turn. Against the real app (test-app: a real SQLite file on
 * a real socket), with the real client: every batch is sent once, in a valid order, and the log holds
 * each item once; a run stopped early plans what is left (`complete`) and lists it as not sent.
 */
import { OcelogClient } from '@ocelog/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PlannedBatch } from '../../src/ocel/import/plan.js'
import { runPlan } from '../../src/ocel/import/run.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

/** Events `from`..`from + n - 1` on order o<i>, one second apart, keyed `<prefix><i>`. */
function eventBatch(prefix: string, from: number, n: number, after: number[]): PlannedBatch {
  const items = Array.from({ length: n }, (_, i) => ({
    event: 'Create Order',
    timestamp: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(),
    objects: [{ type: 'order', id: `o${String(from + i)}` }],
    idempotency_key: `${prefix}${String(from + i)}`,
  }))
  return { kind: 'events', items, sources: items.map((e) => e.idempotency_key), after }
}

/** Upserts of orders o<from>.. with a status, keyed `<prefix>u<i>`; `first`: each is its object's first. */
function upsertBatch(prefix: string, from: number, n: number, after: number[], first = true): PlannedBatch {
  const items = Array.from({ length: n }, (_, i) => ({
    type: 'order',
    id: `o${String(from + i)}`,
    properties: { status: 'open' },
    idempotency_key: `${prefix}u${String(from + i)}`,
  }))
  return { kind: 'objects', items, sources: items.map((o) => `${o.id} @ initial`), firsts: items.map(() => first), after }
}

/**
 * A plan that is "planned" one batch per turn of the event loop: its iterable yields null until the
 * next batch is released, as a StagedPlanner's does before its horizon moves.
 */
function slowPlan(batches: readonly PlannedBatch[]) {
  let released = 0
  let turns = 0
  const timer = setInterval(() => {
    turns += 1
    if (released < batches.length) released += 1
  }, 1)
  function* iterate(): Generator<PlannedBatch | null> {
    let next = 0
    while (next < batches.length) {
      if (next < released) yield batches[next++] ?? null
      else yield null
    }
    clearInterval(timer)
  }
  return {
    plan: {
      batches: iterate(),
      events: batches.filter((b) => b.kind === 'events').reduce((n, b) => n + b.items.length, 0),
      upserts: batches.filter((b) => b.kind === 'objects').reduce((n, b) => n + b.items.length, 0),
      complete: () => {
        released = batches.length
      },
    },
    turns: () => turns,
    stop: () => clearInterval(timer),
  }
}

describe('runPlan over a plan still being planned', () => {
  let t: TestApp
  let baseUrl: string

  beforeAll(async () => {
    t = await makeTestApp({ perMinute: 1_000_000 })
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('waits for each batch to be planned and sends every one once', async () => {
    const key = await t.newKey()
    const batches = [
      upsertBatch('a', 0, 30, []),
      upsertBatch('a', 30, 30, []),
      eventBatch('a', 0, 40, [0]),
      eventBatch('a', 40, 20, [0, 1, 2]),
      upsertBatch('c', 0, 5, [2], false),
      eventBatch('a', 60, 10, [3, 4]),
    ]
    const slow = slowPlan(batches)
    try {
      const client = new OcelogClient({ baseUrl, apiKey: key.key, concurrency: 4 })
      const result = await runPlan(slow.plan, client, { concurrency: 4 })
      expect(result.aborted).toBeNull()
      expect(result.failures).toEqual([])
      expect(result.batches).toBe(6)
      expect(result.events).toEqual({ accepted: 70, failed: 0, alreadyRecorded: 0 })
      expect(result.upserts).toEqual({ accepted: 65, failed: 0, alreadyRecorded: 0 })
      expect(result.objectsAccepted).toBe(60)
      // The plan was released over several turns: runPlan waited for it, not ended early.
      expect(slow.turns()).toBeGreaterThanOrEqual(batches.length)
      const records = await t.log.readStream(key.dataset_id, null, 10_000)
      expect(records.filter((r) => r.type === 'EventRecorded')).toHaveLength(70)
      expect(records.filter((r) => r.type === 'ObjectUpserted')).toHaveLength(65)
      // The later upserts of o0..o4 (batch 4) waited for the events of batch 2, which name them.
      const keyAt = records.map((r) => r.idempotency?.key ?? '')
      const batch2At = Array.from({ length: 40 }, (_, i) => keyAt.indexOf(`a${String(i)}`))
      expect(batch2At.every((i) => i >= 0)).toBe(true)
      const lastOfBatch2 = Math.max(...batch2At)
      const laterUpserts = keyAt.flatMap((k, i) => (k.startsWith('cu') ? [i] : []))
      expect(laterUpserts).toHaveLength(5)
      expect(Math.min(...laterUpserts)).toBeGreaterThan(lastOfBatch2)
    } finally {
      slow.stop()
    }
  })

  it('a run stopped before the plan is planned has it planned, and lists every item it did not send', async () => {
    const key = await t.newKey()
    const batches = [upsertBatch('b', 0, 10, []), eventBatch('b', 0, 10, [0]), eventBatch('b', 10, 10, [1])]
    const slow = slowPlan(batches)
    try {
      const client = new OcelogClient({ baseUrl, apiKey: key.key })
      const abort = new AbortController()
      abort.abort()
      const result = await runPlan(slow.plan, client, { signal: abort.signal })
      expect(result.aborted).toBe('aborted by the caller')
      expect(result.batches).toBe(3)
      expect(result.failures).toHaveLength(30)
      expect(result.failures.every((f) => f.failure === 'aborted')).toBe(true)
      expect(result.failures.map((f) => f.source)).toEqual(batches.flatMap((b) => b.sources))
      expect(await t.log.readStream(key.dataset_id, null, 100)).toEqual([])
    } finally {
      slow.stop()
    }
  })
})
