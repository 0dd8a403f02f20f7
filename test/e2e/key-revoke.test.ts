/**
 * e2e: `ocelog keys revoke` run beside the built service (two processes on one ocelog.db) takes
 * effect on the service's next request (README § CLI: "401 from then on"; docs/api.md#authentication-and-scopes).
 * The service keeps the keys it has found and checks SQLite's data_version at most once per turn of its event loop
 * (src/adapters/sqlite/log/sqlite-key-store.ts); this proves the check across processes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCliOk } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { exited, spawnServe, waitUntilUp } from '../helpers/serve-process.js'

let dataDir: string
let port: number

const cli = (args: string[]): Promise<string> => runCliOk(dataDir, args)

async function createKey(name: string): Promise<{ key: string; key_id: string }> {
  return JSON.parse(await cli(['keys', 'create', '--name', name, '--json'])) as { key: string; key_id: string }
}

async function health(key: string): Promise<{ status: number; detail?: string }> {
  const res = await fetch(`http://127.0.0.1:${String(port)}/v1/health`, { headers: { authorization: `Bearer ${key}` } })
  const body = (await res.json()) as { detail?: string }
  return res.status === 200 ? { status: 200 } : { status: res.status, detail: body.detail ?? '' }
}

beforeAll(() => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-e2e-revoke-'))
})
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
})

describe('keys changed by the CLI while the service runs', () => {
  it('answers 401 on the first request after `ocelog keys revoke`, and accepts a key created meanwhile', async () => {
    port = await freePort()
    const revoked = await createKey('to revoke')
    const service = spawnServe({ ...process.env, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
    try {
      await waitUntilUp(port, revoked.key)
      // Several requests, so that the service has its key in memory when the revoke comes.
      for (let i = 0; i < 3; i++) expect(await health(revoked.key)).toEqual({ status: 200 })

      await cli(['keys', 'revoke', revoked.key_id])
      const after = await health(revoked.key)
      expect(after.status).toBe(401)
      expect(after.detail).toContain(`API key ${revoked.key_id} was revoked at`)

      const fresh = await createKey('created while serving')
      expect(await health(fresh.key)).toEqual({ status: 200 })
    } finally {
      service.kill('SIGTERM')
      await exited(service)
    }
  }, 30_000)
})
