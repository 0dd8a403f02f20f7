/** The bench's CPU readings (bench/processes.ts): a process's, and its main thread's, from Linux's /proc. */
import { describe, expect, it } from 'vitest'
import { cpuSecondsOf } from '../../bench/processes.js'

const onLinux = process.platform === 'linux'
if (!onLinux) console.log(`skip: the bench reads CPU time from /proc, which ${process.platform} lacks`)

/** A CPU time in seconds as a whole number of /proc ticks (10 ms). */
const ticks = (seconds: number): number => Math.round(seconds * 100)

describe.skipIf(!onLinux)('cpuSecondsOf', () => {
  it("counts this thread's work in the main thread (tid = pid) and in the process, the process at least as much", () => {
    // The process is read before the thread at the start and after it at the end, so its interval holds the thread's.
    const process0 = cpuSecondsOf(process.pid)
    const thread0 = cpuSecondsOf(process.pid, process.pid)
    // Work on this thread until its reading has moved 0.1 s (/proc counts in ticks of 10 ms), or 10 s have passed.
    const deadline = Date.now() + 10_000
    let x = 0
    while (ticks(cpuSecondsOf(process.pid, process.pid) - thread0) < 10 && Date.now() < deadline) for (let i = 0; i < 100_000; i++) x += Math.sqrt(x + i)
    expect(x).toBeGreaterThan(0)
    // Compared in whole ticks: seconds are ticks / 100, and their float differences can land a hair off (0.09999999999999998).
    const thread = ticks(cpuSecondsOf(process.pid, process.pid) - thread0)
    const whole = ticks(cpuSecondsOf(process.pid) - process0)
    expect(thread).toBeGreaterThanOrEqual(10)
    // The kernel rounds utime and stime down to a tick each, in every reading: a difference of two readings may lose up to a
    // tick per field, so the process may show up to two ticks less than the thread (CI once saw 8 against 10 with the
    // readings in the other order).
    expect(whole).toBeGreaterThanOrEqual(thread - 2)
  })

  it('reads 0 for a process or thread that does not exist', () => {
    expect(cpuSecondsOf(2 ** 22 + 1)).toBe(0)
    expect(cpuSecondsOf(process.pid, 2 ** 22 + 1)).toBe(0)
  })
})
