/**
 * Small concurrency tools of the client: a counting semaphore and an abortable sleep.
 * Plain Node; no dependency.
 */

/** A counting semaphore with a FIFO queue: at most `permits` holders at once. */
export class Semaphore {
  private available: number
  private readonly waiting: (() => void)[] = []

  constructor(permits: number) {
    if (!Number.isSafeInteger(permits) || permits < 1) throw new RangeError(`concurrency must be a whole number ≥ 1, got ${String(permits)}`)
    this.available = permits
  }

  /** Waits for a permit; the returned function gives it back (call it exactly once). */
  async acquire(): Promise<() => void> {
    if (this.available > 0) {
      this.available -= 1
    } else {
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.waiting.shift()
      if (next === undefined) this.available += 1
      else next()
    }
  }
}

/**
 * Waits `ms` milliseconds, or less when `signal` fires.
 * @returns true when the whole time passed, false when the signal cut it short.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false)
  if (ms <= 0) return Promise.resolve(true)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
