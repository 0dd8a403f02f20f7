/**
 * The process map of every shared OCEL 2.0 log, after import, equals an independent computation
 * from the source file (test/helpers/process-map-reference.ts), for every object type: objects,
 * activity counts (events, objects, total) and run times, edge counts (total, objects,
 * event_couples) and elapsed and waiting times, start and end activities. All time, from the
 * directly-follows aggregates: counts, sums, min, max and means exact, medians within
 * `median_relative_error` (0 when no statistic holds more than EXACT_MAX durations, whose medians
 * are kept exact); a window (the middle third of the log's time span), from the steps in it: all
 * exact.
 *
 * The independent side is plain TypeScript over the parsed file: OCEL 2.0 JSON files are parsed
 * here with JSON.parse; SQLite and XML files through the importer's reader (their parsing is
 * tested on its own), never through the plan or the read models. It applies the import's
 * documented rules itself (objects the log never defines typed `ocelog:undefined`, a repeated
 * (object, qualifier) sent once, events left with no object or with more than 50 left out), and
 * the test asserts that the dataset recorded exactly those events and E2O links. Each object's
 * events are ordered by (time, file order), as the loader gives equal times log positions in
 * file order.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { UNDEFINED_OBJECT_TYPE } from '../../src/ocel/import/plan.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { EXACT_MAX, MEDIAN_RELATIVE_ERROR } from '../../src/core/duration-stats.js'
import type { ObjectTypeMap } from '../../src/schemas/process.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { expectMapWithin, type ReferenceEvent, referenceMap } from '../helpers/process-map-reference.js'
import { loadOcel } from '../helpers/load-ocel.js'

/** The logs: the derived OCEL 2.0 JSON files and every raw file the importer reads. */
const LOGS = [
  'derived/ocelescope__pallet-logistics-v0.9.ocel2.json',
  'derived/ocpa__logistics.ocel2.json',
  'derived/ocpa__running-example.ocel2.json',
  'raw/pm4py__ocel20_example.jsonocel',
  'raw/ocpa__ocel20_example.xmlocel',
  'raw/ocpa__ocel20_example.sqlite',
  'raw/ocelescope__pallet-logistics-v0.9.sqlite',
  'raw/ocpa__logistics.sqlite',
  'raw/ocpa__running-example.sqlite',
]

const MAX_OBJECTS_PER_EVENT = 50

/** The count of every statistic of a map (run times, elapsed and waiting times). */
const statsCounts = (maps: readonly ObjectTypeMap[]): number[] =>
  maps.flatMap((m) => [
    ...m.activities.flatMap((a) => (a.run_time === null ? [] : [a.run_time.count])),
    ...m.edges.flatMap((e) => [e.elapsed.count, ...(e.waiting === null ? [] : [e.waiting.count])]),
  ])

interface SourceLog {
  objects: { id: string; type: string }[]
  events: { id: string; type: string; time: number; relationships: { objectId: string; qualifier: string | null }[] }[]
}

/** The log as the file says it: JSON parsed here; SQLite and XML through the importer's reader. */
function source(relative: string): SourceLog {
  const path = ocelFixture(relative)
  if (!relative.endsWith('.json') && !relative.endsWith('.jsonocel')) return readOcelFile(path, parseTimeZone('UTC'))
  const doc = JSON.parse(readFileSync(path, 'utf8')) as {
    objects: { id: string; type: string }[]
    events: { id: string; type: string; time: string; relationships?: { objectId: string; qualifier?: string }[] }[]
  }
  return {
    objects: doc.objects.map((o) => ({ id: o.id, type: o.type })),
    events: doc.events.map((e) => ({
      id: e.id,
      type: e.type,
      time: Date.parse(/[Zz]|[+-]\d\d:?\d\d$/.test(e.time) ? e.time : `${e.time}Z`),
      relationships: (e.relationships ?? []).map((r) => ({
        objectId: r.objectId,
        qualifier: r.qualifier === undefined || r.qualifier === '' ? null : r.qualifier,
      })),
    })),
  }
}

