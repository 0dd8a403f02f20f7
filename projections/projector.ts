/**
 * The projector: tails the log from its checkpoint and keeps the read models (DESIGN.md § Read
 * models). Each batch of records is folded into one ChangeSet (pure, change-set.ts) and applied
 * with a compare-and-set of the checkpoint, so a crash or restart resumes where the last applied
 * batch ended, and a record applied twice changes nothing.
 *
 * Several projectors can share the work by dataset: shard i of n takes the datasets whose
 * FNV-1a hash mod n is i, keeps its own checkpoint (`<name>-<i>-of-<n>`), and skips the rest.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { EventLog } from '../src/ports/event-log.js'
import { CheckpointConflictError, type ReadModelStore } from '../src/ports/read-model-store.js'
import type { StoredRecord } from '../src/schemas/records.js'
import { chunkByWeight } from '../src/core/chunk.js'
import { foldRecords } from './change-set.js'

export interface Shard {
  index: number
  count: number
}

export interface ProjectorOptions {
  /** Checkpoint name (default `read-models`). */
  name?: string
  /** Largest run of records folded into one ChangeSet (default 2000). */
  maxBatch?: number
  /**
   * Largest work, in `recordCost` units, applied in one transaction (default 16000: about 2,300
   * events with 3 objects, or 12 events with 50 objects). Bounds the memory of one ChangeSet and
   * how long one apply holds the thread, which the API shares with the projector on the embedded
   * default.
   */
  maxBatchCost?: number
  /**
   * Near the head of the log (under live load), runs are cut at this cost instead (default 1000:
   * about 140 events with 3 objects), and the HTTP server gets the thread between them.
   */
  headRunCost?: number
  /**
   * After applying what had reached the head of the log, wait this long (ms, default 50) before
   * reading on, so that the next transaction takes what arrived meanwhile at once: fewer, larger
   * commits under steady load, for at most this much more delay of the read models.
   */
  settleMs?: number
  shard?: Shard
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>
}

/** 32-bit FNV-1a of a dataset id: stable across processes and versions. */
export function datasetHash(datasetId: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < datasetId.length; i++) {
    h ^= datasetId.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/**
 * Work units of one record for the read models: one per row it writes, plus one per object pair
 * it links (an event with k objects links k(k−1)/2 pairs, so 50 objects cost 1,276 units and 3
 * objects cost 7).
 */
export function recordCost(record: StoredRecord): number {
  if (record.type !== 'EventRecorded') return 2
  const k = record.data.objects.length
  return 1 + k + (k * (k - 1)) / 2
}

/** Splits records (log order kept) into runs of at most `maxCost` units; a record costlier than that runs alone. */
export function splitByCost(records: readonly StoredRecord[], maxCost: number): StoredRecord[][] {
  return chunkByWeight(records, recordCost, maxCost)
}

export class Projector {
  readonly name: string
  private readonly maxBatch: number
  private readonly maxBatchCost: number
  private readonly headRunCost: number
  private readonly settleMs: number
  private readonly shard: Shard | undefined
  /** Emits `applied` (position: number) after every applied batch. */
  readonly events = new EventEmitter()
  private applied: number | null = null
  private appliedRecords = 0

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadModelStore,
    private readonly options: ProjectorOptions = {},
  ) {
    const base = options.name ?? 'read-models'
    this.shard = options.shard
    if (this.shard !== undefined && (this.shard.count < 1 || this.shard.index < 0 || this.shard.index >= this.shard.count)) {
      throw new Error(`projector shard ${String(this.shard.index)} of ${String(this.shard.count)} is out of range`)
    }
    this.name = this.shard === undefined || this.shard.count === 1 ? base : `${base}-${String(this.shard.index)}-of-${String(this.shard.count)}`
    this.maxBatch = options.maxBatch ?? 2000
    this.maxBatchCost = options.maxBatchCost ?? 16000
    this.headRunCost = options.headRunCost ?? 1000
    this.settleMs = options.settleMs ?? 50
    this.events.setMaxListeners(0)
  }

  /** Last position this projector applied (null before the first batch). */
  get position(): number | null {
    return this.applied
  }

  /** Records applied since this Projector was made. */
  get recordsApplied(): number {
    return this.appliedRecords
  }

  private mine(record: StoredRecord): boolean {
    return this.shard === undefined || this.shard.count === 1 || datasetHash(record.datasetId) % this.shard.count === this.shard.index
  }

  private async applyRun(run: readonly StoredRecord[]): Promise<void> {
    const last = run[run.length - 1]
    if (last === undefined) return
    const changes = foldRecords(run.filter((r) => this.mine(r)))
    await this.store.apply(this.name, this.applied, last.position, changes)
    this.applied = last.position
    this.appliedRecords += changes.recordCount
    this.events.emit('applied', last.position)
  }

  /**
   * Applies a batch read from the log in runs of at most `runCost`, one transaction each. With
   * `yieldBetween`, other work on this thread (the HTTP server) runs after each run.
   */
  private async applyBatch(batch: readonly StoredRecord[], runCost: number, yieldBetween: boolean): Promise<void> {
    for (const run of splitByCost(batch, runCost)) {
      await this.applyRun(run)
      // An embedded log and store answer without I/O, so this would run on microtasks alone and
      // starve the HTTP server in the same process until it caught up.
      if (yieldBetween) await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }

  /** Applies everything the log holds now, then returns the number of records applied. */
  async catchUp(): Promise<number> {
    this.applied = await this.store.checkpoint(this.name)
    const before = this.appliedRecords
    for (;;) {
      const batch = await this.log.readAll(this.applied, this.maxBatch)
      if (batch.length === 0) return this.appliedRecords - before
      await this.applyBatch(batch, this.maxBatchCost, false)
    }
  }

  /** Drops the read models and applies the whole log again. Returns the number of records applied. */
  async rebuild(): Promise<number> {
    await this.store.reset()
    return this.catchUp()
  }

  /**
   * Follows the log until `signal` aborts. Errors (an engine away, a checkpoint moved by another
   * worker) are logged and retried from the stored checkpoint with back-off up to 5 s.
   */
  async run(signal: AbortSignal): Promise<void> {
    let delay = 100
    while (!signal.aborted) {
      try {
        this.applied = await this.store.checkpoint(this.name)
        for await (const batch of this.log.tail(this.applied, { signal, maxBatch: this.maxBatch })) {
          // Near the head (a short batch), small runs keep the HTTP server's latency low, then settle.
          // Behind (a full batch), large runs, with the HTTP server between them: for events with a few
          // objects one run takes a whole batch, about what ingest appends in a turn, so the two keep
          // pace on the thread they share; events with many objects cost far more to project than to
          // append, and then the read models fall behind rather than the API stalling.
          const behind = batch.length >= this.maxBatch
          await this.applyBatch(batch, behind ? this.maxBatchCost : this.headRunCost, true)
          if (!behind && this.settleMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, this.settleMs))
          delay = 100
        }
      } catch (error) {
        if (signal.aborted) return
        if (error instanceof CheckpointConflictError) this.options.logger?.warn({ err: error }, 'projector checkpoint moved; resuming from it')
        else this.options.logger?.error({ err: error }, `projector ${this.name} failed; retrying in ${String(delay)} ms`)
        await new Promise((resolve) => setTimeout(resolve, delay))
        delay = Math.min(delay * 2, 5000)
      }
    }
  }
}
