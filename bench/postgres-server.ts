/**
 * A real PostgreSQL server for tests and the bench (bench/postgres.ts), from Debian's `postgresql-15` binaries: `initdb` into a temp
 * folder, `pg_ctl start` on a free port of 127.0.0.1 with its Unix socket in that folder (never
 * 5432, never the system's socket folder, so a server already running on the machine is left alone).
 * The server refuses to run as root, so as root it runs as the `postgres` user (`runuser`).
 *
 * Authentication (pg_hba.conf): the superuser `postgres` is trusted on the socket and on 127.0.0.1;
 * any other role must give its password (scram-sha-256), so a test can check what a wrong password does.
 *
 * One server per test run (test/helpers/postgres-global-setup.ts starts it and hands its URL to the
 * test files); each test file makes its own database with `createDatabase`. A test that stops the
 * server on purpose (`pg_ctl stop -m immediate`) starts its own with `startPostgresServer`, and so
 * does the bench, with settings of its own (`settings`).
 *
 * A run that is killed (Ctrl-C, a CI timeout) never stops its server, so each folder records the pid
 * of the process that started it (`owner.pid`), and every start first sweeps the folders whose owner
 * is gone (`sweepStalePostgresServers`).
 */
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './processes.js'

export interface PostgresServer {
  port: number
  /** The folder of the data directory, the log and the Unix socket. */
  dir: string
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (the trusted superuser). */
  url(database?: string): string
  /** Creates a database with this name (letters, digits, `_`) and returns its URL. */
  createDatabase(name: string): Promise<string>
  /** `pg_ctl stop -m <mode>`: `immediate` is a crash (no shutdown checkpoint), as `kill -9` of the postmaster. */
  stop(mode?: 'fast' | 'immediate'): void
  /** `pg_ctl start` again on the same port and data. */
  start(): void
  /** Stops the server (fast) and removes its folder. */
  remove(): void
}

