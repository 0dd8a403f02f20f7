/**
 * What the SQLite store's directly-follows write remembers of an object between its transactions
 * (docs/process-map.md#the-directly-follows-read-model): the tail of the object's trace (its last
 * stored steps, at most TAIL_STEPS) and its membership counts, as its last transaction left them.
 * With them, a run whose new steps of an object come after its last stored one (most runs), or only
 * a few steps before it (events that concurrent senders posted out of time order), needs no read of
 * the object's steps, and no run needs a read of its membership rows: on a log whose objects recur
 * in many events (customers, items), those reads and what they make were a third of the
 * directly-follows write.
 *
 * It is a cache of the file, never a source: a step the memory does not cover (one before the
 * remembered tail, an object it holds no entry for) is read from the file as before. The store keeps
 * it true:
 * - it is cleared when a transaction that changed it does not commit, when the store clears a
 *   projection or remakes the file, and when another connection committed to the file since this
 *   one last wrote (SQLite's `PRAGMA data_version`, sqlite.org/pragma.html#pragma_data_version);
 * - it holds at most `maxObjects` objects, the least recently written ones leaving first, so its
 *   memory is bounded whatever the dataset's size (under 1 KiB per object with a few dozen edges).
 * The write puts an object in it from the object's second run on (sqlite-df-writes.ts, remember).
 */
import { compareSteps, type DfNeighbours, type DfStep } from '../../../core/directly-follows.js'

/** Objects remembered by default: the hot objects of a log (its customers, products, resources). */
export const DF_MEMORY_OBJECTS = 16_384

/** Steps of an object's trace remembered: its last ones. */
export const TAIL_STEPS = 4

/** The end of an object's trace, as stored. */
export interface TraceTail {
  /** The object's last stored steps, ascending in (t, pos) order, at most TAIL_STEPS, with no stored step between them. */
  steps: DfStep<number>[]
  /** Whether `steps` is the whole trace (the object has no stored step before them). */
  whole: boolean
}

/** One remembered object. */
export interface RememberedObject {
  /** The end of its trace; undefined: not known. */
  tail?: TraceTail
  /** Its membership counts (rm_df_memberships) keyed by `a * 2^26 + b`; undefined: not known. */
  memberships?: Map<number, number>
}

/** The tail of an object with no stored step. */
export const EMPTY_TAIL: TraceTail = { steps: [], whole: true }

/** The last stored step of a tail's object (null: it has none). */
export function lastOfTail(tail: TraceTail): DfStep<number> | null {
  return tail.steps[tail.steps.length - 1] ?? null
}

/**
 * The stored neighbours (DfNeighbours) of candidate step `c` in its object's trace, from the trace's
 * tail, or undefined when the tail does not hold them: `c` at or before the tail's first step, and
 * steps stored before that step.
 */
export function neighboursFromTail(tail: TraceTail, c: { t: number; pos: number }): DfNeighbours<number> | undefined {
  const steps = tail.steps
  const first = steps[0]
  if (!tail.whole && (first === undefined || compareSteps(c, first) <= 0)) return undefined
  let i = 0
  while (i < steps.length && compareSteps(steps[i] as DfStep<number>, c) < 0) i += 1
  return { before: steps[i - 1] ?? null, at: steps[i] ?? null, next: steps[i + 1] ?? null }
}

/**
 * The tail after a run inserted `inserted` (the object's new steps, any order) into the trace whose
 * tail was `tail`: the last TAIL_STEPS of the tail's steps and of the new steps after its first one
 * (a new step before it lies before every remembered step, and does not change the end of the trace
 * unless the tail was the whole trace).
 */
export function nextTail(tail: TraceTail, inserted: readonly DfStep<number>[]): TraceTail {
  const first = tail.steps[0]
  const kept = tail.whole || first === undefined ? inserted : inserted.filter((s) => compareSteps(s, first) > 0)
  const merged = [...tail.steps, ...kept].sort(compareSteps)
  return { steps: merged.slice(-TAIL_STEPS), whole: tail.whole && merged.length <= TAIL_STEPS }
}

export class DfObjectMemory {
  private readonly objects = new Map<number, RememberedObject>()

  /** @param maxObjects the most objects held (≥ 0; 0 remembers nothing). */
  constructor(readonly maxObjects: number = DF_MEMORY_OBJECTS) {}

  /** The remembered state of object `rid`, or undefined. */
  get(rid: number): RememberedObject | undefined {
    return this.objects.get(rid)
  }

  /**
   * Sets what is known of `rid` after the current transaction's writes: it becomes the most recently
   * written object. Parts left undefined are not known (read from the file next time).
   */
  set(rid: number, entry: RememberedObject): void {
    this.objects.delete(rid)
    if (this.maxObjects > 0) this.objects.set(rid, entry)
  }

  /** Forgets `rid`. */
  delete(rid: number): void {
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
