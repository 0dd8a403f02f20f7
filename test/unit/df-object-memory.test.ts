/**
 * The directly-follows write's memory of objects (src/core/df-object-memory.ts): the
 * stored neighbours a trace's tail answers, the tail a run leaves, and the bound on objects held.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DfObjectMemory, EMPTY_TAIL, lastOfTail, neighboursFromTail, nextTail, TAIL_STEPS, type TraceTail } from '../../src/core/df-object-memory.js'
import type { DfStep } from '../../src/core/directly-follows.js'

/** A step of object 1 at time `t` (ms) and log position `pos`. */
const step = (t: number, pos: number = t): DfStep<number> => ({ dataset: '1', object: 1, ot: '2', act: '3', t, pos, te: null, kin: 1 })
const times = (tail: TraceTail | undefined) => tail?.steps.map((s) => s.t)

describe('neighboursFromTail', () => {
  const partial: TraceTail = { steps: [step(10), step(20), step(30)], whole: false }
  const whole: TraceTail = { steps: [step(10), step(20)], whole: true }

  it('answers a step after the last remembered one: that step before it, nothing after', () => {
    expect(neighboursFromTail(partial, step(40))).toEqual({ before: step(30), at: null, next: null })
  })

  it('answers a late step inside the tail with the remembered steps around it', () => {
    expect(neighboursFromTail(partial, step(15))).toEqual({ before: step(10), at: step(20), next: step(30) })
    expect(neighboursFromTail(partial, step(25))).toEqual({ before: step(20), at: step(30), next: null })
  })

  it('finds a remembered step again (a replay) as the step at the candidate', () => {
    expect(neighboursFromTail(partial, step(20))).toEqual({ before: step(10), at: step(20), next: step(30) })
  })

  it('breaks ties of time by position', () => {
    const tied: TraceTail = { steps: [step(10, 1), step(10, 5)], whole: false }
    expect(neighboursFromTail(tied, step(10, 3))).toEqual({ before: step(10, 1), at: step(10, 5), next: null })
  })

  it('does not answer at or before the first step of a partial tail: the steps before it are not remembered', () => {
    expect(neighboursFromTail(partial, step(10))).toBeUndefined()
    expect(neighboursFromTail(partial, step(5))).toBeUndefined()
    expect(neighboursFromTail({ steps: [], whole: false }, step(5))).toBeUndefined()
  })

  it('answers anywhere in a whole trace, and an object with no step has no neighbours', () => {
    expect(neighboursFromTail(whole, step(5))).toEqual({ before: null, at: step(10), next: step(20) })
    expect(neighboursFromTail(EMPTY_TAIL, step(5))).toEqual({ before: null, at: null, next: null })
  })
})

describe('nextTail', () => {
  it(`keeps the last ${String(TAIL_STEPS)} steps of the tail and the appended ones`, () => {
    const tail = nextTail({ steps: [step(10), step(20), step(30)], whole: false }, [step(50), step(40)])
    expect(times(tail)).toEqual([20, 30, 40, 50])
    expect(tail.whole).toBe(false)
    expect(lastOfTail(tail)).toEqual(step(50))
  })

  it('puts a late step inside the tail in its place', () => {
    expect(times(nextTail({ steps: [step(10), step(20), step(30)], whole: false }, [step(15)]))).toEqual([10, 15, 20, 30])
  })

  it('leaves out a step before a partial tail: it lies before every remembered step', () => {
    const tail = nextTail({ steps: [step(10), step(20)], whole: false }, [step(5), step(25)])
    expect(times(tail)).toEqual([10, 20, 25])
    expect(tail.whole).toBe(false)
  })

  it(`keeps a whole trace whole up to ${String(TAIL_STEPS)} steps, then only its end`, () => {
    const small = nextTail(EMPTY_TAIL, [step(20), step(10)])
    expect(small).toEqual({ steps: [step(10), step(20)], whole: true })
    const early = nextTail(small, [step(5)])
    expect(early).toEqual({ steps: [step(5), step(10), step(20)], whole: true })
    const full = nextTail(early, [step(1), step(30)])
    expect(times(full)).toEqual([5, 10, 20, 30])
    expect(full.whole).toBe(false)
    expect(lastOfTail(EMPTY_TAIL)).toBeNull()
  })
})

describe('nextTail by its definition', () => {
  it('is the last steps of the tail and of the new steps after its first one, merged and sorted', () => {
    // Distinct (t, pos) steps split between the stored tail (ascending, at most TAIL_STEPS) and a run's new ones (any order).
    const split = fc
      .uniqueArray(fc.integer({ min: 0, max: 60 }), { minLength: 0, maxLength: 12 })
      .chain((ts) =>
        fc.record({ ts: fc.shuffledSubarray(ts, { minLength: ts.length, maxLength: ts.length }), stored: fc.nat({ max: TAIL_STEPS }), whole: fc.boolean() }),
      )
    fc.assert(
      fc.property(split, ({ ts, stored, whole }) => {
        const tailSteps = ts
          .slice(0, stored)
          .sort((a, b) => a - b)
          .map((t) => step(t))
        const inserted = ts.slice(stored).map((t) => step(t))
        const tail: TraceTail = { steps: tailSteps, whole }
        const first = tailSteps[0]
        const kept = whole || first === undefined ? inserted : inserted.filter((s) => s.t > first.t)
        const merged = [...tailSteps, ...kept].sort((a, b) => a.t - b.t)
        expect(nextTail(tail, inserted)).toEqual({ steps: merged.slice(-TAIL_STEPS), whole: whole && merged.length <= TAIL_STEPS })
      }),
    )
  })
})

describe('DfObjectMemory', () => {
  it('holds at most maxObjects objects, the least recently written leaving first', () => {
    const memory = new DfObjectMemory(2)
    memory.set(1, { tail: EMPTY_TAIL })
    memory.set(2, { tail: EMPTY_TAIL })
    memory.set(1, { memberships: new Map([[7, 1]]) })
    memory.set(3, { tail: EMPTY_TAIL })
    memory.trim()
    expect(memory.size).toBe(2)
    expect(memory.get(2)).toBeUndefined()
    expect(memory.get(1)).toEqual({ memberships: new Map([[7, 1]]) })
    expect(memory.get(3)).toEqual({ tail: EMPTY_TAIL })
    memory.delete(3)
    expect(memory.get(3)).toBeUndefined()
    memory.clear()
    expect(memory.size).toBe(0)
  })

  it('remembers nothing with maxObjects 0', () => {
    const memory = new DfObjectMemory(0)
    memory.set(1, { tail: EMPTY_TAIL })
    expect(memory.get(1)).toBeUndefined()
    expect(memory.size).toBe(0)
  })
})
