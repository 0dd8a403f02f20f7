/**
 * A real `redis-server` for tests: started on a free port without
 * persistence, answered PING before it is handed out, stopped afterwards.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createConnection } from 'node:net'
import { freePort } from './free-port.js'

export interface RedisServer {
  port: number
  /** redis://127.0.0.1:<port> */
  url: string
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>
}

/** Whether a `redis-server` binary is on PATH (`.ci/run` installs it when missing). */
export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

/** Sends PING over a raw connection; true when the answer is +PONG. */
export function ping(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data) => done(data.toString('utf8').startsWith('+PONG')))
  })
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/**
 * Starts `redis-server --port P --save '' --appendonly no` on a free port and waits until it
 * answers PING (at most `timeoutMs`).
 * @throws when the server exits early or does not answer in time (its output is in the message).
 */
export async function startRedisServer(timeoutMs = 10_000): Promise<RedisServer> {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')))
  child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')))
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${String(child.exitCode)}: ${output.slice(-2000)}`)
    if (await ping(port)) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`redis-server on port ${String(port)} did not answer PING within ${String(timeoutMs)} ms: ${output.slice(-2000)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    port,
    url: `redis://127.0.0.1:${String(port)}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.kill('SIGTERM')
      await exited(child)
      clearTimeout(killer)
    },
  }
}
