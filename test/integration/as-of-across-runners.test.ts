/**
 * A consistent `as_of` across runners under load (docs/architecture.md#projection-runners-and-leases):
 * while two senders append events to the log and the `entities` and `process` runners
 * (src/projector/runners.ts) apply them apart, each on its own connections as separate processes
 * would, the test reads, each in one snapshot (ReadModelQuery.consistentRead) with that snapshot's
 * checkpoints, the answers of ProcessReader that join both runners' read models, and checks:
 * - (a) `as_of` is the lowest checkpoint of the snapshot, so never past either runner's;
 * - (b) the answer holds exactly the records of the log up to `as_of`: every event of the object at
 *   or below it, none after it (the log itself, read at the end, is the oracle).
 * The runners are paused in turn (one stopped while the other goes on under the senders), so the
 * answers are read with either runner ahead; the test checks that it saw both.
 *
 * The answers: the object's view (its trace, `GET /v1/process/objects/{type}/{id}`), the events page of
 * that object (`/v1/process/events?object_id=`), its variants and the performance of its type. On SQLite
 * the trace and the object's events are the directly-follows steps joined with the events, the variants
 * and performance the steps with the objects and events. On PostgreSQL each read keeps the rows at or below `as_of`.
 * A last test holds the reader between its read of `as_of` and its read of the answer while more
 * events are applied: the answer must not hold them. Both engines are real: SQLite files in a temp
 * dir, and a database of its own on the run's PostgreSQL server (test/helpers/postgres-global-setup.ts).
 */
import type pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresEventLog } from '../../src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { openReadModelsDatabase } from '../../src/adapters/sqlite/read-models/read-models-database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { SqliteReadModelStore } from '../../src/adapters/sqlite/read-models/sqlite-read-model-store.js'
import type { EventLog } from '../../src/ports/event-log.js'
import type { ReadModelQuery } from '../../src/ports/read-model-query.js'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'
import { Projector } from '../../src/projector/runner.js'
import { RUNNER_NAMES, type RunnerName, runnerProjections } from '../../src/projector/runners.js'
import { ProcessReader } from '../../src/read/process-reader.js'
import type { EventRecordedV1 } from '../../src/schemas/records.js'
import { Ingest } from '../../src/write/ingest.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { openSqliteFixture, testContext } from '../helpers/sqlite.js'

const DATASET = 'asof-runners'
/** Every event names this order (and an item of its own), so the order's trace is every event of the log. */
const ORDER = { type: 'order', id: 'o1' }
const ACTIVITIES = ['Pick', 'Check', 'Pack']
const BASE = Date.parse('2024-05-01T10:00:00.000Z')
/** Events each sender appends at most (the trace stays under READ_LIMIT_MAX, so no answer is cut). */
const SENDER_EVENTS = 240
/** Reads of each phase at least. */
const MIN_READS = 10

/**
 * One engine: the senders' log, and for each runner a log and a store of its own (their own
 * connections, as a projector process or the embedded worker thread has), and a query on one more.
 */
interface Engine {
  log: EventLog
  runners: Record<RunnerName, { log: EventLog; store: ReadModelStore }>
  query: ReadModelQuery
  /** Each checkpoint's position by projection, read in the snapshot of the current `query.consistentRead`. */
  snapshotCheckpoints(): Promise<Map<string, number>>
  close(): Promise<void>
}

function sqliteEngine(): Engine {
  const fx = openSqliteFixture('ocelog-asof-', { pollMs: 5 })
  const entitiesDb = openReadModelsDatabase(fx.dir).db
  const processDb = openReadModelsDatabase(fx.dir).db
  const queryDb = openReadModelsDatabase(fx.dir).db
  const logDbs = [openDatabase(fx.dir), openDatabase(fx.dir)]
  const logs = logDbs.map((db) => new SqliteEventLog(db, { pollMs: 5 }))
  return {
    log: fx.log,
    runners: {
      entities: { log: logs[0] as SqliteEventLog, store: new SqliteReadModelStore(entitiesDb) },
      process: { log: logs[1] as SqliteEventLog, store: new SqliteReadModelStore(processDb) },
    },
    query: new SqliteReadModelQuery(queryDb),
    async snapshotCheckpoints() {
      // The query's own connection, inside its BEGIN: the snapshot its reads see, of both runners' files.
      const rows = queryDb
        .prepare('SELECT projector, position FROM main.rm_checkpoints UNION ALL SELECT projector, position FROM process.rm_checkpoints')
        .all() as { projector: string; position: number }[]
      return new Map(rows.map((r) => [r.projector, r.position]))
    },
    async close() {
      for (const log of logs) await log.close()
      for (const { store } of Object.values(this.runners)) await store.close()
      for (const db of [...logDbs, entitiesDb, processDb, queryDb]) db.close()
      await fx.log.close()
      fx.close()
    },
  }
}

