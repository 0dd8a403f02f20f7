/**
 * Statistics of a multiset of durations (whole milliseconds, ≥ 0) that values can be added to and
 * removed from: what the directly-follows read model keeps per edge and activity
 * (docs/process-map.md#medians-of-the-all-time-map). Count and sum are exact. Min and max are exact:
 * the `EXTREMES` smallest and largest values are kept as they are, and once removals take every kept
 * value of one end (emptiedEnds), the owner refills that end from the values it still holds
 * (refillEnd; the directly-follows stores read them from their steps). Left unfilled, that end comes
 * from its bucket, within MEDIAN_RELATIVE_ERROR. The median is exact while the
 * multiset holds at most `EXACT_MAX` values (all are kept); past that it comes from a DDSketch
 * (Masson, Rim and Lee, "DDSketch: a fast and fully-mergeable quantile sketch with relative-error
 * guarantees", VLDB 2019): logarithmic buckets from `@datadog/sketches-js`'s LogarithmicMapping, of
 * relative accuracy `MEDIAN_RELATIVE_ERROR`, with counts that a removal decrements. Pure; no I/O.
 */
import { LogarithmicMapping } from '@datadog/sketches-js/dist/ddsketch/mapping/index.js'

/** The bound on a sketched median's relative error (DDSketch's α): |median − exact| ≤ α·exact, before rounding to the millisecond. */
export const MEDIAN_RELATIVE_ERROR = 0.01

/** Multisets of at most this many values keep them all: their median is exact. */
export const EXACT_MAX = 64

/** How many of the smallest and of the largest values a sketched multiset keeps exactly (its min and max). */
export const EXTREMES = 32

const mapping = new LogarithmicMapping(MEDIAN_RELATIVE_ERROR)

/**
 * The stored form (JSON-safe). Either `exact` (every value, ascending) or the sketch: `lo`/`hi` the
 * smallest/largest values (ascending, at most EXTREMES each, exact but possibly fewer after
 * removals), `z` the zero values, and bucket counts `c[i]` of bucket key `k0 + i`.
 */
export interface DurationStats {
  n: number
  sum: number
  exact?: number[]
  lo?: number[]
  hi?: number[]
  z?: number
  k0?: number
  c?: number[]
}

/** A multiset that holds nothing. */
export function emptyStats(): DurationStats {
  return { n: 0, sum: 0, exact: [] }
}

/** Index of the first element of ascending `a` that is ≥ v (binary search). */
function lowerBound(a: readonly number[], v: number): number {
  let lo = 0
  let hi = a.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((a[mid] as number) < v) lo = mid + 1
    else hi = mid
  }
  return lo
}

function insertSorted(a: number[], v: number): void {
  a.splice(lowerBound(a, v), 0, v)
}

/** Removes one `v` from ascending `a`; false when absent. */
function removeSorted(a: number[], v: number): boolean {
  const i = lowerBound(a, v)
  if (a[i] !== v) return false
  a.splice(i, 1)
  return true
}

function bucketAdd(s: DurationStats, v: number, weight: number): void {
  if (v <= 0) {
    s.z = (s.z ?? 0) + weight
    return
  }
  const key = mapping.key(v)
  const c = s.c ?? []
  s.c = c
  if (c.length === 0 || s.k0 === undefined) {
    c.push(weight)
    s.k0 = key
    return
  }
  if (key < s.k0) {
    c.unshift(...new Array<number>(s.k0 - key).fill(0))
    s.k0 = key
  }
  const i = key - s.k0
  while (c.length <= i) c.push(0)
  c[i] = (c[i] as number) + weight
  if (weight >= 0 || c[i] !== 0) return
  // Trim empty buckets at both ends, so the stored range follows the values.
  while (c.length > 0 && c[c.length - 1] === 0) c.pop()
  let start = 0
  while (start < c.length && c[start] === 0) start += 1
  if (start > 0) {
    c.splice(0, start)
    s.k0 += start
  }
  if (c.length === 0) delete s.k0
}

/** Turns an exact multiset into a sketch (when it grows past EXACT_MAX). */
function toSketch(s: DurationStats, values: readonly number[]): void {
  delete s.exact
  s.lo = values.slice(0, EXTREMES)
  s.hi = values.slice(Math.max(0, values.length - EXTREMES))
  s.z = 0
  s.c = []
  delete s.k0
  for (const v of values) bucketAdd(s, v, 1)
}

