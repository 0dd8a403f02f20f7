/**
 * The projector's failure path on a real SQLite file: a record that cannot be applied (a poison
 * record, made here by a trigger that refuses one event type) is retried with doubling waits, then
 * its projection stops, naming the record; an engine that is away (a write lock held by another
 * connection) is waited out without limit. Waits go through an injected `sleep` that records them.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { datasetHash, Projector, type ProjectorOptions } from '../../src/projector/runner.js'
import type { SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import type { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { sqliteRows } from '../helpers/read-model-rows.js'
import { isSqliteUnavailable } from '../../src/adapters/sqlite/unavailable.js'
import { ProjectionStoppedError } from '../../src/core/errors.js'
import { PROJECTION_NAMES } from '../../src/core/read-model-changes.js'
import type { Ingest } from '../../src/write/ingest.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'

let fx: SqliteFixture
let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
let log: SqliteEventLog
let store: SqliteReadModelStore
/** The read models' rows, as `apply` wrote them. */
let rows: ReturnType<typeof sqliteRows>
let ingest: Ingest

beforeEach(() => {
  fx = openSqliteFixture('ocelog-projector-failure-', { pollMs: 10 })
  ;({ dir, db, rmDb, log, store, ingest } = fx)
  rows = sqliteRows(rmDb)
  // A poison record: applying an event of type "Poison" fails, deterministically, in the store.
  rmDb.exec(`CREATE TRIGGER poison BEFORE INSERT ON rm_events WHEN NEW.event_type_id = (SELECT nid FROM rm_names WHERE name = 'Poison')
           BEGIN SELECT RAISE(ABORT, 'poisoned event type'); END`)
})
afterEach(() => fx.close())

/** Appends one event per name to `datasetId`'s stream; returns their positions. */
async function events(datasetId: string, ...names: string[]): Promise<number[]> {
  const before = (await log.lastPosition()) ?? 0
  await ingest.recordEvents(
    names.map((event, i) => ({ event, timestamp: '2024-01-01T10:00:00Z', objects: [{ type: 'order', id: `o${String(i)}` }] })),
    testContext(datasetId),
  )
  return names.map((_, i) => before + i + 1)
}

/** A sleep that waits for nothing and records each wait (ms). */
function recordingSleep(): { waits: number[]; sleep: NonNullable<ProjectorOptions['sleep']> } {
  const waits: number[] = []
  return { waits, sleep: async (ms) => void waits.push(ms) }
}

