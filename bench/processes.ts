/**
 * Child processes of the benchmark: the built service (`ocelog serve`), its CLI (`keys create`,
 * `project --rebuild`), the bare-Fastify baseline and the load worker. Every process started here
 * is stopped by its pid through the handle returned here.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/app/runtime.js'

/** The repository root (this file runs as dist/bench/processes.js). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js')
export const BENCH_DIST = join(ROOT, 'dist', 'bench')

/** A free TCP port on 127.0.0.1 (asked from the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })
}

/**
 * The environment of an Ocelog process on the embedded default: no engine variable of this
 * process's environment; `extra` on top (so a caller may name an engine itself, e.g. POSTGRES_URL).
 */
export function embeddedEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OCELOG_DATA_DIR: dataDir }
  delete env.EVENTSTORE_URL
  delete env.MONGODB_URL
  delete env.REDIS_URL
  delete env.POSTGRES_URL
  return { ...env, ...extra }
}

/** Runs a CLI command to completion. @returns stdout. @throws with stderr when it exits non-zero. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0) resolveRun(out)
      else reject(new Error(`ocelog ${args.join(' ')} exited ${String(code)}: ${err.trim() || out.trim()}`))
    })
  })
}

/** A key created with `ocelog keys create --name bench --json`. */
export async function createKey(dataDir: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const out = await runCli(['keys', 'create', '--name', 'bench', '--json'], embeddedEnv(dataDir, extraEnv))
  const parsed: unknown = JSON.parse(out)
  if (typeof parsed !== 'object' || parsed === null || !('key' in parsed) || typeof parsed.key !== 'string') {
    throw new Error(`keys create --json printed no key: ${out}`)
  }
  return parsed.key
}

export interface Running {
  child: ChildProcess
  pid: number
  url: string
  /** Last lines the process wrote (stdout and stderr), for error messages. */
  output(): string
}

function track(child: ChildProcess): () => string {
  const lines: string[] = []
  const keep = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== ''),
    )
    if (lines.length > 50) lines.splice(0, lines.length - 50)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  return () => lines.join('\n')
}

function pidOf(child: ChildProcess): number {
  if (child.pid === undefined) throw new Error('child process did not start')
  return child.pid
}

/**
 * Starts `ocelog serve` on the embedded default with rate limits out of the way, and with the node
 * flags and environment `npm start` gives it (SERVICE_NODE_FLAGS, SERVICE_ENV), and waits until
 * GET /v1/health answers 200 with `token`.
 * @param nodeArgs extra node flags, e.g. `--cpu-prof`.
 * @param serveArgs extra arguments of `serve`, e.g. `--no-projector`.
 * @param extraEnv variables on top, e.g. POSTGRES_URL for the PostgreSQL backend (bench/postgres.ts).
 */
export async function startService(
  dataDir: string,
  token: string,
  nodeArgs: readonly string[] = [],
  serveArgs: readonly string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Running> {
  const port = await freePort()
  const env = embeddedEnv(dataDir, {
    ...SERVICE_ENV,
    PORT: String(port),
    HOST: '127.0.0.1',
    OCELOG_RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  })
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, CLI, 'serve', ...serveArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = track(child)
  const url = `http://127.0.0.1:${String(port)}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ocelog serve exited ${String(child.exitCode)}: ${output()}`)
    try {
      const res = await fetch(`${url}/v1/health`, { headers: { authorization: `Bearer ${token}` } })
      if (res.status === 200) break
      throw new Error(`health answered ${String(res.status)}: ${await res.text()}`)
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`ocelog serve did not answer within 30 s (${String(error)}): ${output()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return { child, pid: pidOf(child), url, output }
}

/** Starts a projector process following the log until SIGTERM (bench/projector-process.ts) on the embedded default. */
export function startProjector(dataDir: string, nodeArgs: readonly string[] = []): { child: ChildProcess; pid: number; output(): string } {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, join(BENCH_DIST, 'projector-process.js')], {
    env: embeddedEnv(dataDir, { ...SERVICE_ENV, LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { child, pid: pidOf(child), output: track(child) }
}

/** Starts the bare-Fastify baseline (dist/bench/baseline-server.js) and waits for its `listening` line. */
export async function startBaseline(): Promise<Running> {
  const port = await freePort()
  const child = spawn(process.execPath, [join(BENCH_DIST, 'baseline-server.js')], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output = track(child)
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseline server did not start: ${output()}`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      const m = /listening (\S+)/.exec(chunk.toString())
      if (m?.[1] !== undefined) {
        clearTimeout(timer)
        resolveUrl(m[1])
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`baseline server exited ${String(code)}: ${output()}`))
    })
  })
  return { child, pid: pidOf(child), url, output }
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export function stopProcess(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    child.once('exit', () => {
      clearTimeout(timer)
      resolveStop()
    })
    child.kill('SIGTERM')
  })
}

/**
 * Resident-set figures of a live process from /proc/<pid>/status, in bytes.
 * @returns `peak` (VmHWM, the high-water mark since start) and `current` (VmRSS); 0 when unreadable.
 */
export function rssOf(pid: number): { peak: number; current: number } {
  let status = ''
  try {
    status = readFileSync(`/proc/${String(pid)}/status`, 'utf8')
  } catch {
    return { peak: 0, current: 0 }
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  return { peak: kb('VmHWM'), current: kb('VmRSS') }
}

/**
 * CPU time (user + system, in seconds) a live process has used so far, from /proc/<pid>/stat, or
 * one of its threads, from /proc/<pid>/task/<tid>/stat (a Node process's main thread, which runs
 * the event loop, has tid = pid); 0 when unreadable. Unlike wall-clock rates, CPU per item barely
 * moves when other work shares the machine.
 */
export function cpuSecondsOf(pid: number, tid?: number): number {
  let stat = ''
  try {
    stat = readFileSync(tid === undefined ? `/proc/${String(pid)}/stat` : `/proc/${String(pid)}/task/${String(tid)}/stat`, 'utf8')
  } catch {
    return 0
  }
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15, in ticks.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / CLOCK_TICKS
}

/**
 * CPU time (user + system, in seconds) of this process's children that have exited and been waited
 * for (cutime and cstime of /proc/self/stat); 0 when unreadable. The difference across one child's
 * run, with no other child ending meanwhile, is that child's CPU time.
 */
export function exitedChildrenCpuSeconds(): number {
  let stat = ''
  try {
    stat = readFileSync('/proc/self/stat', 'utf8')
  } catch {
    return 0
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) / CLOCK_TICKS
}

/** USER_HZ of Linux's /proc: 100 on every mainstream architecture. */
const CLOCK_TICKS = 100
