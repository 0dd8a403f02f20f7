/**
 * Integration: `ocelog replay`'s paging (replayStream, src/cli/commands/replay.ts) over a real
 * SQLite log, into real Node streams: a reader that does not read holds the replay after one page
 * instead of the whole stream piling up in memory, and a reader that left (EPIPE) ends it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { REPLAY_PAGE, replayStream } from '../../src/cli/commands/replay.js'
import { Ingest } from '../../src/write/ingest.js'
import type { EventLog } from '../../src/ports/event-log.js'

/** Records in the stream: three and a half pages. */
const RECORDS = REPLAY_PAGE * 3 + REPLAY_PAGE / 2

let dir: string
let db: SqliteDatabase
let log: SqliteEventLog

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-replay-'))
  db = openDatabase(dir)
  log = new SqliteEventLog(db)
  const ingest = new Ingest(log)
  const ctx = { datasetId: 'ds1', keyId: 'k1', requestId: 'r1', receivedAt: '2024-01-01T00:00:00.000Z' }
  for (let i = 0; i < RECORDS; i += 100) {
    const events = Array.from({ length: 100 }, (_, j) => ({ event: 'Ship', objects: [{ type: 'order', id: `o-${String(i + j)}` }] }))
    const { failures } = await ingest.recordEvents(events, ctx)
    expect(failures).toEqual([])
  }
})

afterAll(async () => {
  await log.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The log, counting its stream reads (pages); `firstPage` settles when the first read has returned its page. */
function countingLog(): { log: Pick<EventLog, 'readStream'>; reads: () => number; firstPage: Promise<void> } {
  let reads = 0
  let firstRead: () => void = () => {}
  const firstPage = new Promise<void>((resolve) => {
    firstRead = resolve
  })
  return {
    log: {
      readStream: async (datasetId, after, maxCount) => {
        reads += 1
        const page = await log.readStream(datasetId, after, maxCount)
        firstRead()
        return page
      },
    },
    reads: () => reads,
    firstPage,
  }
}

/** A stream whose reader takes nothing until `release()`, then everything: a `| less` at rest, then paging on. */
function heldReader(): { out: Writable; lines: string[]; release: () => void } {
  const lines: string[] = []
  const held: Array<() => void> = []
  let released = false
  const out = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      // One write per line: replayStream writes each record's line whole.
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      if (released) callback()
      else held.push(() => callback())
    },
  })
  return {
    out,
    lines,
    release: () => {
      released = true
      for (const done of held.splice(0)) done()
    },
  }
}

/** Lets every pending promise callback run (one turn of the event loop): a replay that would read on reads now. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('replayStream', () => {
  it('reads no further page while the reader takes nothing, and writes every record once it reads', async () => {
    const { log: counted, reads, firstPage } = countingLog()
    const { out, lines, release } = heldReader()
    const replay = replayStream(counted, 'ds1', null, true, out)
    // The first page is read and written; the replay then either waits for the reader or reads on within this turn.
    await firstPage
    await settle()
    // One page is written (over the stream's high-water mark): the replay waits for it to drain.
    expect(out.writableNeedDrain).toBe(true)
    expect(reads()).toBe(1)
    release()
    expect(await replay).toBe(RECORDS)
    expect(reads()).toBe(4)
    const positions = lines.map((l) => (JSON.parse(l) as { position: number }).position)
    expect(positions).toHaveLength(RECORDS)
    expect(positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? Number.POSITIVE_INFINITY))).toBe(true)
    expect(positions).toEqual((await log.readStream('ds1', null, RECORDS + 1)).map((r) => r.position))
  })

  it('starts after --from and writes the text lines', async () => {
    const all = await log.readStream('ds1', null, 3)
    const { out, lines, release } = heldReader()
    release()
    expect(await replayStream(log, 'ds1', all[1]?.position ?? -1, false, out)).toBe(RECORDS - 2)
    expect(lines[0]).toMatch(new RegExp(`^\\s*${String(all[2]?.position)}  2\\d{3}-`))
  })

  it('stops at the first page after its reader left (EPIPE), reading no more of the log', async () => {
    const { log: counted, reads } = countingLog()
    const out = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))
      },
    })
    const errors: Error[] = []
    out.on('error', (error) => errors.push(error))
    expect(await replayStream(counted, 'ds1', null, false, out)).toBeNull()
    expect(reads()).toBe(1)
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['EPIPE'])
  })

  it('fails with the stream error when the reader fails otherwise', async () => {
    const out = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }))
      },
    })
    out.on('error', () => {})
    await expect(replayStream(log, 'ds1', null, false, out)).rejects.toThrow('no space left on device')
  })
})