interface Expected {
  events: number
  e2o: number
  /** The recorded events as the reference map reads them (test/helpers/process-map-reference.ts). */
  recorded: ReferenceEvent[]
}

/** The events and E2O links the import records, by its documented rules, with each event's distinct objects. */
function expectedOf(log: SourceLog): Expected {
  const typeOf = new Map<string, string>()
  for (const o of log.objects) if (!typeOf.has(o.id)) typeOf.set(o.id, o.type)
  let e2o = 0
  const recorded: ReferenceEvent[] = []
  log.events.forEach((e, index) => {
    const links = new Set<string>()
    const objects = new Set<string>()
    for (const r of e.relationships) {
      links.add(JSON.stringify([r.objectId, r.qualifier]))
      objects.add(r.objectId)
    }
    if (links.size === 0 || links.size > MAX_OBJECTS_PER_EVENT) return
    e2o += links.size
    recorded.push({
      id: e.id,
      activity: e.type,
      t: e.time,
      order: index,
      te: null,
      objects: [...objects].map((id) => ({ id, type: typeOf.get(id) ?? UNDEFINED_OBJECT_TYPE })),
    })
  })
  return { events: recorded.length, e2o, recorded }
}

describeWithSharedOcel('process map of the shared OCEL 2.0 logs', () => {
  let dir: string
  let db: SqliteDatabase
  let rmDb: SqliteDatabase
  let log: SqliteEventLog
  let reader: ProcessReader
  let store: SqliteReadModelStore
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ocelog-map-'))
    db = openDatabase(dir)
    rmDb = openReadModelsDatabase(dir).db
    log = new SqliteEventLog(db)
    store = new SqliteReadModelStore(rmDb)
    reader = new ProcessReader({ query: new SqliteReadModelQuery(rmDb), log })
  })
  afterAll(async () => {
    await log.close()
    db.close()
    rmDb.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it.each(LOGS)(
    'equals an independent computation from %s for every object type',
    async (relative) => {
      const ds = freshDatasetId()
      const expected = expectedOf(source(relative))
      await loadOcel(readOcelFile(ocelFixture(relative), parseTimeZone('UTC')), ds, { log, store })

      const summary = await reader.summary(ds)
      expect({ events: summary.events, e2o: summary.e2o }).toEqual({ events: expected.events, e2o: expected.e2o })
      // All time: from the aggregates, medians exact up to EXACT_MAX durations, else within median_relative_error.
      const all = await reader.processMap(ds, {})
      const expectedAll = referenceMap(expected.recorded)
      expect(all.object_types.length).toBeGreaterThan(0)
      const sketched = statsCounts(expectedAll).some((n) => n > EXACT_MAX)
      expect(all.median_relative_error).toBe(sketched ? MEDIAN_RELATIVE_ERROR : 0)
      const { inexact, worst } = expectMapWithin(all.object_types, expectedAll, all.median_relative_error)
      // A window (the middle third of the log's time span): from the steps in it, exact.
      const times = expected.recorded.map((e) => e.t)
      const [first, last] = [Math.min(...times), Math.max(...times)]
      const window = { from: first + Math.floor((last - first) / 3), to: first + Math.floor((2 * (last - first)) / 3) }
      const win = await reader.processMap(ds, { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString() })
      expect(win.median_relative_error).toBe(0)
      expectMapWithin(win.object_types, referenceMap(expected.recorded, window), 0)
      console.info(
        `${relative}: ${String(expected.events)} events; all time: ${String(inexact)} of ${String(statsCounts(expectedAll).length)} medians sketched off the exact one, worst ${(worst * 100).toFixed(3)}%; window: ${String(win.object_types.reduce((n, m) => n + m.edges.length, 0))} edges exact`,
      )
    },
    180_000,
  )
})
