/**
 * The import plan of a staged log (stage.ts): the same actions, keys, order and batches as
 * planImport (memory-plan.ts) gives for the log in memory, built from the staging file a page at a time.
 * 1. The first type of each object id is read into memory (E2O and O2O resolve to it), with a number
 *    per object (ObjectNumbers, what the actions name objects by): memory grows with the log's
 *    distinct objects (about 100 bytes each, while planning), not with its events or its file size.
 * 2. Objects, then events, are planned in file order by ActionPlanner, each action appended to the
 *    staging's `action` table with its time and planning order (`seq`), indexed on (time, seq)
 *    from the start.
 * 3. `batches()` reads the actions back in sending order (time, then seq: upserts are planned before
 *    events, so that is planImport's order) through that index, a page at a time, and cuts them into
 *    batches as they come (Cutter), which keeps per object number the batch of its latest upsert (4
 *    bytes) and the event batches naming it since.
 *
 * Planning can run a page at a time (StagedPlanner.step) while the batches are read and sent. The
 * actions are final, in the table and in their final order, up to a time (the *horizon*) that moves
 * as planning goes on; past it, `batches()` yields null (nothing to send yet) until planning is done:
 * - while the objects are planned, up to the earliest time of any object's first upsert (the log's
 *   initial values, as a rule), that time included, unless an event comes before it: every object
 *   planned later has upserts at or after it, and at that time after the ones planned before
 *   (planning order breaks ties; upserts go before events at equal times);
 * - once the objects are planned, up to the log's first event time, that time included: every event
 *   action's time is at or after it, and events planned later at that time come after the ones
 *   planned before;
 * - once the events are planned, everything.
 * `ocelog import` sends what is final while it plans the rest (docs/import.md). The batches are the
 * same either way.
 */
import type { Statement } from 'better-sqlite3'
import { LIMITS } from '../../core/limits.js'
import { typeEvent, typeObject, valueTyper, type ValueTyper } from './model.js'
import { ActionPlanner, ObjectNumbers, type Action } from './action-planner.js'
import { Cutter } from './cutter.js'
import { UNDEFINED_OBJECT_TYPE, type ImportPlan, type PlannedBatch, type PlanOptions } from './plan.js'
import type { Staging } from './stage.js'

/** Rows read per page. */
const PAGE_ROWS = 1_000

/** The staged time of an action without time (initial values, planned at -Infinity): before any real time (ms). */
const BEFORE_ALL_TIMES = -9e15

/** A plan whose batches are read from the staging file as they are sent. */
export interface StagedPlan extends Omit<ImportPlan, 'batches'> {
  /** The batches in sending order (every `after` index is smaller than the batch's own), read as iterated. */
  batches(): Generator<PlannedBatch>
}

type Payload = [0, number, string, Action['item'], boolean] | [1, number[], string, Action['item']]

/**
 * Plans the import of a staged log a page at a time (see module comment), so that its batches can
 * be sent while it plans: `step()` plans one page; `batches()` yields each batch as soon as every
 * action before its end is planned, and null while it must wait for `step()`.
 */
export class StagedPlanner {
  private readonly batchSize: number
  private readonly numbers = new ObjectNumbers()
  private readonly planner: ActionPlanner
  private readonly insert: Statement<[number, number, string]>
  private readonly objectTyper: ValueTyper
  private readonly eventTyper: ValueTyper
  private readonly pageOf: Statement<[number, number, number, number], { time: number; seq: number; payload: string }>
  private phase: 'objects' | 'events' | 'done' = 'objects'
  private after = 0
  /** Actions at or before this staged time (ms) are final (see module comment). */
  private horizon: number
  /** The log's first event time (staged ms; +∞ without events). */
  private readonly firstEvent: number
  /** Upserts planned so far. */
  private upsertCount = 0
  /** Objects (staged rows) and events planned so far. */
  objectsPlanned = 0
  eventsPlanned = 0
  /** Distinct (type, id) the log defines. */
  readonly objects: number

  /**
   * Reads the first type of every staged object id into memory (see module comment) and prepares
   * the planning; nothing is planned until `step()`.
   */
  constructor(
    private readonly staging: Staging,
    options: PlanOptions = {},
  ) {
    this.batchSize = Math.min(options.batchSize ?? LIMITS.batchItemsMax, LIMITS.batchItemsMax)
    staging.commit()
    const { db } = staging
    for (let after = 0, page = staging.idPage(after, PAGE_ROWS); page.length > 0; page = staging.idPage(after, PAGE_ROWS)) {
      for (const r of page) this.numbers.define(r.type, r.id)
      after = page[page.length - 1]?.seq ?? after
    }
    this.objects = (db.prepare('SELECT count(*) FROM (SELECT DISTINCT type, id FROM object)').pluck().get() as number | undefined) ?? 0
    this.planner = new ActionPlanner(this.numbers, options.unknownObjectType ?? UNDEFINED_OBJECT_TYPE, options.keyPrefix ?? '')
    this.insert = db.prepare<[number, number, string]>('INSERT INTO action (time, seq, payload) VALUES (?, ?, ?)')
    this.objectTyper = valueTyper(staging.objectTypes, staging.typeText)
    this.eventTyper = valueTyper(staging.eventTypes, staging.typeText)
    this.pageOf = db.prepare<[number, number, number, number], { time: number; seq: number; payload: string }>(
      'SELECT time, seq, payload FROM action WHERE (time, seq) > (?, ?) AND time <= ? ORDER BY time, seq LIMIT ?',
    )
    // The index is kept from the start, so that what is final can be read while the objects are planned.
    db.exec('CREATE INDEX action_order ON action (time, seq)')
    const firstEvent = db.prepare('SELECT min(time) FROM event').pluck().get() as number | null | undefined
    this.firstEvent = firstEvent ?? Number.POSITIVE_INFINITY
    // Up to the earliest first upsert's time, or to the first event's when that comes before it.
    const firstUpsert = staging.firstObjectTime === Number.NEGATIVE_INFINITY ? BEFORE_ALL_TIMES : staging.firstObjectTime
    this.horizon = Math.min(firstUpsert, this.firstEvent)
  }