async function postgresEngine(admin: string): Promise<Engine> {
  const url = await freshPostgresDatabase(admin, 'asof_runners')
  const logPool = openPostgresPool(url, { max: 4 })
  await migrate(logPool)
  const entitiesPool = openPostgresPool(url, { max: 2 })
  const processPool = openPostgresPool(url, { max: 2 })
  // One connection: consistentRead's transaction holds it, so the one the pool lent last is the snapshot's.
  const queryPool = openPostgresPool(url, { max: 1 })
  let lent: pg.PoolClient | null = null
  queryPool.on('acquire', (client) => {
    lent = client
  })
  const log = new PostgresEventLog(logPool, { pollMs: 5 })
  const logs = [new PostgresEventLog(entitiesPool, { pollMs: 5 }), new PostgresEventLog(processPool, { pollMs: 5 })]
  return {
    log,
    runners: {
      entities: { log: logs[0] as PostgresEventLog, store: new PostgresReadModelStore(entitiesPool) },
      process: { log: logs[1] as PostgresEventLog, store: new PostgresReadModelStore(processPool) },
    },
    query: new PostgresReadModelQuery(queryPool),
    async snapshotCheckpoints() {
      const client: pg.PoolClient | null = lent
      if (client === null) throw new Error('no connection lent: call inside query.consistentRead, after its first read')
      const { rows } = await client.query<{ projector: string; position: string }>('SELECT projector, position FROM ocelog.rm_checkpoints')
      return new Map(rows.map((r) => [r.projector, Number(r.position)]))
    },
    async close() {
      for (const l of [log, ...logs]) await l.close()
      for (const pool of [logPool, entitiesPool, processPool, queryPool]) await pool.end()
      await dropPostgresDatabase(admin, url)
    },
  }
}

/** One runner applying in the background until `stop`. */
interface Running {
  projector: Projector
  stop(): Promise<void>
}

function startRunner(engine: Engine, runner: RunnerName): Running {
  // Small reads and runs, so the checkpoints move in many steps.
  const { log, store } = engine.runners[runner]
  const projector = new Projector(log, store, { runner, maxBatch: 7, headRunCost: 20, settleMs: 3 })
  const abort = new AbortController()
  const done = projector.run(abort.signal)
  return {
    projector,
    async stop() {
      abort.abort()
      const stopped = await done
      if (stopped !== null) throw stopped
    },
  }
}

/** What one read saw: the snapshot's checkpoints and the answers read in it. */
interface Observation {
  entities: number
  process: number
  lowest: number
  answers: { name: string; as_of: number; eventIds: string[]; activities: string[]; byActivity: Record<string, number> }[]
}

/** A checkpoint's position (a projection that applied nothing yet is at 0). */
const at = (checkpoints: Map<string, number>, projection: string): number => checkpoints.get(projection) ?? 0

