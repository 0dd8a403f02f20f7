/**
 * e2e (README § Operations, a damaged file): a damaged log (`ocelog.db`) is never touched by the
 * service. Damaged in its header or in its middle, the service refuses to start with a message that
 * names the file, SQLite's error and the way back, and `ocelog verify` names the problem and exits 1.
 */
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { exited, spawnServe } from '../helpers/serve-process.js'
import { type RunningService, startService } from '../helpers/service.js'

let pristine: string
let work: string

beforeAll(async () => {
  const service: RunningService = await startService({ env: { OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' } })
  work = mkdtempSync(join(tmpdir(), 'ocelog-log-damaged-'))
  pristine = join(work, 'pristine.db')
  try {
    const { key } = await service.createKey({ name: 'damage' })
    for (let b = 0; b < 20; b++) {
      const res = await fetch(`${service.url}/v1/event/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          events: Array.from({ length: 100 }, (_, i) => ({
            event: 'Pick',
            timestamp: '2024-05-01T08:00:00Z',
            objects: [{ type: 'order', id: `o-${String(b)}-${String(i)}` }],
            properties: { text: 'z'.repeat(200) },
          })),
        }),
      })
      expect(res.status).toBe(200)
    }
    const backup = await service.cli(['backup', '--out', pristine])
    expect(backup.code, backup.stderr).toBe(0)
  } finally {
    await service.stop()
  }
}, 120_000)
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A data dir holding a copy of the log with `bytes` bytes overwritten at `offset`. */
function damagedDir(name: string, offset: (size: number) => number, bytes: number): string {
  const dir = join(work, name)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir)
  const file = join(dir, 'ocelog.db')
  copyFileSync(pristine, file)
  const fd = openSync(file, 'r+')
  try {
    writeSync(fd, Buffer.alloc(bytes, 0x5a), 0, bytes, offset(statSync(file).size))
  } finally {
    closeSync(fd)
  }
  return dir
}

/** `ocelog serve` on `dir`: its exit code and stderr (it must not start). */
async function serveRefuses(dir: string): Promise<{ code: NodeJS.Signals | number | null; stderr: string }> {
  const child = spawnServe({ ...process.env, OCELOG_DATA_DIR: dir, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await exited(child)
  clearTimeout(timer)
  return { code, stderr }
}

interface VerifyReport {
  ok: boolean
  checks: { check: string; ok: boolean; detail: string; position?: number; table?: string }[]
}

describe('a damaged ocelog.db', () => {
  it('in its header: the service refuses to start naming the file, the error and the way back; verify names the problem', async () => {
    const dir = damagedDir('header', () => 0, 100)
    const refused = await serveRefuses(dir)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`cannot open the log ${join(dir, 'ocelog.db')}`)
    expect(refused.stderr).toContain('SQLITE_NOTADB')
    expect(refused.stderr).toContain('ocelog verify')
    expect(refused.stderr).toContain('ocelog restore')
    const verify = await runCli(dir, ['verify', '--json'])
    expect(verify.code).toBe(1)
    const report = JSON.parse(verify.stdout) as VerifyReport
    expect(report.ok).toBe(false)
    expect(report.checks[0]).toMatchObject({ ok: false })
    expect(report.checks[0]?.detail).toContain('SQLITE_NOTADB')
    // The file is never changed: its damaged bytes are still there.
    expect(statSync(join(dir, 'ocelog.db')).size).toBe(statSync(pristine).size)
  }, 60_000)

  it('in its middle: the service refuses to start; verify names the first problem', async () => {
    const dir = damagedDir('middle', (size) => Math.floor(size / 2 / 4096) * 4096, 4096 * 4)
    const refused = await serveRefuses(dir)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('cannot open the log')
    expect(refused.stderr).toMatch(/quick_check|SQLITE_CORRUPT/)
    const verify = await runCli(dir, ['verify', '--json'])
    expect(verify.code).toBe(1)
    const report = JSON.parse(verify.stdout) as VerifyReport
    const bad = report.checks.find((c) => !c.ok)
    expect(bad?.check).toMatch(/integrity_check|records/)
    expect(bad?.detail.length).toBeGreaterThan(0)
  }, 60_000)

  it('an intact copy verifies', async () => {
    const dir = damagedDir('intact', () => 0, 0)
    const verify = await runCli(dir, ['verify', '--json'])
    expect(verify.code, verify.stdout).toBe(0)
    expect((JSON.parse(verify.stdout) as VerifyReport).checks.map((c) => c.check)).toEqual(['integrity_check', 'records', 'read models', 'read models'])
  }, 60_000)
})
