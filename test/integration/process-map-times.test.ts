/**
 * Run and waiting times of the process map against hand-computed values (docs/api.md#event-input,
 * end_timestamp: "the process map shows run time, and the gap to the next step is treated as
 * true waiting time"). Events go through the real ingest path (validation, records, the SQLite
 * log), the real Projector and the ProcessReader, sent out of time order, with offsets.
 *
 * Ticket T1: Open 10:00–10:05, Triage 10:10–10:40, Resolve 10:30–10:50 (Triage ends after Resolve
 * starts: waiting clipped to 0). Ticket T2: Open 10:00 without end_timestamp (elapsed, but no
 * waiting), Triage 10:20–10:25, Resolve 10:45–11:00. All times UTC.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { Ingest } from '../../src/write/ingest.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import type { ObjectTypeMap } from '../../src/schemas/process.js'
import { context, freshDatasetId } from '../contract/fixtures.js'

/** The events in the order they are sent (not their time order). */
const SENT = [
  { event: 'Resolve', timestamp: '2024-05-01T10:30:00Z', end_timestamp: '2024-05-01T10:50:00Z', objects: [{ type: 'ticket', id: 'T1' }] },
  { event: 'Resolve', timestamp: '2024-05-01T12:45:00+02:00', end_timestamp: '2024-05-01T11:00:00Z', objects: [{ type: 'ticket', id: 'T2' }] },
  { event: 'Open', timestamp: '2024-05-01T10:00:00Z', end_timestamp: '2024-05-01T10:05:00Z', objects: [{ type: 'ticket', id: 'T1' }] },
  { event: 'Triage', timestamp: '2024-05-01T10:20:00Z', end_timestamp: '2024-05-01T10:25:00Z', objects: [{ type: 'ticket', id: 'T2' }] },
  { event: 'Triage', timestamp: '2024-05-01T10:10:00Z', end_timestamp: '2024-05-01T10:40:00Z', objects: [{ type: 'ticket', id: 'T1' }] },
  { event: 'Open', timestamp: '2024-05-01T11:00:00+01:00', objects: [{ type: 'ticket', id: 'T2' }] },
]

/** Every number below is worked out by hand from the times above (seconds). */
const EXPECTED: ObjectTypeMap = {
  object_type: 'ticket',
  objects: 2,
  activities: [
    // T1 300; T2 has no end_timestamp.
    { activity: 'Open', events: 2, objects: 2, total: 2, run_time: { count: 1, mean: 300, median: 300, min: 300, max: 300, sum: 300 } },
    // T1 1200, T2 900: the median of two is their mean.
    { activity: 'Resolve', events: 2, objects: 2, total: 2, run_time: { count: 2, mean: 1050, median: 1050, min: 900, max: 1200, sum: 2100 } },
    // T1 1800, T2 300.
    { activity: 'Triage', events: 2, objects: 2, total: 2, run_time: { count: 2, mean: 1050, median: 1050, min: 300, max: 1800, sum: 2100 } },
  ],
  edges: [
    {
      source: 'Open',
      target: 'Triage',
      total: 2,
      objects: 2,
      event_couples: 2,
      // T1 10:00→10:10, T2 10:00→10:20.
      elapsed: { count: 2, mean: 900, median: 900, min: 600, max: 1200, sum: 1800 },
      // T1 10:05→10:10; T2's Open has no end_timestamp, so it adds nothing.
      waiting: { count: 1, mean: 300, median: 300, min: 300, max: 300, sum: 300 },
    },
    {
      source: 'Triage',
      target: 'Resolve',
      total: 2,
      objects: 2,
      event_couples: 2,
      // T1 10:10→10:30, T2 10:20→10:45.
      elapsed: { count: 2, mean: 1350, median: 1350, min: 1200, max: 1500, sum: 2700 },
      // T1 ends 10:40 after Resolve starts 10:30: clipped to 0. T2 10:25→10:45.
      waiting: { count: 2, mean: 600, median: 600, min: 0, max: 1200, sum: 1200 },
    },
  ],
  start_activities: [{ activity: 'Open', objects: 2 }],
  end_activities: [{ activity: 'Resolve', objects: 2 }],
}

describe('process map times', () => {
  let dir: string
  let db: SqliteDatabase
  let rmDb: SqliteDatabase
  let log: SqliteEventLog
  let reader: ProcessReader
  const ds = freshDatasetId()

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ocelog-times-'))
    db = openDatabase(dir)
    rmDb = openReadModelsDatabase(dir).db
    log = new SqliteEventLog(db)
    const ingest = new Ingest(log)
    for (const body of SENT) {
      const { failures } = await ingest.recordEvents([body], context(ds))
      expect(failures).toEqual([])
    }
    await new Projector(log, new SqliteReadModelStore(rmDb)).catchUp()
    reader = new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log })
  })
  afterAll(async () => {
    await log.close()
    db.close()
    rmDb.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('gives run, elapsed and waiting times equal to the hand-computed values', async () => {
    expect((await reader.processMap(ds, {})).object_types).toEqual([EXPECTED])
  })

  it('keeps the times of what remains when a window cuts the first step off', async () => {
    const [map] = (await reader.processMap(ds, { from: '2024-05-01T10:05:00Z' })).object_types
    expect(map?.start_activities).toEqual([{ activity: 'Triage', objects: 2 }])
    expect(map?.edges).toEqual([EXPECTED.edges[1]])
  })
})
