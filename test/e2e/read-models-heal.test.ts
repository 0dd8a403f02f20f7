/**
 * e2e (README § Operations, a damaged file): the built service heals a damaged read-models.db by
 * itself. Damaged in its header before a start, or in its middle while the service runs, the file
 * is moved aside (`read-models.db.corrupt-<time>`) and rebuilt from the log; reads answer 503 with
 * Retry-After and the rebuild's progress meanwhile, then the same answers as before; never 500.
 * Ingest goes on throughout.
 */
import type { ChildProcess } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCliOk } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { exited, type LoggedServe, startLogged } from '../helpers/serve-process.js'

let dataDir: string
let port: number
let env: NodeJS.ProcessEnv
let key: string

const cli = (args: string[]): Promise<string> => runCliOk(dataDir, args)
const base = (): string => `http://127.0.0.1:${String(port)}`

const start = (): Promise<LoggedServe> => startLogged(env, port, key)

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  expect(await exited(child)).toBe(0)
}

async function postBatch(b: number): Promise<void> {
  const res = await fetch(`${base()}/v1/event/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      events: Array.from({ length: 100 }, (_, i) => ({
        event: i % 3 === 0 ? 'Create Order' : 'Pick Item',
        timestamp: new Date(Date.UTC(2024, 4, 1, 8, b % 60, i % 60)).toISOString(),
        objects: [
          { type: 'order', id: `o-${String(b)}-${String(i % 10)}`, properties: { note: 'x'.repeat(200) } },
          { type: 'item', id: `i-${String(b)}-${String(i)}` },
        ],
        properties: { batch: b, text: 'y'.repeat(300) },
      })),
    }),
  })
  expect(res.status).toBe(200)
}

interface Answer {
  status: number
  retryAfter: string | null
  body: { events?: number; rebuild?: { position: number; head: number } }
}

async function summary(): Promise<Answer> {
  const res = await fetch(`${base()}/v1/process/summary`, { headers: { authorization: `Bearer ${key}` } })
  const body = (await res.json()) as Answer['body']
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body }
}

/** Reads until the summary counts `events`, bounded to 60 s; returns every status seen, and the 503 answers. */
async function readUntil(events: number): Promise<{ statuses: Set<number>; unavailable: Answer[] }> {
  const statuses = new Set<number>()
  const unavailable: Answer[] = []
  const deadline = Date.now() + 60_000
  for (let i = 0; i < 3000 && Date.now() < deadline; i++) {
    // The map reads every E2O row: every page of the file.
    const map = await fetch(`${base()}/v1/process/map`, { headers: { authorization: `Bearer ${key}` } })
    statuses.add(map.status)
    await map.arrayBuffer()
    const answer = await summary()
    statuses.add(answer.status)
    if (answer.status === 503) unavailable.push(answer)
    if (answer.status === 200 && answer.body.events === events) return { statuses, unavailable }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`summary never counted ${String(events)} events; statuses ${[...statuses].join(', ')}`)
}

/** The page numbers (1-based) of the index `rm_objects_by_type_id` in read-models.db, and the file's page size in bytes. */
function identityIndexPages(): { pages: number[]; size: number } {
  const db = new Database(join(dataDir, 'read-models.db'), { readonly: true })
  try {
    const size = Number(db.pragma('page_size', { simple: true }))
    const pages = db.prepare<[], number>("SELECT pageno FROM dbstat WHERE name = 'rm_objects_by_type_id'").pluck().all()
    return { pages, size }
  } finally {
    db.close()
  }
}

function corruptFiles(): string[] {
  return readdirSync(dataDir).filter((n) => /^read-models\.db\.corrupt-\d{8}T\d{9}Z$/.test(n))
}

function overwrite(path: string, offset: number, bytes: number): void {
  const fd = openSync(path, 'r+')
  try {
    writeSync(fd, Buffer.alloc(bytes, 0xa5), 0, bytes, offset)
  } finally {
    closeSync(fd)
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${base()}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return Number(line?.split(' ')[1])
}

beforeAll(async () => {
  requireBuild()
  dataDir = mkdtempSync(join(tmpdir(), 'ocelog-read-models-heal-'))
  port = await freePort()
  env = { ...process.env, OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', OCELOG_RATE_LIMIT_PER_MINUTE: '1000000' }
  key = (JSON.parse(await cli(['keys', 'create', '--name', 'heal', '--json'])) as { key: string }).key
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('a damaged read-models.db', () => {
  it('is moved aside and rebuilt from the log when it is damaged in its middle while the service runs; reads answer 503, then the same counts, never 500', async () => {
    const service = await start()
    try {
      for (let b = 0; b < 30; b++) await postBatch(b)
      await readUntil(3000)
      // Bring the projector's WAL into the file, so the damage lands on pages that hold rows.
      const rm = new Database(join(dataDir, 'read-models.db'))
      rm.pragma('wal_checkpoint(TRUNCATE)')
      rm.close()
      const size = statSync(join(dataDir, 'read-models.db')).size
      expect(size).toBeGreaterThan(1_000_000)
      // Damage every page of the objects' identity index, which the projector reads for the next batch's objects: pages in the
      // file's middle, wherever the page size puts them (dbstat: sqlite.org/dbstat.html).
      const pages = identityIndexPages()
      expect(pages.pages.length).toBeGreaterThan(0)
      for (const page of pages.pages) overwrite(join(dataDir, 'read-models.db'), (page - 1) * pages.size, pages.size)
      // A write by the projector makes every connection read the file again.
      await postBatch(30)
      const { statuses, unavailable } = await readUntil(3100)
      expect(unavailable.length).toBeGreaterThan(0)
      expect(statuses.has(500)).toBe(false)
      expect([...statuses].every((s) => s === 200 || s === 503)).toBe(true)
      expect(corruptFiles()).toHaveLength(1)
      for (const a of unavailable) {
        expect(a.retryAfter).toBe('5')
        expect(a.body.rebuild?.head).toBeGreaterThanOrEqual(a.body.rebuild?.position ?? -1)
      }
      expect(service.lines()).toContain("the read models' files are damaged")
      expect(await metric('ocelog_read_models_recovered_total')).toBe(1)
      // Ingest was never affected: the log holds every acknowledged event.
      expect(JSON.parse(await cli(['status', '--json'])) as { head: number }).toMatchObject({ head: 3100 })
    } finally {
      await stop(service.child)
    }
  }, 180_000)

  it('is moved aside and rebuilt at start when its header is damaged; reads answer the same counts, never 500', async () => {
    for (const name of corruptFiles()) rmSync(join(dataDir, name))
    overwrite(join(dataDir, 'read-models.db'), 0, 100)
    const service = await start()
    try {
      const { statuses } = await readUntil(3100)
      expect(statuses.has(500)).toBe(false)
      expect(corruptFiles()).toHaveLength(1)
      expect(service.lines()).toContain("the read models' files were damaged")
      expect(await metric('ocelog_read_models_recovered_total')).toBe(1)
    } finally {
      await stop(service.child)
    }
  }, 120_000)
})
