/**
 * The paced loads of the bench's freshness scenario (docs/performance.md#targets): `--freshness`
 * takes a comma-separated list of `rate@seconds` items, each a batch load on a fresh service. The
 * first is graded against the target, the others are reported.
 */
import { InvalidArgumentError } from 'commander'

/** One paced load of the freshness scenario. */
export interface FreshnessLoad {
  /** Events per second asked (requests/s = this ÷ the batch's 100 events). */
  rate: number
  /** Seconds of the load. */
  seconds: number
}

/** The default list: the target's load first, then the reported one (docs/performance.md#targets). */
export const DEFAULT_FRESHNESS_LOADS: readonly FreshnessLoad[] = [
  { rate: 10_000, seconds: 60 },
  { rate: 25_000, seconds: 30 },
]

/** The default list as `--freshness` spells it, for the help text. */
export const DEFAULT_FRESHNESS_SPEC = DEFAULT_FRESHNESS_LOADS.map((l) => `${String(l.rate)}@${String(l.seconds)}`).join(',')

/** A number > 0 written in decimal (`1e3`, `0x10` and the empty string are not). */
const POSITIVE = /^\d+(\.\d+)?$/

/**
 * Parses `--freshness` (a commander argument parser): `rate@seconds[,rate@seconds…]`, both numbers
 * > 0, e.g. `10000@60,25000@30`; spaces around items are ignored.
 * @returns the loads in the order given (the first is the graded one).
 * @throws InvalidArgumentError naming the first malformed item and the expected form, or for an empty list.
 */
export function parseFreshnessLoads(v: string): FreshnessLoad[] {
  const items = v.split(',').map((s) => s.trim())
  if (items.every((s) => s === '')) throw new InvalidArgumentError('needs at least one load, as rate@seconds (e.g. 10000@60)')
  return items.map((item) => {
    const [rate, seconds, ...rest] = item.split('@').map((s) => s.trim())
    const valid = (s: string | undefined): s is string => s !== undefined && POSITIVE.test(s) && Number(s) > 0
    if (rest.length > 0 || !valid(rate) || !valid(seconds)) {
      throw new InvalidArgumentError(
        `item "${item}" is not rate@seconds: events/s @ seconds of load, both numbers > 0, comma-separated (e.g. ${DEFAULT_FRESHNESS_SPEC})`,
      )
    }
    return { rate: Number(rate), seconds: Number(seconds) }
  })
}
