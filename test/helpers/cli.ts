/** Runs the built `ocelog` CLI (dist/) as a real process, for e2e tests. */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)

/** Path of the built CLI entry. */
export const CLI = join(process.cwd(), 'dist/src/cli/main.js')

/** Throws a clear message when dist/ has not been built (npm test builds it first). */
export function requireBuild(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does it)`)
}

export interface CliResult {
  /** Exit code (0 on success). */
  code: number
  stdout: string
  stderr: string
}

/** The environment of a CLI run: this process's, with OCELOG_DATA_DIR = `dataDir`, LOG_LEVEL=warn, and `extraEnv` on top. */
function cliEnv(dataDir: string, extraEnv: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, OCELOG_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv }
}

/**
 * Runs `ocelog <args>` with OCELOG_DATA_DIR = `dataDir`, LOG_LEVEL=warn, and `extraEnv` on top of this
 * process's environment. Never rejects for a non-zero exit: the code is in the result.
 */
export async function runCli(dataDir: string, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], {
      env: cliEnv(dataDir, extraEnv),
      maxBuffer: 256 * 1024 * 1024,
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

/**
 * Runs `ocelog <args>` as runCli does and returns its stdout.
 * @throws Error naming the command, its exit code and its stderr when it exits non-zero.
 */
export async function runCliOk(dataDir: string, args: string[]): Promise<string> {
  const r = await runCli(dataDir, args)
  if (r.code !== 0) throw new Error(`ocelog ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}`)
  return r.stdout
}

/**
 * Runs `ocelog <args>` as runCli does, with a reader of its stdout that leaves at once (the shell's
 * `ocelog … | head -c 0`): the read end of the pipe is closed before the command writes, so its
 * first write to stdout meets EPIPE. Resolves with the exit code and everything on stderr.
 */
export async function runCliReaderLeaves(dataDir: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cliEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.destroy()
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)))
  return { code, stderr }
}

/** A CLI command left running (spawnCli): its process, its log's JSON lines so far, its stderr so far, and its exit code. */
export interface RunningCli {
  child: ChildProcess
  /** The pino lines on stdout so far, parsed: `msg`, and `runner` on a projector worker's own lines. */
  lines(): Array<{ msg: string; runner?: string }>
  stderr(): string
  exited: Promise<number | null>
}

/**
 * Starts `ocelog <args>` as runCli does, with LOG_LEVEL=info (the log on stdout, for `lines`) and
 * `extraEnv` on top, and leaves it running: for a command that follows the log (`ocelog project`).
 * Stop it with `child.kill('SIGTERM')` and await `exited`.
 */
export function spawnCli(dataDir: string, args: string[], extraEnv: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(dataDir, { LOG_LEVEL: 'info', ...extraEnv }), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; runner?: string })
  return { child, lines, stderr: () => stderr, exited }
}
