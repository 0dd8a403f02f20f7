/**
 * e2e (README § Tests): a test run's `ocelog serve` children die with it (test/helpers/serve-process.ts).
 * A vitest of its own runs test/fixtures/serve-left-running.fixture.ts, which starts the built service
 * through the e2e helper and never stops it; then that service's pid must be gone:
 * - when its assertion fails before `stop()` and the run ends as usual;
 * - when the run is killed mid-test, by SIGTERM (a CI timeout, a helper stopping it) or SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { requireBuild } from '../helpers/cli.js'
import { processAlive as alive } from '../helpers/postgres-server.js'

const VITEST = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs')
const CONFIG = join(process.cwd(), 'test', 'fixtures', 'serve-left-running.vitest.config.ts')

/** Polls until `check` holds or `timeoutMs` passes; whether it held. */
async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 100))
  }
  return true
}

const dirs: string[] = []
const servePids: number[] = []
const runs: ChildProcess[] = []

afterAll(() => {
  // What a failed assertion here left: the nested runs and their services.
  for (const run of runs) if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL')
  for (const pid of servePids) if (alive(pid)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * Runs the fixture in a vitest of its own; once its service answers, `kill` (if given) is sent to that
 * vitest's main process. Resolves with the service's pid, whether it was alive when its pid was read,
 * the run's exit code or signal and its output.
 */
async function runFixture(mode: 'fail' | 'hang', kill?: NodeJS.Signals) {
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-leftovers-'))
  dirs.push(dir)
  const pidFile = join(dir, 'serve.pid')
  const env: NodeJS.ProcessEnv = { ...process.env, OCELOG_FIXTURE_MODE: mode, OCELOG_FIXTURE_PID_FILE: pidFile, OCELOG_FIXTURE_DATA_DIR: dir }
  for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name]
  const run = spawn(process.execPath, [VITEST, 'run', '--config', CONFIG], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  runs.push(run)
  let output = ''
  run.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  run.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) => run.once('exit', (code, signal) => resolve(signal ?? code)))
  const wrote = await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 60_000)
  if (!wrote) throw new Error(`the fixture wrote no pid within 60 s:\n${output}`)
  const servePid = Number(readFileSync(pidFile, 'utf8'))
  servePids.push(servePid)
  const aliveAtFirst = alive(servePid)
  if (kill !== undefined) run.kill(kill)
  const exit = await ended
  return { servePid, aliveAtFirst, exit, output: () => output }
}

describe('ocelog serve children of a test run', () => {
  it('die when a test fails before stop()', { timeout: 120_000 }, async () => {
    requireBuild()
    // The fixture writes the pid once the service answered HTTP; the run may end before it is read here.
    const r = await runFixture('fail')
    expect(r.exit, r.output()).toBe(1)
    expect(r.output()).toContain("expected 'the service was stopped' to be 'never'")
    expect(await eventually(() => !alive(r.servePid), 10_000)).toBe(true)
  })

  it('die when the run is killed with SIGTERM mid-test', { timeout: 120_000 }, async () => {
    requireBuild()
    const r = await runFixture('hang', 'SIGTERM')
    expect(r.aliveAtFirst).toBe(true)
    expect(await eventually(() => !alive(r.servePid), 10_000)).toBe(true)
  })

  it('die when the run is killed with SIGKILL mid-test', { timeout: 120_000 }, async () => {
    requireBuild()
    const r = await runFixture('hang', 'SIGKILL')
    expect(r.aliveAtFirst).toBe(true)
    expect(r.exit).toBe('SIGKILL')
    expect(await eventually(() => !alive(r.servePid), 10_000)).toBe(true)
  })
})
