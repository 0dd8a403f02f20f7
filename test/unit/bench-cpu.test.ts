/** The bench's CPU readings (bench/processes.ts): a process's, and its main thread's, from Linux's /proc. */
import { describe, expect, it } from 'vitest'
import { cpuSecondsOf } from '../../bench/processes.js'

const onLinux = process.platform === 'linux'
if (!onLinux) console.log(`skip: the bench reads CPU time from /proc, which ${process.platform} lacks`)

describe.skipIf(!onLinux)('cpuSecondsOf', () => {
  it("counts this thread's work in the main thread (tid = pid) and in the process, the process at least as much", () => {
    const thread0 = cpuSecondsOf(process.pid, process.pid)
    const process0 = cpuSecondsOf(process.pid)
    // Work on this thread until its reading has moved 0.1 s (/proc counts in ticks of 10 ms), or 10 s have passed.
    const deadline = Date.now() + 10_000
    let x = 0
    while (cpuSecondsOf(process.pid, process.pid) - thread0 < 0.1 && Date.now() < deadline) for (let i = 0; i < 100_000; i++) x += Math.sqrt(x + i)
    expect(x).toBeGreaterThan(0)
    const thread = cpuSecondsOf(process.pid, process.pid) - thread0
    const whole = cpuSecondsOf(process.pid) - process0
    expect(thread).toBeGreaterThanOrEqual(0.1)
    expect(whole).toBeGreaterThanOrEqual(thread)
  })

  it('reads 0 for a process or thread that does not exist', () => {
    expect(cpuSecondsOf(2 ** 22 + 1)).toBe(0)
    expect(cpuSecondsOf(process.pid, 2 ** 22 + 1)).toBe(0)
  })
})