/** Reads the four answers in one snapshot, with that snapshot's checkpoints. */
async function observe(engine: Engine, reader: ProcessReader): Promise<Observation> {
  return engine.query.consistentRead(async () => {
    // The snapshot is taken by the first read.
    await engine.query.asOf()
    const checkpoints = await engine.snapshotCheckpoints()
    const lowestOf = (runner: RunnerName) => Math.min(...runnerProjections(runner).map((p) => at(checkpoints, p)))
    const object = await reader.object(DATASET, ORDER.type, ORDER.id)
    const events = await reader.events(DATASET, { object_type: ORDER.type, object_id: ORDER.id, limit: 1000 })
    const variants = await reader.variants(DATASET, { object_type: ORDER.type })
    const performance = await reader.performance(DATASET, { object_type: ORDER.type, slowest: 0 })
    const none = { eventIds: [], activities: [], byActivity: {} }
    return {
      entities: lowestOf('entities'),
      process: lowestOf('process'),
      lowest: Math.min(...checkpoints.values()),
      answers: [
        {
          name: 'object trace',
          as_of: object.as_of,
          ...none,
          eventIds: object.trace.map((t) => t.event_id),
          activities: object.trace.map((t) => t.event_type),
        },
        { name: 'events of the object', as_of: events.as_of, ...none, eventIds: events.events.map((e) => e.event_id) },
        { name: 'variants', as_of: variants.as_of, ...none, activities: variants.variants.flatMap((v) => v.activities) },
        {
          name: 'performance',
          as_of: performance.as_of,
          ...none,
          byActivity: Object.fromEntries(performance.activities.map((a) => [a.activity, a.events])),
        },
      ],
    }
  })
}

