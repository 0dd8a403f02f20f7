/**
 * The import plan of a staged log (stage.ts): the same actions, keys, order and batches as
 * planImport (plan.ts) gives for the log in memory, built from the staging file a page at a time.
 * 1. The first type of each object id is read into memory (E2O and O2O resolve to it), with a number
 *    per object (ObjectNumbers, what the actions name objects by): memory grows with the log's
 *    distinct objects (about 100 bytes each, while planning), not with its events or its file size.
 * 2. Objects, then events, are planned in file order by ActionPlanner, each action appended to the
 *    staging's `action` table with its time and planning order (`seq`).
 * 3. `batches()` reads the actions back in sending order (time, then seq: upserts are planned before
 *    events, so that is planImport's order) through an index, a page at a time, and cuts them into
 *    batches as they come (Cutter), which keeps per object number the batch of its latest upsert (4
 *    bytes) and the event batches naming it since.
 */
import { LIMITS } from '../../core/limits.js'
import { typeEvent, typeObject, valueTyper } from './model.js'
import { ActionPlanner, Cutter, ObjectNumbers, UNDEFINED_OBJECT_TYPE, type Action, type ImportPlan, type PlannedBatch, type PlanOptions } from './plan.js'
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
 * Plans the import of the log staged in `staging` (see module comment).
 * @param onPlanned called every page with the events and objects planned so far.
 */
export function planStaged(staging: Staging, options: PlanOptions = {}, onPlanned?: (events: number, objects: number) => void): StagedPlan {
  const batchSize = Math.min(options.batchSize ?? LIMITS.batchItemsMax, LIMITS.batchItemsMax)
  staging.commit()
  const { db } = staging
  const numbers = new ObjectNumbers()
  for (let after = 0, page = staging.idPage(after, PAGE_ROWS); page.length > 0; page = staging.idPage(after, PAGE_ROWS)) {
    for (const r of page) numbers.define(r.type, r.id)
    after = page[page.length - 1]?.seq ?? after
  }
  const defined = (db.prepare('SELECT count(*) FROM (SELECT DISTINCT type, id FROM object)').pluck().get() as number | undefined) ?? 0
  const planner = new ActionPlanner(numbers, options.unknownObjectType ?? UNDEFINED_OBJECT_TYPE, options.keyPrefix ?? '')
  const insert = db.prepare<[number, number, string]>('INSERT INTO action (time, seq, payload) VALUES (?, ?, ?)')
  const put = (a: Action) => {
    const payload: Payload = a.kind === 'upsert' ? [0, a.key, a.source, a.item, a.first] : [1, a.keys, a.source, a.item]
    insert.run(a.time === Number.NEGATIVE_INFINITY ? BEFORE_ALL_TIMES : a.time, a.seq, JSON.stringify(payload))
  }
  db.exec('BEGIN')
  let upserts = 0
  let objects = 0
  const objectTyper = valueTyper(staging.objectTypes, staging.typeText)
  for (let after = 0, page = staging.objectPage(after, PAGE_ROWS); page.length > 0; page = staging.objectPage(after, PAGE_ROWS)) {
    for (const { object } of page) {
      for (const a of planner.objectActions(typeObject(object, objectTyper))) {
        put(a)
        upserts += 1
      }
    }
    objects += page.length
    after = page[page.length - 1]?.seq ?? after
    db.exec('COMMIT; BEGIN')
    onPlanned?.(0, objects)
  }
  const eventTyper = valueTyper(staging.eventTypes, staging.typeText)
  let events = 0
  for (let after = 0, page = staging.eventPage(after, PAGE_ROWS); page.length > 0; page = staging.eventPage(after, PAGE_ROWS)) {
    for (const { event } of page) {
      const a = planner.eventAction(typeEvent(event, eventTyper))
      if (a !== null) put(a)
    }
    events += page.length
    after = page[page.length - 1]?.seq ?? after
    db.exec('COMMIT; BEGIN')
    onPlanned?.(events, objects)
  }
  db.exec('COMMIT')
  // Planned: the ids are no longer needed (the batches' generator shares this scope, which would keep them).
  numbers.clear()
  db.exec('CREATE INDEX action_order ON action (time, seq)')

  const pageOf = db.prepare<[number, number, number], { time: number; seq: number; payload: string }>(
    'SELECT time, seq, payload FROM action WHERE (time, seq) > (?, ?) ORDER BY time, seq LIMIT ?',
  )
  function* batches(): Generator<PlannedBatch> {
    const cutter = new Cutter(batchSize)
    let time = BEFORE_ALL_TIMES - 1
    let seq = -1
    for (let page = pageOf.all(time, seq, PAGE_ROWS); page.length > 0; page = pageOf.all(time, seq, PAGE_ROWS)) {
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

  return {
    batches,
    events: planner.events,
    upserts,
    objects: defined,
    undefinedObjects: planner.undefinedObjects(),
    skipped: planner.skipped,
  }
}