  /** What is being planned: the objects, then the events, then nothing. */
  get planning(): 'objects' | 'events' | 'done' {
    return this.phase
  }

  /** Whether every object and event is planned. */
  get done(): boolean {
    return this.phase === 'done'
  }

  /** Events planned (not skipped) so far: the plan's total once `done`. */
  get events(): number {
    return this.planner.events
  }

  /** Upserts planned so far: the plan's total once `done`. */
  get upserts(): number {
    return this.upsertCount
  }

  private put(a: Action): void {
    const payload: Payload = a.kind === 'upsert' ? [0, a.key, a.source, a.item, a.first] : [1, a.keys, a.source, a.item]
    this.insert.run(a.time === Number.NEGATIVE_INFINITY ? BEFORE_ALL_TIMES : a.time, a.seq, JSON.stringify(payload))
  }

  /**
   * Plans one page of PAGE_ROWS objects or events, in its own transaction.
   * @returns whether anything is left to plan.
   */
  step(): boolean {
    const { db } = this.staging
    if (this.phase === 'objects') {
      const page = this.staging.objectPage(this.after, PAGE_ROWS)
      if (page.length > 0) {
        db.exec('BEGIN')
        for (const { object } of page) {
          for (const a of this.planner.objectActions(typeObject(object, this.objectTyper))) {
            this.put(a)
            this.upsertCount += 1
          }
        }
        db.exec('COMMIT')
        this.objectsPlanned += page.length
        this.after = page[page.length - 1]?.seq ?? this.after
        return true
      }
      // The objects are planned: what comes before the first event is in the table, in its final order.
      this.horizon = this.firstEvent
      this.phase = 'events'
      this.after = 0
      return true
    }
    if (this.phase === 'events') {
      const page = this.staging.eventPage(this.after, PAGE_ROWS)
      if (page.length > 0) {
        db.exec('BEGIN')
        for (const { event } of page) {
          const a = this.planner.eventAction(typeEvent(event, this.eventTyper))
          if (a !== null) this.put(a)
        }
        db.exec('COMMIT')
        this.eventsPlanned += page.length
        this.after = page[page.length - 1]?.seq ?? this.after
        return true
      }
      // Planned: the ids are no longer needed.
      this.numbers.clear()
      this.horizon = Number.POSITIVE_INFINITY
      this.phase = 'done'
    }
    return false
  }

  /**
   * The batches in sending order, each yielded once every action before its end is planned; null
   * while the next one waits for `step()` (never once `done`).
   */
  *batches(): Generator<PlannedBatch | null> {
    const cutter = new Cutter(this.batchSize)
    let time = BEFORE_ALL_TIMES - 1
    let seq = -1
    for (;;) {
      const done = this.done
      const page = this.pageOf.all(time, seq, this.horizon, PAGE_ROWS)
      if (page.length === 0) {
        if (done) break
        yield null
        continue
      }
      for (const row of page) {
        const p = JSON.parse(row.payload) as Payload
        const t = row.time === BEFORE_ALL_TIMES ? Number.NEGATIVE_INFINITY : row.time
        const action: Action =
          p[0] === 0
            ? { kind: 'upsert', time: t, seq: row.seq, key: p[1], source: p[2], item: p[3] as Extract<Action, { kind: 'upsert' }>['item'], first: p[4] }
            : { kind: 'event', time: t, seq: row.seq, keys: p[1], source: p[2], item: p[3] as Extract<Action, { kind: 'event' }>['item'] }
        yield* cutter.push(action)
        time = row.time
        seq = row.seq
      }
    }
    yield* cutter.finish()
  }

  /** The plan's totals, undefined objects and skips (final only once `done`). */
  totals(): Omit<StagedPlan, 'batches'> {
    return {
      events: this.planner.events,
      upserts: this.upsertCount,
      objects: this.objects,
      undefinedObjects: this.planner.undefinedObjects(),
      skipped: this.planner.skipped,
    }
  }
}

/**
 * Plans the import of the log staged in `staging` whole (see module comment), then returns it.
 * @param onPlanned called every page with the events and objects planned so far.
 */
export function planStaged(staging: Staging, options: PlanOptions = {}, onPlanned?: (events: number, objects: number) => void): StagedPlan {
  const planner = new StagedPlanner(staging, options)
  while (planner.step()) onPlanned?.(planner.eventsPlanned, planner.objectsPlanned)
  function* batches(): Generator<PlannedBatch> {
    for (const batch of planner.batches()) {
      // Planning is done: no batch waits for it.
      if (batch === null) throw new Error('a planned import yielded no batch')
      yield batch
    }
  }
  return { ...planner.totals(), batches }
}
