/**
 * Duration statistics by the process map's definition (docs/process-map.md#definitions), computed
 * the plain way (sort everything), as the tests' oracle. No I/O: unit tests import it.
 */
import type { Stats } from '../../src/schemas/process.js'

/** Statistics by the definition: seconds from whole ms; mean and median rounded to the ms; the median of an even count the mean of the two middle values. */
export function statsOfDurations(ms: readonly number[]): Stats | null {
  if (ms.length === 0) return null
  const s = [...ms].sort((a, b) => a - b)
  const sum = s.reduce((a, b) => a + b, 0)
  const median = ((s[Math.floor((s.length - 1) / 2)] as number) + (s[Math.ceil((s.length - 1) / 2)] as number)) / 2
  return {
    count: s.length,
    mean: Math.round(sum / s.length) / 1000,
    median: Math.round(median) / 1000,
    min: (s[0] as number) / 1000,
    max: (s[s.length - 1] as number) / 1000,
    sum: sum / 1000,
  }
}
