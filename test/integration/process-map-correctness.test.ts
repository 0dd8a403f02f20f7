/**
 * The process map of every shared OCEL 2.0 log, after import, equals an independent computation
 * from the source file, for every object type: objects, activity counts (events, objects, total),
 * edge counts (total, objects, event_couples), start and end activities.
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
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models-database.js'
import { UNDEFINED_OBJECT_TYPE } from '../../src/ocel/import/plan.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqlite-read-model-store.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
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
  maps: Record<string, unknown>
}

const sorted = <T extends Record<string, unknown>>(rows: T[], ...keys: (keyof T)[]) =>
  rows.sort((a, b) => {
    for (const k of keys) {
      const x = String(a[k])
      const y = String(b[k])
      if (x !== y) return x < y ? -1 : 1
    }
    return 0
  })

/** The independent process map (counts only) of every object type, and what the import records. */
function expectedOf(log: SourceLog): Expected {
  const typeOf = new Map<string, string>()
  for (const o of log.objects) if (!typeOf.has(o.id)) typeOf.set(o.id, o.type)
  let events = 0
  let e2o = 0
  /** Per object: its events as [time, file index, event id, activity]. */
  const sequences = new Map<string, [number, number, string, string][]>()
  log.events.forEach((e, index) => {
    const links = new Set<string>()
    const objects = new Set<string>()
    for (const r of e.relationships) {
      links.add(JSON.stringify([r.objectId, r.qualifier]))
      objects.add(r.objectId)
    }
    if (links.size === 0 || links.size > MAX_OBJECTS_PER_EVENT) return
    events += 1
    e2o += links.size
    for (const o of objects) {
      const seq = sequences.get(o) ?? []
      seq.push([e.time, index, e.id, e.type])
      sequences.set(o, seq)
    }
  })
  const maps: Record<string, ReturnType<typeof emptyMap>> = {}
  function emptyMap(type: string) {
    return {
      object_type: type,
      objects: 0,
      activities: new Map<string, { events: Set<string>; objects: Set<string>; total: number }>(),
      edges: new Map<string, { total: number; objects: Set<string>; couples: Set<string> }>(),
      start: new Map<string, number>(),
      end: new Map<string, number>(),
    }
  }
  for (const [objectId, seq] of sequences) {
    const type = typeOf.get(objectId) ?? UNDEFINED_OBJECT_TYPE
    const m = maps[type] ?? emptyMap(type)
    maps[type] = m
    seq.sort((a, b) => a[0] - b[0] || a[1] - b[1])
    m.objects += 1
    seq.forEach(([, , eventId, activity], i) => {
      const a = m.activities.get(activity) ?? { events: new Set(), objects: new Set(), total: 0 }
      a.events.add(eventId)
      a.objects.add(objectId)
      a.total += 1
      m.activities.set(activity, a)
      const next = seq[i + 1]
      if (next === undefined) return
      const key = JSON.stringify([activity, next[3]])
      const edge = m.edges.get(key) ?? { total: 0, objects: new Set(), couples: new Set() }
      edge.total += 1
      edge.objects.add(objectId)
      edge.couples.add(`${eventId} ${next[2]}`)
      m.edges.set(key, edge)
    })
    const first = seq[0]
    const last = seq[seq.length - 1]
    if (first !== undefined) m.start.set(first[3], (m.start.get(first[3]) ?? 0) + 1)
    if (last !== undefined) m.end.set(last[3], (m.end.get(last[3]) ?? 0) + 1)
  }
  const out: Record<string, unknown> = {}
  for (const [type, m] of Object.entries(maps)) {
    out[type] = {
      objects: m.objects,
      activities: sorted(
        [...m.activities].map(([activity, a]) => ({ activity, events: a.events.size, objects: a.objects.size, total: a.total })),
        'activity',
      ),
      edges: sorted(
        [...m.edges].map(([key, e]) => {
          const [source, target] = JSON.parse(key) as [string, string]
          return { source, target, total: e.total, objects: e.objects.size, event_couples: e.couples.size }
        }),
        'source',
        'target',
      ),
      start_activities: sorted(
        [...m.start].map(([activity, objects]) => ({ activity, objects })),
        'activity',
      ),
      end_activities: sorted(
        [...m.end].map(([activity, objects]) => ({ activity, objects })),
        'activity',
      ),
    }
  }
  return { events, e2o, maps: out }
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
      const map = await reader.processMap(ds, {})
      const actual = Object.fromEntries(
        map.object_types.map((m) => [
          m.object_type,
          {
            objects: m.objects,
            activities: m.activities.map(({ run_time: _, ...a }) => a),
            edges: m.edges.map(({ elapsed: _e, waiting: _w, ...e }) => e),
            start_activities: m.start_activities,
            end_activities: m.end_activities,
          },
        ]),
      )
      expect(Object.keys(actual).length).toBeGreaterThan(0)
      expect(actual).toEqual(expected.maps)
    },
    180_000,
  )
})