/** Where the binaries are: OCELOG_PG_BIN, else the newest /usr/lib/postgresql/<major>/bin with initdb. */
export function postgresBinDir(): string | null {
  const fromEnv = process.env.OCELOG_PG_BIN
  if (fromEnv !== undefined && fromEnv !== '') return existsSync(join(fromEnv, 'initdb')) ? fromEnv : null
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const majors = readdirSync(root)
    .filter((d) => /^\d+$/.test(d) && existsSync(join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  const newest = majors[0]
  return newest === undefined ? null : join(root, newest, 'bin')
}

/** Why a PostgreSQL server cannot be started here, or null when it can. */
export function postgresUnavailableReason(): string | null {
  if (postgresBinDir() === null) return 'no PostgreSQL server binaries (apt-get install postgresql-15, or set OCELOG_PG_BIN)'
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres'], { stdio: 'ignore' }).status !== 0)
    return 'running as root and there is no `postgres` user to run the server as'
  return null
}

const asRoot = (): boolean => process.getuid?.() === 0

/** The harness's folders under the temp dir: `ocelog-pg-` and the six characters of `mkdtemp`. */
const FOLDER_PREFIX = 'ocelog-pg-'
const FOLDER_NAME = /^ocelog-pg-[A-Za-z0-9]{6}$/
/** The file in a harness folder that holds its owner's pid (decimal, one line). */
const OWNER_FILE = 'owner.pid'
/** A folder without an owner file whose server runs counts as stale after this long (ms). */
const OWNERLESS_RUNNING_MAX_AGE_MS = 6 * 3600_000
/** A folder without an owner file whose server does not run counts as stale once untouched this long (ms). */
const OWNERLESS_IDLE_MAX_AGE_MS = 3600_000

/** Runs a server binary, as `postgres` when we are root; throws with its output when it fails. */
function runServerTool(bin: string, args: string[], timeoutMs = 60_000): void {
  const command = asRoot() ? 'runuser' : bin
  const argv = asRoot() ? ['-u', 'postgres', '--', bin, ...args] : args
  const r = spawnSync(command, argv, { encoding: 'utf8', timeout: timeoutMs, cwd: '/' })
  if (r.status !== 0)
    throw new Error(`${bin} ${args.join(' ')} failed (${String(r.status ?? r.signal)}): ${(r.stderr || r.stdout || String(r.error)).slice(-2000)}`)
}

const HBA = `# Written by test/helpers/postgres-server.ts
local all postgres trust
host  all postgres 127.0.0.1/32 trust
local all all scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
`

/**
 * Whether process `pid` exists and is not a zombie (`kill(pid, 0)`: ESRCH is gone, EPERM is alive);
 * false for what is not a positive integer (README § Tests).
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    // A postmaster whose parent (pg_ctl) is gone may wait as a zombie for a reaper that never comes.
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z'
  } catch {
    return true
  }
}

/** The lines of a file, or null when it cannot be read. */
function lines(file: string): string[] | null {
  try {
    return readFileSync(file, 'utf8').split('\n')
  } catch {
    return null
  }
}

/** A positive integer written alone on a line, or null. */
function positiveInt(line: string | undefined): number | null {
  const n = Number(line?.trim())
  return Number.isSafeInteger(n) && n > 0 ? n : null
}

/**
 * The postmaster of a harness folder and when it started (ms since the epoch), from
 * `data/postmaster.pid` (line 1 the pid, line 3 the start time in s), or null when none runs:
 * no such file, or its pid is gone, or that pid is now another program (not a `postgres -D <data>`).
 */
function runningPostmaster(dir: string): { pid: number; startedMs: number } | null {
  const data = join(dir, 'data')
  const pidFile = lines(join(data, 'postmaster.pid'))
  const pid = positiveInt(pidFile?.[0])
  if (pidFile === null || pid === null || !processAlive(pid)) return null
  try {
    // NUL-separated argv, or one line once a process rewrites its title.
    const cmdline = readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').replaceAll('\0', ' ')
    if (!cmdline.includes(data)) return null
  } catch {
    // no /proc: the pid file and a live pid are what there is
  }
  return { pid, startedMs: (positiveInt(pidFile[2]) ?? 0) * 1000 }
}

/**
 * Why a harness folder is stale (a sentence), or null when it must be left alone.
 * - With an owner file: stale when the owner pid is gone (`kill(pid, 0)` gives ESRCH, or a zombie);
 *   a live owner, or one we may not signal (EPERM), keeps it, whatever its age (a pid the system
 *   gave again to another process keeps it too: the safe side).
 * - Without one (made before owner files, or by a run that died between mkdtemp and writing it):
 *   only folders that `initdb` filled (`data/PG_VERSION`) count, and they are stale when their
 *   server runs since more than 6 hours, or runs not and nothing in the folder (the folder, `data`,
 *   `server.log`) changed for an hour: a run of older code in another worktree may be in `initdb`
 *   or have stopped its server on purpose for a moment, and its tests last minutes.
 */
function staleReason(dir: string, nowMs: number): string | null {
  const ownerLines = lines(join(dir, OWNER_FILE))
  if (ownerLines !== null) {
    const owner = positiveInt(ownerLines[0])
    if (owner === null) return null
    return processAlive(owner) ? null : `owner pid ${String(owner)} is gone`
  }
  if (!existsSync(join(dir, 'data', 'PG_VERSION'))) return null
  const postmaster = runningPostmaster(dir)
  if (postmaster !== null) {
    const ageMs = nowMs - postmaster.startedMs
    return ageMs > OWNERLESS_RUNNING_MAX_AGE_MS ? `no owner file, server running for ${String(Math.round(ageMs / 3600_000))} h` : null
  }
  const touched = [dir, join(dir, 'data'), join(dir, 'server.log')].map((f) => {
    try {
      return statSync(f).mtimeMs
    } catch {
      return 0
    }
  })
  const idleMs = nowMs - Math.max(...touched)
  return idleMs > OWNERLESS_IDLE_MAX_AGE_MS ? `no owner file, no server, untouched for ${String(Math.round(idleMs / 60_000))} min` : null
}

/** Blocks the thread for `ms` milliseconds (the sweep is synchronous, as the harness's other tools). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Stops the server of a harness folder if one runs: `pg_ctl stop -m immediate` (as `postgres` when
 * we are root), else SIGQUIT to the postmaster (PostgreSQL's immediate shutdown), then SIGKILL.
 * @throws Error when the postmaster is still alive after all that.
 */
function stopStaleServer(dir: string): void {
  const bin = postgresBinDir()
  if (runningPostmaster(dir) === null) return
  if (bin !== null) {
    try {
      runServerTool(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-w', '-t', '30', '-m', 'immediate', 'stop'])
    } catch {
      // a damaged data dir or no binaries of its major: signal the postmaster below
    }
  }
  for (const signal of ['SIGQUIT', 'SIGKILL'] as const) {
    const postmaster = runningPostmaster(dir)
    if (postmaster === null) return
    try {
      process.kill(postmaster.pid, signal)
    } catch {
      // gone meanwhile
    }
    for (let waited = 0; waited < 10_000 && runningPostmaster(dir) !== null; waited += 100) sleepSync(100)
  }
  const left = runningPostmaster(dir)
  if (left !== null) throw new Error(`postmaster ${String(left.pid)} of ${dir} does not stop`)
}

export interface SweepOptions {
  /** The folder that holds the harness's folders (default: the system temp dir, `os.tmpdir()`). */
  root?: string
  /** Where the one line per swept (or unsweepable) folder goes (default: console.warn). */
  log?: (line: string) => void
}

/**
 * Stops the servers of the harness folders (`<root>/ocelog-pg-XXXXXX`) that a killed run left
 * behind and removes those folders; called by `startPostgresServer` before it makes its own. Which
 * folders are stale is the rule of `staleReason`: with an owner file, exactly those whose owner pid
 * is gone, so the servers of runs still going (other worktrees, the bench) are never touched; without
 * one, only when the server runs for more than 6 hours or none runs and the folder is untouched for
 * an hour. Logs one line per folder swept, and one per folder it could not sweep (then goes on).
 * Synchronous: it may wait up to about 50 s on a server that will not stop (README § Tests).
 * @returns the folders removed.
 */
export function sweepStalePostgresServers(options: SweepOptions = {}): string[] {
  const root = options.root ?? tmpdir()
  const log = options.log ?? ((line: string) => console.warn(line))
  let names: string[]
  try {
    names = readdirSync(root)
  } catch {
    return []
  }
  const swept: string[] = []
  const nowMs = Date.now()
  for (const name of names.filter((n) => FOLDER_NAME.test(n))) {
    const dir = join(root, name)
    const why = staleReason(dir, nowMs)
    if (why === null) continue
    try {
      stopStaleServer(dir)
      rmSync(dir, { recursive: true, force: true })
      swept.push(dir)
      log(`postgres harness: swept ${dir} (${why})`)
    } catch (error) {
      log(`postgres harness: could not sweep ${dir} (${why}): ${(error as Error).message}`)
    }
  }
  return swept
}

export interface StartOptions {
  /** The pid recorded as the folder's owner (default: this process); the sweep removes the folder once it is gone. */
  ownerPid?: number
  /** Where the server's folder is made, and swept first (default: the system temp dir). */
  root?: string
  /** The sweep's log (`SweepOptions.log`). */
  log?: (line: string) => void
}

/**
 * Starts a fresh server: first sweeps what killed runs left (`sweepStalePostgresServers`), then a
 * folder `<root>/ocelog-pg-XXXXXX` with the owner's pid in `owner.pid`, initdb (no fsync while
 * making it), then pg_ctl start on a free port, listening on 127.0.0.1 only. `fsync` stays on: a
 * test that crashes the server checks what a commit promised (README § Tests).
 * @param settings server settings on top of the harness's (`-c name=value`), e.g. `shared_buffers`.
 * @throws when a binary is missing or the server does not start (with its log).
 */
export async function startPostgresServer(settings: Record<string, string> = {}, options: StartOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir()
  if (bin === null) throw new Error(postgresUnavailableReason() ?? 'no PostgreSQL binaries')
  const root = options.root ?? tmpdir()
  sweepStalePostgresServers({ root, log: options.log })
  const dir = mkdtempSync(join(root, FOLDER_PREFIX))
  writeFileSync(join(dir, OWNER_FILE), `${String(options.ownerPid ?? process.pid)}\n`)
  const data = join(dir, 'data')
  if (asRoot()) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    chownSync(dir, uid, gid)
  }
  runServerTool(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
  writeFileSync(join(data, 'pg_hba.conf'), HBA)
  const port = await freePort()
  const serverOptions = [
    `-k ${dir}`,
    `-p ${String(port)}`,
    '-c listen_addresses=127.0.0.1',
    '-c max_connections=200',
    '-c shared_buffers=64MB',
    // Tests make and drop many databases and connections; keep the server's own logging quiet.
    '-c log_min_messages=warning',
    ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ')
  const ctl = join(bin, 'pg_ctl')
  const start = () => runServerTool(ctl, ['-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', serverOptions, 'start'], 90_000)
  start()
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${String(port)}/${database}`
  return {
    port,
    dir,
    url,
    async createDatabase(name: string): Promise<string> {
      if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`database name ${name}: letters, digits and _ only`)
      const client = new pg.Client({ connectionString: url() })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return url(name)
    },
    stop(mode: 'fast' | 'immediate' = 'fast') {
      runServerTool(ctl, ['-D', data, '-w', '-t', '60', '-m', mode, 'stop'])
    },
    start,
    remove() {
      try {
        runServerTool(ctl, ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop'])
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A database name for a test file: `t_<what>_<random>`, unique on a shared server. */
export function testDatabaseName(what: string): string {
  return `t_${what.toLowerCase().replace(/[^a-z0-9]+/g, '_')}_${Math.random().toString(36).slice(2, 8)}`
}
