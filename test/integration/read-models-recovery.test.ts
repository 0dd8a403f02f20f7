/**
 * Integration (README § Operations, a damaged file): read-models.db healing itself, in process over
 * real files. A file damaged in its header is moved aside at open and made anew; HealingReadModels
 * answers ReadModelsRebuildingError (with the progress) from the moment damage is reported until a
 * projector has rebuilt the new file up to the log's head of that moment, then answers again; the
 * log is never touched.
 */
import { closeSync, existsSync, openSync, readdirSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HealingReadModels, moveReadModelsAside, openCheckedReadModels } from '../../src/adapters/sqlite/read-models/read-models-recovery.js'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { ReadModelsRebuildingError } from '../../src/core/errors.js'
import { lowestCheckpoint, projectorCheckpoints } from '../../src/projector/checkpoints.js'
import { Projector } from '../../src/projector/runner.js'
import { eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let f: SqliteFixture
let ds: string

beforeEach(async () => {
  f = openSqliteFixture('ocelog-read-models-recovery-')
  ds = freshDatasetId()
  for (let i = 0; i < 30; i++) await f.log.append(ds, [eventRecord(ds, 'Pick', [{ type: 'order', id: `o${String(i % 4)}` }])], [])
})
afterEach(() => f.close())

/** Catches read models up with the log through a store of their own connection `db`, closed after. */
async function catchUpOn(db: SqliteDatabase): Promise<void> {
  const store = new SqliteReadModelStore(db)
  try {
    await new Projector(f.log, store).catchUp()
  } finally {
    await store.close()
  }
}

const aside = (): string[] => readdirSync(f.dir).filter((n) => n.startsWith('read-models.db.corrupt-'))

describe('openCheckedReadModels', () => {
  it('moves a file damaged in its header aside, with its -wal and -shm, and makes it anew', () => {
    f.rmDb.close()
    const fd = openSync(join(f.dir, 'read-models.db'), 'r+')
    writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0)
    closeSync(fd)
    const file = openCheckedReadModels(f.dir)
    try {
      expect(file.damaged?.error).toContain('SQLITE_NOTADB')
      expect(file.damaged?.movedTo).toMatch(/read-models\.db\.corrupt-\d{8}T\d{9}Z$/)
      expect(file.made).toContain("the read models' files were damaged")
      expect(aside()).toEqual([file.damaged?.movedTo.split('/').pop()])
      expect(existsSync(join(f.dir, 'ocelog.db'))).toBe(true)
    } finally {
      file.db.close()
      f.rmDb = file.db
    }
  })

  it('leaves an intact file in place', () => {
    const file = openCheckedReadModels(f.dir)
    expect(file.damaged).toBeNull()
    file.db.close()
    expect(aside()).toEqual([])
  })
})

describe('moveReadModelsAside', () => {
  it('names the moved file after the time, without colons', () => {
    expect(moveReadModelsAside(f.dir, new Date('2026-11-26T10:15:00.123Z'))).toBe(join(f.dir, 'read-models.db.corrupt-20261126T101500123Z'))
  })
})

describe('HealingReadModels', () => {
  it('answers ReadModelsRebuildingError with the progress from a reported damage until the new file is rebuilt up to the head, then the counts', async () => {
    f.rmDb.close()
    const healing = new HealingReadModels(
      f.dir,
      openCheckedReadModels(f.dir),
      () => f.log.lastPosition(),
      async (store) => lowestCheckpoint(await store.projections(), projectorCheckpoints()),
    )
    const paused: string[] = []
    healing.writers = { pause: async () => void paused.push('pause'), resume: () => void paused.push('resume') }
    try {
      await catchUpOn(healing.database)
      expect((await healing.query.summary(ds)).events).toBe(30)
      const head = (await f.log.lastPosition()) ?? 0

      healing.damaged(new Error('SQLITE_CORRUPT: database disk image is malformed'))
      const during = await healing.query.summary(ds).catch((e: unknown) => e)
      expect(during).toBeInstanceOf(ReadModelsRebuildingError)
      // Once moved aside and made anew (the writers paused, then resumed), the new file is empty.
      for (let i = 0; i < 100 && paused.length < 2; i++) await new Promise((r) => setTimeout(r, 10))
      expect(paused).toEqual(['pause', 'resume'])
      expect(aside()).toHaveLength(1)
      expect(healing.recovered).toBe(1)
      const empty = await healing.query.summary(ds).catch((e: unknown) => e)
      expect(empty).toMatchObject({ kind: 'read_models_rebuilding', position: 0, head })

      // The projector (here in process) rebuilds the new file from the log.
      await catchUpOn(healing.database)
      expect((await healing.query.summary(ds)).events).toBe(30)
      expect(await healing.progress()).toBeNull()
    } finally {
      f.rmDb = healing.database
    }
  })
})
