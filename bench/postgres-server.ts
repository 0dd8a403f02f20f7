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
 */
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
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
 * Starts a fresh server: initdb (no fsync while making it), then pg_ctl start on a free port,
 * listening on 127.0.0.1 only. `fsync` stays on: a test that crashes the server checks what a
 * commit promised.
 * @param settings server settings on top of the harness's (`-c name=value`), e.g. `shared_buffers`.
 * @throws when a binary is missing or the server does not start (with its log).
 */
export async function startPostgresServer(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const bin = postgresBinDir()
  if (bin === null) throw new Error(postgresUnavailableReason() ?? 'no PostgreSQL binaries')
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-pg-'))
  const data = join(dir, 'data')
  if (asRoot()) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    chownSync(dir, uid, gid)
  }
  runServerTool(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
  writeFileSync(join(data, 'pg_hba.conf'), HBA)
  const port = await freePort()
  const options = [
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
  const start = () => runServerTool(ctl, ['-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', options, 'start'], 90_000)
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
