/**
 * The import plan's second step (pure): the actions of action-planner.ts, in sending order, cut into
 * batches (plan.ts gives their shape).
 *
 * Order. All actions (upserts and events) are sorted by time (upserts first at equal times, initial
 * values at 1970 or without time first of all, then file order), cut into batches of at most 100
 * of one kind, and each batch lists in `after` the earlier batches it must wait for. Batches run
 * concurrently once what they wait for has been answered (`runPlan`). The rule is per object,
 * reading an upsert as a write of the object and an event naming it as a read:
 * - an upsert waits for the object's earlier upserts (its attribute history is appended in the
 *   log's time order, so its final values are the log's last ones) and for the events naming the
 *   object before the upsert's time;
 * - an event waits for the upserts of its objects at or before its time.
 * So for every object, the service's log has its attribute changes in time order, each after the
 * events before it and before the events after it, which is all the read models can observe (events
 * carry no object attributes here; events among themselves may land in any order, and analysis
 * orders them by timestamp). A batch that must wait for another open batch is held open behind it
 * (Cutter) instead of closing that one early, so objects that change between their events do not
 * fragment the batches, and at most a few batches wait at any time.
 */
import type { EventInput, ObjectUpsertInput } from '../../schemas/api.js'
import type { Action } from './action-planner.js'
import type { PlannedBatch } from './plan.js'

/** Open batches the Cutter holds at most (see Cutter); more would only hold small upsert batches open longer. */
const OPEN_BATCHES_MAX = 16

interface OpenLayer {
  kind: PlannedBatch['kind']
  items: (EventInput | ObjectUpsertInput)[]
  sources: string[]
  /** Upsert batches: PlannedUpserts.firsts. */
  firsts: boolean[]
  /** Objects (ObjectNumbers) named by the items. */
  keys: Set<number>
}

/**
 * Cuts time-ordered actions into batches with their `after` lists (see module comment), as they
 * come: `push` returns the batches an action closed, `finish` the last ones.
 *
 * Up to OPEN_BATCHES_MAX batches are open at once, in the order they will close (and be numbered).
 * An action goes into the first open batch of its kind that comes after every open batch it must
 * wait for: an upsert after the open event batches naming its object (and not before the open batch
 * holding the object's earlier upserts, which it may join: items of a batch are applied in order);
 * an event after the open upsert batches of its objects. When that batch is full, or there is none,
 * a new batch is opened at the first place the action may go (so batches that wait stay few, and
 * the first one fills). So an upsert that must wait for the open event batch no longer closes it
 * (nor an event the open upsert batch): the other events go on filling it, and batches stay near
 * 100 items. A batch closes when it is first and full, or when the most open batches are reached
 * (the first one closes). For closed batches, the Cutter holds per object the batch of its latest
 * upsert and the event batches naming it since, which give a closing batch its `after`.
 */
export class Cutter {
  private count = 0
  /** Per object (ObjectNumbers): 1 + the batch of its latest upsert, 0 for none; 4 bytes per object. */
  private lastUpsert = new Int32Array(1024)
  /** Per object: the event batches naming it since its latest upsert, ascending: one as a number, more as an array (see closeFirst). */
  private readonly readersSince = new Map<number, number | number[]>()
  /** The open batches, in closing order. */
  private readonly layers: OpenLayer[] = []
  /** The batch of the last event pushed: the next event may not precede it. */
  private lastEventLayer: OpenLayer | undefined

  constructor(private readonly batchSize: number) {}

  /** The batch of object `k`'s latest upsert, or undefined. */
  private lastUpsertOf(k: number): number | undefined {
    const v = k < this.lastUpsert.length ? (this.lastUpsert[k] ?? 0) : 0
    return v === 0 ? undefined : v - 1
  }

  private setLastUpsert(k: number, index: number): void {
    if (k >= this.lastUpsert.length) {
      const grown = new Int32Array(Math.max(k + 1, this.lastUpsert.length * 2))
      grown.set(this.lastUpsert)
      this.lastUpsert = grown
    }
    this.lastUpsert[k] = index + 1
  }

