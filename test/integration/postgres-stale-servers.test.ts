/**
 * The PostgreSQL harness sweeps what a killed run left (bench/postgres-server.ts, README § Tests): real
 * servers in a temp root of this file's own (so no other run's sweep races this one), one whose owner
 * pid is dead (a `node -e ""` that has exited) and one owned by this process. Starting the second
 * sweeps the first: its postmaster is gone and its folder removed, with one log line; the live one
 * is left running and answering, as are folders without an owner file that are young, and folders
 * that are not the harness's.
 */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type PostgresServer,
  postgresUnavailableReason,
  processAlive as alive,
  startPostgresServer,
  sweepStalePostgresServers,
} from '../helpers/postgres-server.js'

const reason = postgresUnavailableReason()
if (reason !== null) console.warn(`skipped: PostgreSQL stale servers: ${reason}`)

/** The pid of a process that existed and has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  const pid = child.pid
  if (pid === undefined) throw new Error('node -e "" got no pid')
  return pid
}

/** The postmaster's pid from the folder's `data/postmaster.pid` (first line). */
function postmasterPid(dir: string): number {
  return Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
}

/** A folder that looks like one of older code's (initdb ran, no owner file, no server), last touched `ageMs` ago. */
function ownerlessFolder(root: string, name: string, ageMs: number): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'data'), { recursive: true })
  writeFileSync(join(dir, 'data', 'PG_VERSION'), '15\n')
  const at = new Date(Date.now() - ageMs)
  for (const f of [join(dir, 'data', 'PG_VERSION'), join(dir, 'data'), dir]) utimesSync(f, at, at)
  return dir
}

/** The temp roots of this file (`ocelog-sweep-test-*`), each with the pid of the process that made it. */
const ROOT_PREFIX = 'ocelog-sweep-test-'

/**
 * Sweeps the roots that a killed run of this file left (owner gone), servers and all; the roots of
 * runs still going (other worktrees) are left alone.
 */
function sweepEarlierRoots(): void {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(ROOT_PREFIX))) {
    const dir = join(tmpdir(), name)
    if (!existsSync(join(dir, 'owner.pid'))) continue // being made, or not this file's
    if (alive(Number(readFileSync(join(dir, 'owner.pid'), 'utf8')))) continue
    sweepStalePostgresServers({ root: dir })
    rmSync(dir, { recursive: true, force: true })
  }
}

let root = ''
let stale: PostgresServer | undefined
let live: PostgresServer | undefined
let stalePostmaster = 0
let staleOwner = 0
const logged: string[] = []

beforeAll(async () => {
  if (reason !== null) return
  sweepEarlierRoots()
  root = mkdtempSync(join(tmpdir(), ROOT_PREFIX))
  writeFileSync(join(root, 'owner.pid'), String(process.pid))
  // The server runs as `postgres` when we are root: it must reach its folder under this root.
  chmodSync(root, 0o755)
  staleOwner = await deadPid()
  stale = await startPostgresServer({}, { root, ownerPid: staleOwner, log: (l) => logged.push(l) })
  stalePostmaster = postmasterPid(stale.dir)
}, 120_000)

afterAll(() => {
  // Whatever a failed assertion left: both servers stopped, the root removed.
  live?.remove()
  if (stale !== undefined && existsSync(stale.dir)) stale.remove()
  if (root !== '') rmSync(root, { recursive: true, force: true })
})

describe.skipIf(reason !== null)('stale PostgreSQL servers of the harness', () => {
  it('the next start stops a dead owner’s server and removes its folder, and leaves the rest alone', { timeout: 120_000 }, async () => {
    const staleDir = stale?.dir ?? ''
    expect(readFileSync(join(staleDir, 'owner.pid'), 'utf8')).toBe(`${String(staleOwner)}\n`)
    expect(alive(stalePostmaster)).toBe(true)
    const oldOwnerless = ownerlessFolder(root, 'ocelog-pg-Old001', 2 * 3600_000)
    const youngOwnerless = ownerlessFolder(root, 'ocelog-pg-New001', 60_000)
    const notOurs = ownerlessFolder(root, 'ocelog-pg-e2e-Abc001', 2 * 3600_000)

    live = await startPostgresServer({}, { root, log: (l) => logged.push(l) })

    expect(existsSync(staleDir)).toBe(false)
    expect(alive(stalePostmaster)).toBe(false)
    expect(existsSync(oldOwnerless)).toBe(false)
    expect(existsSync(youngOwnerless)).toBe(true)
    expect(existsSync(notOurs)).toBe(true)
    expect(logged.sort()).toEqual(
      [
        `postgres harness: swept ${staleDir} (owner pid ${String(staleOwner)} is gone)`,
        `postgres harness: swept ${oldOwnerless} (no owner file, no server, untouched for 120 min)`,
      ].sort(),
    )
  })

  it('a folder whose owner is alive is never swept, and its server keeps answering', { timeout: 60_000 }, async () => {
    const server = live
    if (server === undefined) throw new Error('the first test did not start the live server')
    expect(readFileSync(join(server.dir, 'owner.pid'), 'utf8')).toBe(`${String(process.pid)}\n`)
    const before = logged.length

    expect(sweepStalePostgresServers({ root, log: (l) => logged.push(l) })).toEqual([])

    expect(logged.length).toBe(before)
    expect(alive(postmasterPid(server.dir))).toBe(true)
    const client = new pg.Client({ connectionString: server.url() })
    await client.connect()
    try {
      const r = await client.query<{ one: number }>('SELECT 1 AS one')
      expect(r.rows).toEqual([{ one: 1 }])
    } finally {
      await client.end()
    }
  })
})