/** Two senders appending events of ORDER (and an item each) until `stop()` or SENDER_EVENTS each. */
function startSenders(log: EventLog): { stop(): Promise<void> } {
  const ingest = new Ingest(log)
  let stopped = false
  let tick = 0
  const send = async (sender: number) => {
    for (let k = 0; k < SENDER_EVENTS && !stopped; k += 3) {
      const items = [0, 1, 2].map((j) => {
        tick += 1
        return {
          event: ACTIVITIES[(k + j) % ACTIVITIES.length],
          timestamp: new Date(BASE + tick * 1000).toISOString(),
          objects: [ORDER, { type: 'item', id: `s${String(sender)}-${String(k + j)}` }],
        }
      })
      const { failures } = await ingest.recordEvents(items, testContext(DATASET))
      if (failures.length > 0) throw new Error(`an append failed: ${JSON.stringify(failures)}`)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  }
  const done = Promise.all([send(0), send(1)])
  return {
    async stop() {
      stopped = true
      await done
    },
  }
}

/** Reads, while what runs goes on, until `enough` says so for the last observation after at least MIN_READS (at most `maxReads`). */
async function readUntil(engine: Engine, reader: ProcessReader, seen: Observation[], enough: (o: Observation) => boolean, maxReads: number): Promise<void> {
  for (let i = 0; i < maxReads; i++) {
    const o = await observe(engine, reader)
    seen.push(o)
    if (i + 1 >= MIN_READS && enough(o)) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** The log's events of DATASET in (position) order, with their positions: the oracle. */
async function loggedEvents(log: EventLog): Promise<{ position: number; event: EventRecordedV1 }[]> {
  const records = await log.readStream(DATASET, null, 100_000)
  return records.flatMap((r) => (r.type === 'EventRecorded' ? [{ position: r.position, event: r.data }] : []))
}

/** What each answer should hold at `asOf`, from the log. */
function expectedAt(logged: { position: number; event: EventRecordedV1 }[], asOf: number) {
  const upTo = logged.filter((l) => l.position <= asOf)
  // A trace's order: (timestamp, position).
  const ordered = [...upTo].sort((a, b) => (a.event.timestamp < b.event.timestamp ? -1 : a.event.timestamp > b.event.timestamp ? 1 : a.position - b.position))
  const byActivity: Record<string, number> = {}
  for (const l of upTo) byActivity[l.event.event_type] = (byActivity[l.event.event_type] ?? 0) + 1
  return { eventIds: ordered.map((l) => l.event.event_id), activities: ordered.map((l) => l.event.event_type), byActivity }
}

/** What a scenario saw: its observations, the answers that break (a) and (b) (one line each), the log's head and its events. */
interface Outcome {
  seen: Observation[]
  asOfMismatches: string[]
  contentMismatches: string[]
  head: number
  logged: number
}

/**
 * The scenario on `engine`: both runners under load, then each paused in turn, then both to the head.
 * @returns every observation, and the answers that break (a) or (b).
 */
async function runScenario(engine: Engine): Promise<Outcome> {
  const reader = new ProcessReader({ query: engine.query, log: engine.log })
  const ingest = new Ingest(engine.log)
  // The order exists before the first read (its view is a 404 until then).
  await ingest.recordEvents([{ event: 'Create', timestamp: new Date(BASE).toISOString(), objects: [ORDER] }], testContext(DATASET))
  for (const runner of ['entities', 'process'] as const) {
    const { log, store } = engine.runners[runner]
    await new Projector(log, store, { runner }).catchUp()
  }

  const seen: Observation[] = []
  const senders = startSenders(engine.log)
  let entities = startRunner(engine, 'entities')
  let process = startRunner(engine, 'process')
  await readUntil(engine, reader, seen, () => true, MIN_READS)
  // The process runner paused: the entities runner goes ahead.
  await process.stop()
  await readUntil(engine, reader, seen, (o) => o.entities > o.process + 5, 200)
  process = startRunner(engine, 'process')
  // The entities runner paused: the process runner catches up and goes ahead.
  await entities.stop()
  await readUntil(engine, reader, seen, (o) => o.process > o.entities + 5, 200)
  entities = startRunner(engine, 'entities')
  await readUntil(engine, reader, seen, () => true, MIN_READS)
  await senders.stop()
  const head = (await engine.log.lastPosition()) ?? 0
  await readUntil(engine, reader, seen, (o) => o.lowest >= head, 400)
  await entities.stop()
  await process.stop()

  const logged = await loggedEvents(engine.log)
  const asOfMismatches: string[] = []
  const contentMismatches: string[] = []
  for (const [i, o] of seen.entries()) {
    for (const a of o.answers) {
      const where = `read ${String(i)} (entities at ${String(o.entities)}, process at ${String(o.process)}), ${a.name}, as_of ${String(a.as_of)}`
      // (a): the lowest checkpoint of the snapshot, so never past either runner's.
      if (a.as_of !== o.lowest || a.as_of > o.entities || a.as_of > o.process) {
        asOfMismatches.push(`${where}: as_of is not min(${String(o.entities)}, ${String(o.process)})`)
      }
      // (b): exactly the log up to as_of.
      const expected = expectedAt(logged, a.as_of)
      const got = a.name === 'object trace' || a.name === 'events of the object' ? a.eventIds : null
      if (got !== null && JSON.stringify(got) !== JSON.stringify(expected.eventIds)) {
        contentMismatches.push(`${where}: ${String(got.length)} events, the log has ${String(expected.eventIds.length)} up to as_of`)
      }
      if (a.name === 'object trace' && JSON.stringify(a.activities) !== JSON.stringify(expected.activities)) {
        contentMismatches.push(`${where}: the trace's activities differ from the log's up to as_of`)
      }
      if (a.name === 'variants' && JSON.stringify(a.activities) !== JSON.stringify(expected.activities)) {
        contentMismatches.push(`${where}: a variant of ${String(a.activities.length)} steps, the log has ${String(expected.activities.length)} up to as_of`)
      }
      if (a.name === 'performance' && JSON.stringify(a.byActivity) !== JSON.stringify(sortedKeys(expected.byActivity))) {
        contentMismatches.push(`${where}: events by activity ${JSON.stringify(a.byActivity)}, the log has ${JSON.stringify(sortedKeys(expected.byActivity))}`)
      }
    }
  }
  return { seen, asOfMismatches, contentMismatches, head, logged: logged.length }
}

/** `record` with its keys sorted (performance lists activities by name). */
const sortedKeys = (record: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/** (a) and what makes it mean something: both orders of the runners were read, the last read at the head of the whole log. */
function expectAsOfRule(outcome: Outcome): void {
  const { seen, asOfMismatches, head, logged } = outcome
  expect(seen.some((o) => o.entities > o.process)).toBe(true)
  expect(seen.some((o) => o.process > o.entities)).toBe(true)
  const last = seen.at(-1)
  expect(last?.lowest).toBe(head)
  // The Create and the senders' events, all in the last trace.
  expect(logged).toBeGreaterThan(60)
  expect(last?.answers[0]?.eventIds.length).toBe(logged)
  expect(asOfMismatches).toEqual([])
}

/** A query whose `asOf`, the first time, runs `meanwhile` after it has read (the other calls go through as they are). */
function gatedQuery(query: ReadModelQuery, meanwhile: () => Promise<void>): ReadModelQuery {
  let pending = true
  return new Proxy(query, {
    get(target, property, receiver) {
      if (property === 'asOf') {
        return async () => {
          const asOf = await target.asOf()
          if (pending) {
            pending = false
            await meanwhile()
          }
          return asOf
        }
      }
      const value: unknown = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * The object's view read by the reader while, between its read of `as_of` and its read of the trace,
 * three more events are appended and both runners apply them.
 * @returns the answer's as_of and trace length, and the log's events of the dataset: up to as_of, and all.
 */
async function readWhileApplied(engine: Engine): Promise<{ asOf: number; trace: number; upToAsOf: number; all: number }> {
  const dataset = 'asof-between-reads'
  const ingest = new Ingest(engine.log)
  const send = async (first: number) => {
    const items = [0, 1, 2].map((i) => ({ event: 'Step', timestamp: new Date(BASE + (first + i) * 1000).toISOString(), objects: [ORDER] }))
    await ingest.recordEvents(items, testContext(dataset))
    for (const runner of RUNNER_NAMES) {
      const { log, store } = engine.runners[runner]
      await new Projector(log, store, { runner }).catchUp()
    }
  }
  await send(0)
  const reader = new ProcessReader({ query: gatedQuery(engine.query, () => send(3)), log: engine.log })
  const object = await reader.object(dataset, ORDER.type, ORDER.id)
  const logged = (await engine.log.readStream(dataset, null, 1000)).filter((r) => r.type === 'EventRecorded')
  return { asOf: object.as_of, trace: object.trace.length, upToAsOf: logged.filter((r) => r.position <= object.as_of).length, all: logged.length }
}

const admin = postgresAdminUrl()
const toClose: Engine[] = []
afterAll(async () => {
  for (const e of toClose.splice(0)) await e.close()
})

/** The engine of a describe block, made once, and the scenario's outcome on it, run once. */
function lazyEngine(open: () => Promise<Engine>) {
  let engine: Promise<Engine> | undefined
  let outcome: Promise<Outcome> | undefined
  const get = (): Promise<Engine> => {
    engine ??= open().then((e) => {
      toClose.push(e)
      return e
    })
    return engine
  }
  return {
    engine: get,
    outcome: (): Promise<Outcome> => {
      outcome ??= get().then(runScenario)
      return outcome
    },
  }
}

describe('a consistent as_of across runners under load, on SQLite files', () => {
  const sqlite = lazyEngine(async () => sqliteEngine())

  it('(a) gives each answer the lowest checkpoint of its snapshot, whichever runner is ahead', async () => {
    expectAsOfRule(await sqlite.outcome())
  })

  it('(b) answers exactly what the log holds up to as_of: no event past it, none at or below it missing', async () => {
    expect((await sqlite.outcome()).contentMismatches).toEqual([])
  })

  it('reads as_of and the answer in one snapshot: what the runners apply between the two is in neither', async () => {
    const read = await readWhileApplied(await sqlite.engine())
    expect(read.all).toBe(6)
    expect([read.trace, read.upToAsOf]).toEqual([3, 3])
  })
})

describe.skipIf(admin === null)('a consistent as_of across runners under load, on PostgreSQL', () => {
  const postgres = lazyEngine(() => postgresEngine(admin ?? ''))

  it('(a) gives each answer the lowest checkpoint of its snapshot, whichever runner is ahead', async () => {
    expectAsOfRule(await postgres.outcome())
  })

  /**
   * The object's trace and its events page read the E2O rows (`rm_event_objects`, entities), variants
   * and performance the directly-follows steps with `rm_objects`: each read keeps the rows at or below
   * the snapshot's lowest checkpoint (AS_OF_SQL in src/adapters/postgres/postgres-reads.ts).
   */
  it('(b) answers exactly what the log holds up to as_of: no event past it, none at or below it missing', async () => {
    expect((await postgres.outcome()).contentMismatches).toEqual([])
  })

  it('reads as_of and the answer in one snapshot: what the runners apply between the two is in neither', async () => {
    const read = await readWhileApplied(await postgres.engine())
    expect(read.all).toBe(6)
    expect([read.trace, read.upToAsOf]).toEqual([3, 3])
  })
})