  /**
   * Closes the first open batch, numbered next. Every batch it may have to wait for is closed by now
   * (they come before it), so its `after` is read here: per object, the batch of its latest upsert,
   * and for an upsert also the event batches naming the object since.
   */
  private closeFirst(out: PlannedBatch[]): void {
    const layer = this.layers.shift()
    if (layer === undefined) return
    const index = this.count++
    const waits = new Set<number>()
    for (const k of layer.keys) {
      const last = this.lastUpsertOf(k)
      if (last !== undefined) waits.add(last)
      if (layer.kind === 'objects') {
        const readers = this.readersSince.get(k)
        if (typeof readers === 'number') waits.add(readers)
        else for (const r of readers ?? []) waits.add(r)
      }
    }
    const after = [...waits].sort((a, b) => a - b)
    out.push(
      layer.kind === 'events'
        ? { kind: 'events', items: layer.items as EventInput[], sources: layer.sources, after }
        : { kind: 'objects', items: layer.items as ObjectUpsertInput[], sources: layer.sources, firsts: layer.firsts, after },
    )
    for (const k of layer.keys) {
      if (layer.kind === 'objects') {
        this.setLastUpsert(k, index)
        this.readersSince.delete(k)
      } else {
        const readers = this.readersSince.get(k)
        // One reader is kept as a number, a few in an array of their exact length: most objects have one
        // to three, and an array grown by push keeps room for 16 more.
        if (readers === undefined) this.readersSince.set(k, index)
        else if (typeof readers === 'number') this.readersSince.set(k, [readers, index])
        else if (readers.length < 8) this.readersSince.set(k, [...readers, index])
        else readers.push(index)
      }
    }
  }

  /**
   * Where `a` may go among the open batches (see class comment): `join`, the first place it may join
   * an open batch of its kind; `open`, the first place a new batch for it may be opened (after the
   * batch of its object's earlier upserts, or for an event the batch of the event before it, which `a`
   * may join but not precede).
   */
  private lowest(a: Action): { join: number; open: number } {
    let join = 0
    let open = 0
    this.layers.forEach((layer, i) => {
      if (a.kind === 'upsert') {
        if (!layer.keys.has(a.key)) return
        join = Math.max(join, layer.kind === 'events' ? i + 1 : i)
        open = Math.max(open, i + 1)
      } else if (layer === this.lastEventLayer) {
        // Events reach the log in sending order (time, then the file's order): an event never precedes
        // the batch of the event before it (it may join it). Positions break ties of timestamps in
        // traces and in the analysis reads, and the directly-follows projection then only appends.
        join = Math.max(join, i)
        open = Math.max(open, i + 1)
      } else if (layer.kind === 'objects' && a.keys.some((k) => layer.keys.has(k))) {
        join = Math.max(join, i + 1)
        open = Math.max(open, i + 1)
      }
    })
    return { join, open }
  }

  /** Adds the next action in sending order. @returns the batches it closed. */
  push(a: Action): PlannedBatch[] {
    const out: PlannedBatch[] = []
    const kind: PlannedBatch['kind'] = a.kind === 'upsert' ? 'objects' : 'events'
    const { join, open } = this.lowest(a)
    let layer = this.layers.find((l, i) => i >= join && l.kind === kind)
    if (layer === undefined || layer.items.length >= this.batchSize) {
      let at = open
      if (this.layers.length >= OPEN_BATCHES_MAX) {
        this.closeFirst(out)
        at = Math.max(0, at - 1)
      }
      layer = { kind, items: [], sources: [], firsts: [], keys: new Set() }
      this.layers.splice(at, 0, layer)
    }
    layer.items.push(a.item)
    layer.sources.push(a.source)
    if (a.kind === 'event') this.lastEventLayer = layer
    if (a.kind === 'upsert') {
      layer.keys.add(a.key)
      layer.firsts.push(a.first)
    } else for (const k of a.keys) layer.keys.add(k)
    while ((this.layers[0]?.items.length ?? 0) >= this.batchSize) this.closeFirst(out)
    return out
  }

  /** The batches still open, in order. */
  finish(): PlannedBatch[] {
    const out: PlannedBatch[] = []
    while (this.layers.length > 0) this.closeFirst(out)
    return out
  }
}