/**
 * Adds `v` (ms, ≥ 0) to `s` in place.
 * @throws RangeError on a negative or non-integer value (durations here are whole ms, never negative).
 */
export function addDuration(s: DurationStats, v: number): void {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`duration must be a whole number of ms ≥ 0, got ${String(v)}`)
  s.n += 1
  s.sum += v
  if (s.exact !== undefined) {
    insertSorted(s.exact, v)
    if (s.exact.length > EXACT_MAX) toSketch(s, s.exact)
    return
  }
  const lo = s.lo ?? []
  const hi = s.hi ?? []
  // lo holds the exact |lo| smallest: v joins when it is below its largest, or when lo holds every value. Once removals
  // emptied lo, a value added is not known to be the smallest: lo stays empty (min and low ranks then come from the buckets).
  if ((lo.length > 0 && v <= (lo[lo.length - 1] as number)) || lo.length === s.n - 1) {
    insertSorted(lo, v)
    if (lo.length > EXTREMES) lo.pop()
  }
  if ((hi.length > 0 && v >= (hi[0] as number)) || hi.length === s.n - 1) {
    insertSorted(hi, v)
    if (hi.length > EXTREMES) hi.shift()
  }
  s.lo = lo
  s.hi = hi
  bucketAdd(s, v, 1)
}

/**
 * Removes one occurrence of `v` (ms) from `s` in place.
 * @throws Error when `s` is empty (a caller removing what it never added: a broken read model).
 */
export function removeDuration(s: DurationStats, v: number): void {
  if (s.n === 0) throw new Error(`cannot remove ${String(v)} ms from empty statistics`)
  s.n -= 1
  s.sum -= v
  if (s.exact !== undefined) {
    if (!removeSorted(s.exact, v)) throw new Error(`cannot remove ${String(v)} ms: not among the values`)
    return
  }
  // A value at or below lo's largest is in lo (lo is the exact |lo| smallest); likewise for hi.
  if (s.lo !== undefined && s.lo.length > 0 && v <= (s.lo[s.lo.length - 1] as number)) removeSorted(s.lo, v)
  if (s.hi !== undefined && s.hi.length > 0 && v >= (s.hi[0] as number)) removeSorted(s.hi, v)
  bucketAdd(s, v, -1)
}

/** The two kept ends of a sketch: `lo` its smallest values, `hi` its largest (DurationStats). */
export type StatsEnd = 'lo' | 'hi'

/**
 * The kept ends of `s` that removals emptied while it still holds values: a sketch whose `lo` (or
 * `hi`) is empty with `n` > 0. Its min (or max) is then no longer exact until refillEnd. Exact
 * multisets never need a refill. Adds alone never empty an end, so only removeDuration leads here.
 */
export function emptiedEnds(s: DurationStats): StatsEnd[] {
  if (s.exact !== undefined || s.n === 0) return []
  const out: StatsEnd[] = []
  if ((s.lo?.length ?? 0) === 0) out.push('lo')
  if ((s.hi?.length ?? 0) === 0) out.push('hi')
  return out
}

/** How many values refillEnd takes for one end of `s`: every value when it holds at most EXTREMES, else EXTREMES. */
export function refillSize(s: DurationStats): number {
  return Math.min(EXTREMES, s.n)
}

/**
 * Puts back one kept end of sketch `s` in place: `values` must be the refillSize(s) smallest (`lo`)
 * or largest (`hi`) of the values `s` holds now (ms, any order), read by its owner from where it
 * keeps every value. The end is then exact again, and so is the min (or max).
 * @throws RangeError when `s` is not a sketch, or `values` is not refillSize(s) whole numbers ≥ 0.
 */
export function refillEnd(s: DurationStats, end: StatsEnd, values: readonly number[]): void {
  if (s.exact !== undefined) throw new RangeError('refillEnd: exact statistics keep every value')
  if (values.length !== refillSize(s)) {
    throw new RangeError(`refillEnd: ${end} takes the ${String(refillSize(s))} ${end === 'lo' ? 'smallest' : 'largest'} values, got ${String(values.length)}`)
  }
  for (const v of values) if (!Number.isInteger(v) || v < 0) throw new RangeError(`duration must be a whole number of ms ≥ 0, got ${String(v)}`)
  const sorted = [...values].sort((a, b) => a - b)
  if (end === 'lo') s.lo = sorted
  else s.hi = sorted
}

