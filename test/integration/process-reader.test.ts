/**
 * ProcessReader (src/read/process-reader.ts) over a real SQLite file: the envelope of every answer,
 * the cursor across pages, and the parameter errors, on records appended to the real log and
 * applied by the real Projector.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { InvalidParameterError, NotFoundError } from '../../src/core/errors.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { eventRecord, freshDatasetId, upsertRecord } from '../contract/fixtures.js'

let dir: string
let db: SqliteDatabase
let rmDb: SqliteDatabase
let log: SqliteEventLog
let reader: ProcessReader
let ds: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-reader-'))
  db = openDatabase(dir)
  rmDb = openReadModelsDatabase(dir).db
  log = new SqliteEventLog(db)
  reader = new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log })
  ds = freshDatasetId()
})
afterEach(async () => {
  await log.close()
  db.close()
  rmDb.close()
  rmSync(dir, { recursive: true, force: true })
})

const at = (minute: number) => new Date(Date.parse('2024-05-01T10:00:00.000Z') + minute * 60_000).toISOString()

/** Five events of one order at minutes 0..4 (sent in reverse), applied by the projector. */
async function fiveEvents(): Promise<number> {
  for (const m of [4, 3, 2, 1, 0]) await log.append(ds, [eventRecord(ds, `Step ${String(m)}`, [{ type: 'order', id: 'o1' }], { timestamp: at(m) })], [])
  return new Projector(log, new SqliteReadModelStore(rmDb)).catchUp()
}

/** The parameter that `promise` rejects with an InvalidParameterError naming, else null. */
async function rejectedParameter(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise
  } catch (error) {
    if (error instanceof InvalidParameterError) return error.parameter
    throw error
  }
  return null
}

describe('ProcessReader', () => {
  it('wraps the summary in dataset_id, as_of and the stream’s log_position', async () => {
    const head = await fiveEvents()
    const other = freshDatasetId()
    await log.append(other, [upsertRecord(other, 'order', 'x', {})], [])
    expect(await reader.summary(ds)).toMatchObject({ dataset_id: ds, as_of: head, log_position: head, events: 5, objects: 1 })
  })

  it('gives log_position null and as_of 0 for an empty log', async () => {
    expect(await reader.summary(ds)).toMatchObject({ dataset_id: ds, as_of: 0, log_position: null, events: 0 })
  })

  it('pages events with next_cursor until it is null, in (timestamp, position) order', async () => {
    const head = await fiveEvents()
    const seen: string[] = []
    let cursor: string | undefined
    for (let i = 0; i < 10; i++) {
      const page = await reader.events(ds, { limit: '2', ...(cursor === undefined ? {} : { cursor }) })
      expect([page.dataset_id, page.as_of]).toEqual([ds, head])
      seen.push(...page.events.map((e) => e.event_type))
      if (page.next_cursor === null) break
      cursor = page.next_cursor
    }
    expect(seen).toEqual(['Step 0', 'Step 1', 'Step 2', 'Step 3', 'Step 4'])
  })

  it('takes object_type as one value or repeated', async () => {
    await fiveEvents()
    const one = await reader.processMap(ds, { object_type: 'order' })
    const repeated = await reader.processMap(ds, { object_type: ['order', 'order', 'item'] })
    expect(one.object_types.map((m) => m.object_type)).toEqual(['order'])
    expect(repeated.object_types).toEqual(one.object_types)
    expect(one.object_types[0]?.edges.map((e) => `${e.source}>${e.target}`)).toEqual(['Step 0>Step 1', 'Step 1>Step 2', 'Step 2>Step 3', 'Step 3>Step 4'])
  })

  it('applies from and to given with an offset', async () => {
    await fiveEvents()
    const map = await reader.processMap(ds, { from: '2024-05-01T12:01:00+02:00', to: '2024-05-01T10:03:00Z' })
    expect(map.object_types[0]?.activities.map((a) => a.activity)).toEqual(['Step 1', 'Step 2'])
  })

  it('throws NotFoundError for an unknown object and answers a known one in its envelope', async () => {
    const head = await fiveEvents()
    await expect(reader.object(ds, 'order', 'nope')).rejects.toBeInstanceOf(NotFoundError)
    const found = await reader.object(ds, 'order', 'o1')
    expect([found.dataset_id, found.as_of, found.object.id, found.trace.length]).toEqual([ds, head, 'o1', 5])
  })

  it('lists event and object types in their envelope', async () => {
    const head = await fiveEvents()
    const events = await reader.eventTypes(ds)
    const objects = await reader.objectTypes(ds)
    expect([events.dataset_id, events.as_of, events.event_types.length]).toEqual([ds, head, 5])
    expect([objects.dataset_id, objects.as_of, objects.object_types.map((t) => t.name)]).toEqual([ds, head, ['order']])
  })

  it.each([
    ['limit', { limit: '0' }],
    ['limit', { limit: 1001 }],
    ['cursor', { cursor: 'garbage!' }],
    ['from', { from: 'today' }],
    ['to', { from: '2024-05-01T10:00:00Z', to: '2024-05-01T10:00:00Z' }],
    ['event_type', { event_type: '' }],
    ['object_type', { object_type: '' }],
    ['object_id', { object_id: '' }],
  ])('rejects a bad events parameter, naming %s', async (parameter, params) => {
    expect(await rejectedParameter(reader.events(ds, params))).toBe(parameter)
  })

  it.each([
    ['object_type', { object_type: ['order', ''] }],
    ['from', { from: '2024-05-01' }],
    ['to', { to: '2024-05-01T10:00:00+2' }],
  ])('rejects a bad process map parameter, naming %s', async (parameter, params) => {
    expect(await rejectedParameter(reader.processMap(ds, params))).toBe(parameter)
  })

  it('names object_types when the caller calls the list that (MCP)', async () => {
    expect(await rejectedParameter(reader.processMap(ds, { object_type: [''] }, { objectType: 'object_types' }))).toBe('object_types')
  })
})
