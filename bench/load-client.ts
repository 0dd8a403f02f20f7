/**
 * The benchmarks' handle on their load generator (bench/load-worker.ts): one child process, forked
 * with IPC, that runs load jobs one at a time, so the load never shares the orchestrator's event
 * loop. Progress shows on a terminal as one overwritten line.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import type { FromWorker, LoadJob, LoadResult, ToWorker } from './load-protocol.js'
import { BENCH_DIST, stopProcess } from './processes.js'
import { num } from './report.js'

/** The load worker: one child process, jobs one at a time over IPC. */
export class LoadWorker {
  private nextId = 1
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoadWorker> {
    const child = fork(join(BENCH_DIST, 'load-worker.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    await new Promise<void>((resolve, reject) => {
      child.once('message', (m: FromWorker) => (m.type === 'ready' ? resolve() : reject(new Error(`load worker said ${m.type} first`))))
      child.once('exit', (code) => reject(new Error(`load worker exited ${String(code)}`)))
    })
    return new LoadWorker(child)
  }

  run(job: LoadJob): Promise<LoadResult> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const onMessage = (m: FromWorker) => {
        if (m.type === 'ready' || m.id !== id) return
        if (m.type === 'progress') {
          const rate = m.seconds > 0 ? m.requests / m.seconds : 0
          const line = `  … ${job.label}: ${num(m.seconds)} s, ${num(rate)} req/s`
          if (process.stdout.isTTY) process.stdout.write(`\r${line.padEnd(70)}`)
          return
        }
        this.child.off('message', onMessage)
        this.child.off('exit', onExit)
        if (process.stdout.isTTY) process.stdout.write(`\r${''.padEnd(70)}\r`)
        if (m.type === 'result') resolve(m.result)
        else reject(new Error(`${job.label}: ${m.message}`))
      }
      const onExit = (code: number | null) => reject(new Error(`load worker exited ${String(code)} during ${job.label}`))
      this.child.on('message', onMessage)
      this.child.once('exit', onExit)
      const message: ToWorker = { type: 'run', id, job }
      this.child.send(message)
    })
  }

  async stop(): Promise<void> {
    const message: ToWorker = { type: 'exit' }
    if (this.child.connected) this.child.send(message)
    await stopProcess(this.child, 5000)
  }
}