/** The bucket's representative value of key `k` (DDSketch: within MEDIAN_RELATIVE_ERROR of every value in it). */
function bucketValue(k: number): number {
  return mapping.value(k)
}

/** The value of rank `r` (0-based, ascending) of a sketch: exact when it falls in `lo` or `hi`, else its bucket's value. */
function valueAtRank(s: DurationStats, r: number): number {
  const lo = s.lo ?? []
  const hi = s.hi ?? []
  if (r < lo.length) return lo[r] as number
  const fromTop = s.n - 1 - r
  if (fromTop < hi.length) return hi[hi.length - 1 - fromTop] as number
  let seen = s.z ?? 0
  if (r < seen) return 0
  const c = s.c ?? []
  const k0 = s.k0 ?? 0
  for (let i = 0; i < c.length; i += 1) {
    seen += c[i] as number
    if (r < seen) return Math.min(Math.max(bucketValue(k0 + i), minOf(s)), maxOf(s))
  }
  return maxOf(s)
}

function minOf(s: DurationStats): number {
  if (s.exact !== undefined) return s.exact[0] ?? 0
  if (s.lo !== undefined && s.lo.length > 0) return s.lo[0] as number
  if ((s.z ?? 0) > 0) return 0
  // Every kept smallest value was removed (see EXTREMES): the lowest bucket's value.
  const i = (s.c ?? []).findIndex((x) => x > 0)
  return i < 0 ? 0 : bucketValue((s.k0 ?? 0) + i)
}

function maxOf(s: DurationStats): number {
  if (s.exact !== undefined) return s.exact[s.exact.length - 1] ?? 0
  if (s.hi !== undefined && s.hi.length > 0) return s.hi[s.hi.length - 1] as number
  const c = s.c ?? []
  for (let i = c.length - 1; i >= 0; i -= 1) if ((c[i] as number) > 0) return bucketValue((s.k0 ?? 0) + i)
  return 0
}

/** Count, sum, min, max and median in ms (median of an even count: the mean of the two middle values); null when empty. */
export interface DurationSummary {
  count: number
  sum: number
  min: number
  max: number
  median: number
  /** Whether the median is exact (else within MEDIAN_RELATIVE_ERROR). */
  exactMedian: boolean
}

/** Summarises `s` (ms); null when it holds no value. */
export function summarize(s: DurationStats): DurationSummary | null {
  if (s.n === 0) return null
  const lowRank = Math.floor((s.n - 1) / 2)
  const highRank = Math.ceil((s.n - 1) / 2)
  if (s.exact !== undefined) {
    const median = ((s.exact[lowRank] as number) + (s.exact[highRank] as number)) / 2
    return { count: s.n, sum: s.sum, min: minOf(s), max: maxOf(s), median, exactMedian: true }
  }
  const a = valueAtRank(s, lowRank)
  const b = valueAtRank(s, highRank)
  const kept = (r: number) => r < (s.lo?.length ?? 0) || s.n - 1 - r < (s.hi?.length ?? 0)
  const exactMedian = kept(lowRank) && kept(highRank)
  return { count: s.n, sum: s.sum, min: minOf(s), max: maxOf(s), median: (a + b) / 2, exactMedian }
}

/**
 * Duration statistics as read back from a store's document or jsonb value: only the fields DurationStats defines, those
 * of the wrong type (null, a missing array) left out, so the stats code sees what it wrote.
 */
export function statsOfStored(v: unknown): DurationStats {
  const d = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}
  const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : undefined)
  const nums = (x: unknown): number[] | undefined => (Array.isArray(x) ? x.filter((e): e is number => typeof e === 'number') : undefined)
  const s: DurationStats = { n: num(d.n) ?? 0, sum: num(d.sum) ?? 0 }
  const exact = nums(d.exact)
  const lo = nums(d.lo)
  const hi = nums(d.hi)
  const z = num(d.z)
  const k0 = num(d.k0)
  const c = nums(d.c)
  if (exact !== undefined) s.exact = exact
  if (lo !== undefined) s.lo = lo
  if (hi !== undefined) s.hi = hi
  if (z !== undefined) s.z = z
  if (k0 !== undefined) s.k0 = k0
  if (c !== undefined) s.c = c
  return s
}
