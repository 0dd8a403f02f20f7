/**
 * Splits `items` (order kept) into consecutive chunks whose weights add up to at most `maxWeight`.
 * Greedy: a chunk closes when the next item would overflow it. An item heavier than `maxWeight`
 * forms a chunk of its own (callers that cannot allow that check first).
 * @returns non-empty chunks whose concatenation is `items`; [] for no items.
 */
export function chunkByWeight<T>(items: readonly T[], weigh: (item: T) => number, maxWeight: number): T[][] {
  const chunks: T[][] = []
  let current: T[] = []
  let used = 0
  for (const item of items) {
    const weight = weigh(item)
    if (current.length > 0 && used + weight > maxWeight) {
      chunks.push(current)
      current = []
      used = 0
    }
    current.push(item)
    used += weight
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}