/** A pino logger whose lines (parsed) land in `lines`. */
function memoryLogger() {
  const lines: { level: number; msg: string; position?: number; stream?: string }[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { lines, logger }
}

/** Waits (polling) until `projector` applied `position`, or gives up after 10 s. */
async function until(projector: Projector, position: number): Promise<void> {
  const deadline = Date.now() + 10_000
  while ((projector.position ?? 0) < position && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
}

describe('Projector.run on a record it cannot apply', () => {
  it('retries it with doubling waits, then stops that projection naming the record’s position, stream and cause', async () => {
    const [, poison] = await events('ds1', 'Create Order', 'Poison', 'Ship Order')
    const { waits, sleep } = recordingSleep()
    const { lines, logger } = memoryLogger()
    const projector = new Projector(log, store, { sleep, logger, settleMs: 0 })
    const stopped = await projector.run(new AbortController().signal)

    expect(waits).toEqual([100, 200, 400, 800])
    expect(stopped).toBeInstanceOf(ProjectionStoppedError)
    expect(stopped?.stop).toEqual({
      projection: 'read-models',
      position: poison,
      stream: 'dataset-ds1',
      cause: 'poisoned event type',
      attempts: 5,
      stopped_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    expect(projector.stopped).toBe(stopped)
    // The record before the poison one is applied; nothing after it.
    expect([await store.checkpoint('events'), (await rows('ds1')).events.map((e) => e.event_type)]).toEqual([(poison ?? 0) - 1, ['Create Order']])
    const last = lines[lines.length - 1]
    expect([last?.level, last?.msg, last?.position, last?.stream]).toEqual([50, stopped?.message, poison, 'dataset-ds1'])
  })

  it('records the stop in the read-model store, for `ocelog status`', async () => {
    const [poison] = await events('ds1', 'Poison')
    const projector = new Projector(log, store, { sleep: recordingSleep().sleep, settleMs: 0 })
    await projector.run(new AbortController().signal)
    // Under each projection's checkpoint: `ocelog status` shows every one stopped at the record.
    expect((await store.projections()).map((p) => [p.projection, p.position, p.stopped?.projection, p.stopped?.position, p.stopped?.attempts])).toEqual(
      ['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'].map((name) => [
        name,
        null,
        name,
        poison,
        5,
      ]),
    )
  })

  it('stops after the configured number of attempts, with the configured first wait', async () => {
    await events('ds1', 'Poison')
    const { waits, sleep } = recordingSleep()
    const projector = new Projector(log, store, { sleep, settleMs: 0, retry: { maxAttempts: 3, initialDelayMs: 7, maxDelayMs: 10 } })
    expect((await projector.run(new AbortController().signal))?.stop.attempts).toBe(3)
    expect(waits).toEqual([7, 10])
  })

  it('tries the record again when started again, and clears the stop once it applies', async () => {
    await events('ds1', 'Create Order', 'Poison', 'Ship Order')
    await new Projector(log, store, { sleep: recordingSleep().sleep, settleMs: 0 }).run(new AbortController().signal)
    rmDb.exec('DROP TRIGGER poison')
    const again = new Projector(log, store, { settleMs: 0 })
    const abort = new AbortController()
    const running = again.run(abort.signal)
    await until(again, (await log.lastPosition()) ?? 0)
    abort.abort()
    expect(await running).toBeNull()
    expect((await rows('ds1')).events.map((e) => e.event_type)).toEqual(['Create Order', 'Poison', 'Ship Order'])
    expect((await store.projections()).map((p) => p.stopped)).toEqual(PROJECTION_NAMES.map(() => null))
  })

  it('stops only the shard that holds the record: the other shard applies what comes after it', async () => {
    // Two datasets on different shards of 2.
    const names = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `ds-${n}`)
    const poisoned = names.find((d) => datasetHash(d) % 2 === 0) ?? ''
    const healthy = names.find((d) => datasetHash(d) % 2 === 1) ?? ''
    await events(poisoned, 'Create Order', 'Poison')
    await events(healthy, 'Create Order', 'Ship Order')
    const shards = [0, 1].map((index) => new Projector(log, store, { shard: { index, count: 2 }, sleep: recordingSleep().sleep, settleMs: 0 }))
    const [sick, well] = shards
    if (sick === undefined || well === undefined) throw new Error('two shards expected')
    const abort = new AbortController()
    const running = [sick.run(abort.signal), well.run(abort.signal)]
    const stopped = await running[0]
    await until(well, (await log.lastPosition()) ?? 0)
    abort.abort()
    expect(await running[1]).toBeNull()
    expect(stopped?.stop.projection).toBe('read-models-0-of-2')
    expect((await rows(healthy)).events.map((e) => e.event_type)).toEqual(['Create Order', 'Ship Order'])
    // Each projection of the sick shard is stopped; none of the well one's.
    const byShard = (await store.projections()).map((p) => [p.projection.slice(p.projection.indexOf('-')), p.stopped === null])
    expect(byShard.filter(([shard]) => shard === '-0-of-2')).toEqual(PROJECTION_NAMES.map(() => ['-0-of-2', false]))
    expect(byShard.filter(([shard]) => shard === '-1-of-2')).toEqual(PROJECTION_NAMES.map(() => ['-1-of-2', true]))
  })
})

describe('Projector.run on a record it cannot read', () => {
  it('stops after its retries, the cause naming the record’s position', async () => {
    await events('ds1', 'Create Order')
    db.prepare(
      "INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-ds1', 'ds1', 'EventRecorded', 99, '{}', 'now')",
    ).run()
    const { waits, sleep } = recordingSleep()
    const stopped = await new Projector(log, store, { sleep, settleMs: 0 }).run(new AbortController().signal)
    expect(waits).toEqual([100, 200, 400, 800])
    expect([stopped?.stop.position, stopped?.stop.attempts, stopped?.stop.cause]).toEqual([null, 5, expect.stringMatching(/position 2\b/)])
  })
})

describe('Projector.catchUp on a record it cannot apply', () => {
  it('throws ProjectionStoppedError naming the record, after applying the ones before it', async () => {
    const [, poison] = await events('ds1', 'Create Order', 'Poison')
    const error = await new Projector(log, store).catchUp().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProjectionStoppedError)
    expect((error as ProjectionStoppedError).stop).toMatchObject({ position: poison, stream: 'dataset-ds1', attempts: 1 })
    expect(await store.checkpoint('events')).toBe((poison ?? 0) - 1)
  })
})

describe('Projector.run while an engine is away', () => {
  it('waits with doubling waits capped at 5 s, without limit, then goes on', async () => {
    await events('ds1', 'Create Order', 'Ship Order')
    // Another connection holds the write lock; the store's connections give up at once (SQLITE_BUSY).
    const store = new SqliteReadModelStore(rmDb, { busyTimeoutMs: 0 })
    const holder = new Database(join(dir, 'read-models.db'))
    holder.prepare('BEGIN IMMEDIATE').run()
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
      if (waits.length === 10) holder.prepare('COMMIT').run()
    }
    const projector = new Projector(log, store, { sleep, settleMs: 0, isUnavailable: isSqliteUnavailable })
    const abort = new AbortController()
    const running = projector.run(abort.signal)
    await until(projector, (await log.lastPosition()) ?? 0)
    abort.abort()
    expect(await running).toBeNull()
    holder.close()
    await store.close()
    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000])
    expect((await rows('ds1')).events.length).toBe(2)
  })
})
