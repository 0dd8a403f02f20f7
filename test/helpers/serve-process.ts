/**
 * The built service (`ocelog serve`) as a process that a test kills and starts again on the same
 * data dir, for the e2e tests of crashes (durability, exactly once). test/helpers/service.ts is the
 * one-shot form with a fresh data dir.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { CLI } from './cli.js'
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../../src/app/runtime.js'

export interface ServeSpawnOptions {
  /** Pipe stdout (the service's log lines) too; it is ignored otherwise. */
  captureLog?: boolean
  /** Extra node flags, after the service's own (SERVICE_NODE_FLAGS), e.g. `['--import', file]`. */
  nodeArgs?: readonly string[]
  /** Extra arguments of `ocelog serve`, e.g. `['--no-projector']`. */
  args?: readonly string[]
}

/** Every `ocelog serve` this process started and that has not exited yet. */
const running = new Set<ChildProcess>()
let hooked = false

/** SIGKILL to every child still running; synchronous, so an `exit` hook can call it. */
function killRunning(): void {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
}

/**
 * Kills a test worker's `ocelog serve` children when the worker ends without stopping them (an
 * assertion that failed before `stop()`, a killed run): on `exit`; on SIGTERM, SIGINT and SIGHUP
 * (how vitest ends a worker, a CI timeout, Ctrl-C), after which the signal is raised again so the
 * worker still dies of it; and when the IPC channel to the parent (vitest) closes.
 */
function hookWorkerEnd(): void {
  if (hooked) return
  hooked = true
  process.on('exit', killRunning)
  process.on('disconnect', killRunning)
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = () => {
      killRunning()
      process.off(signal, onSignal)
      // With no other listener left, the signal's default action ends the process as it would have.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    }
    process.on(signal, onSignal)
  }
}

/**
 * Starts `ocelog serve` as `npm start` runs it: its node flags (SERVICE_NODE_FLAGS) and environment
 * (SERVICE_ENV, over `env`), with `env` (OCELOG_DATA_DIR, PORT, HOST, …) otherwise. stderr is piped;
 * stdout (the service's log lines) is ignored unless `captureLog` pipes it too. The one way the
 * e2e tests start the service (test/helpers/service.ts builds on it). A child still running when
 * this process ends (exit, SIGTERM, SIGINT, SIGHUP, or its parent's IPC channel closing) gets
 * SIGKILL, so a test that fails before it stops its service leaves no process behind (README § Tests).
 */
export function spawnServe(env: NodeJS.ProcessEnv, options: ServeSpawnOptions = {}): ChildProcess {
  hookWorkerEnd()
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(options.nodeArgs ?? []), CLI, 'serve', ...(options.args ?? [])], {
    env: { ...env, ...SERVICE_ENV },
    stdio: ['ignore', options.captureLog === true ? 'pipe' : 'ignore', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}

/**
 * Resolves once GET /v1/health on 127.0.0.1:`port` answers 200 with `key`.
 * @throws Error when it does not within `timeoutMs` (default 15 s).
 */
export async function waitUntilUp(port: number, key: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${String(port)}/v1/health`, { headers: { authorization: `Bearer ${key}` } })
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`service did not answer /v1/health within ${String(timeoutMs / 1000)} s`)
}

/** Resolves when `child` has exited (at once if it already has), with its signal or exit code. */
export function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode ?? child.exitCode)
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)))
}

/** A running `ocelog serve` whose log lines (stdout) are collected. */
export interface LoggedServe {
  child: ChildProcess
  /** What the service logged so far. */
  lines: () => string
}

/** Starts `ocelog serve` (spawnServe) collecting its log lines, and waits until it answers on `port` with `key`. */
export async function startLogged(env: NodeJS.ProcessEnv, port: number, key: string): Promise<LoggedServe> {
  const child = spawnServe(env, { captureLog: true })
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  await waitUntilUp(port, key)
  return { child, lines: () => out }
}
