/**
 * What a store's directly-follows write remembers of an object between its transactions
 * (docs/process-map.md#the-directly-follows-read-model): the tail of the object's trace (its last
 * stored steps, at most TAIL_STEPS) and membership counts, as its last transaction left them.
 * With them, a run whose new steps of an object come after its last stored one (most runs), or only
 * a few steps before it (events that concurrent senders posted out of time order), needs no read of
 * the object's steps, and the membership counts it holds need no read: on a log whose objects recur
 * in many events (customers, items), those reads and what they make were a third of the
 * directly-follows write on SQLite.
 *
 * It is a cache of the store, never a source: a step the memory does not cover (one before the
 * remembered tail, an object it holds no entry for) is read from the store as before. The store keeps
 * it true: it clears it when a transaction that changed it does not commit, when it clears a
 * projection, and when another writer may have written since this one last did (SQLite: the file's
 * `data_version`; PostgreSQL: the checkpoint row's `xmin`). It holds at most `maxObjects` objects,
 * the least recently written ones leaving first, so its memory is bounded whatever the dataset's size
 * (under 1 KiB per object with a few dozen edges). The writes put an object in it from the object's
 * second run on. `O` is the store's object key, `K` its key of a membership count (an activity, or an
 * edge a → b); what a held memberships map means (every count of the object, or those known) is the
 * store's to say.
 */
import { compareSteps, type DfLinking, type DfNeighbours, type DfStep, emptyLinking, isAscending, linkAppends } from './directly-follows-links.js'

/** Objects remembered by default: the hot objects of a log (its customers, products, resources). */
export const DF_MEMORY_OBJECTS = 16_384

/** Steps of an object's trace remembered: its last ones. */
export const TAIL_STEPS = 4

/** The end of an object's trace, as stored. */
export interface TraceTail<O = number> {
  /** The object's last stored steps, ascending in (t, pos) order, at most TAIL_STEPS, with no stored step between them. */
  steps: DfStep<O>[]
  /** Whether `steps` is the whole trace (the object has no stored step before them). */
  whole: boolean
}

/** One remembered object. */
export interface RememberedObject<O = number, K = number> {
  /** The end of its trace; undefined: not known. */
  tail?: TraceTail<O>
  /** Its membership counts by the store's key of (a, b); undefined: not known. */
  memberships?: Map<K, number>
}

/** The tail of an object with no stored step. */
export const EMPTY_TAIL: TraceTail<never> = { steps: [], whole: true }

/** The last stored step of a tail's object (null: it has none). */
export function lastOfTail<O>(tail: TraceTail<O>): DfStep<O> | null {
  return tail.steps[tail.steps.length - 1] ?? null
}

/**
 * The stored neighbours (DfNeighbours) of candidate step `c` in its object's trace, from the trace's
 * tail, or undefined when the tail does not hold them: `c` at or before the tail's first step, and
 * steps stored before that step.
 */
export function neighboursFromTail<O>(tail: TraceTail<O>, c: { t: number; pos: number }): DfNeighbours<O> | undefined {
  const steps = tail.steps
  const first = steps[0]
  if (!tail.whole && (first === undefined || compareSteps(c, first) <= 0)) return undefined
  let i = 0
  while (i < steps.length && compareSteps(steps[i] as DfStep<O>, c) < 0) i += 1
  return { before: steps[i - 1] ?? null, at: steps[i] ?? null, next: steps[i + 1] ?? null }
}

/**
 * The tail after a run inserted `inserted` (the object's new steps, any order) into the trace whose
 * tail was `tail`: the last TAIL_STEPS of the tail's steps and of the new steps after its first one
 * (a new step before it lies before every remembered step, and does not change the end of the trace
 * unless the tail was the whole trace). The two ascending lists are merged from their ends: the
 * writes pass each object's steps ascending (stepsByObject), so a run copies and sorts nothing for
 * the objects it remembers.
 */
export function nextTail<O>(tail: TraceTail<O>, unordered: readonly DfStep<O>[]): TraceTail<O> {
  const inserted = isAscending(unordered) ? unordered : [...unordered].sort(compareSteps)
  const old = tail.steps
  const first = old[0]
  // The new steps that count: all of them for a whole trace, else those after the tail's first step.
  let from = 0
  if (!tail.whole && first !== undefined) while (from < inserted.length && compareSteps(inserted[from] as DfStep<O>, first) <= 0) from++
  const total = old.length + inserted.length - from
  const steps: DfStep<O>[] = []
  let i = old.length - 1
  let j = inserted.length - 1
  while (steps.length < TAIL_STEPS && (i >= 0 || j >= from)) {
    const a = old[i]
    const b = j >= from ? inserted[j] : undefined
    if (b === undefined || (a !== undefined && compareSteps(a, b) > 0)) {
      steps.push(a as DfStep<O>)
      i--
    } else {
      steps.push(b)
      j--
    }
  }
  return { steps: steps.reverse(), whole: tail.whole && total <= TAIL_STEPS }
}

/**
 * The part of a run's linking that known tails make without a read: each object whose stored tail is
 * known (`tailOf`) and ends before its new steps is linked after it (linkAppends: most objects of
 * most runs). The others are left for linkByClusters (src/core/directly-follows-links.ts).
 * @param byObject each object's new steps, ascending (stepsByObject).
 * @param tails filled with each known tail, for the reads of the objects left.
 */
export function linkAfterTails<O>(
  byObject: ReadonlyMap<O, readonly DfStep<O>[]>,
  tailOf: (object: O) => TraceTail<O> | undefined,
  tails: Map<O, TraceTail<O>>,
): { appended: DfLinking<O>; rest: Map<O, readonly DfStep<O>[]> } {
  const appended = emptyLinking<O>()
  const rest = new Map<O, readonly DfStep<O>[]>()
  for (const [object, candidates] of byObject) {
    const tail = tailOf(object)
    if (tail === undefined) {
      rest.set(object, candidates)
      continue
    }
    tails.set(object, tail)
    const last = lastOfTail(tail)
    const first = candidates[0]
    if (first !== undefined && (last === null || compareSteps(first, last) > 0)) linkAppends(appended, object, candidates, last)
    else rest.set(object, candidates)
  }
  return { appended, rest }
}

export class DfObjectMemory<O = number, K = number> {
  private readonly objects = new Map<O, RememberedObject<O, K>>()

  /** @param maxObjects the most objects held (≥ 0; 0 remembers nothing). */
  constructor(readonly maxObjects: number = DF_MEMORY_OBJECTS) {}

  /** The remembered state of object `rid`, or undefined. */
  get(rid: O): RememberedObject<O, K> | undefined {
    return this.objects.get(rid)
  }

  /**
   * Sets what is known of `rid` after the current transaction's writes: it becomes the most recently
   * written object. Parts left undefined are not known (read from the file next time).
   */
  set(rid: O, entry: RememberedObject<O, K>): void {
    this.objects.delete(rid)
    if (this.maxObjects > 0) this.objects.set(rid, entry)
  }

  /** Forgets `rid`. */
  delete(rid: O): void {
    this.objects.delete(rid)
  }

  /** Drops the least recently written objects past `maxObjects` (after a transaction's writes). */
  trim(): void {
    for (const rid of this.objects.keys()) {
      if (this.objects.size <= this.maxObjects) return
      this.objects.delete(rid)
    }
  }

  /** Forgets everything. */
  clear(): void {
    this.objects.clear()
  }

  /** Objects held. */
  get size(): number {
    return this.objects.size
  }
}
