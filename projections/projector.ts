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

export class Projector {
  readonly name: string
  private readonly maxBatch: number
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

  private async applyBatch(batch: readonly StoredRecord[]): Promise<void> {
    const last = batch[batch.length - 1]
    if (last === undefined) return
    const changes = foldRecords(batch.filter((r) => this.mine(r)))
    await this.store.apply(this.name, this.applied, last.position, changes)
    this.applied = last.position
    this.appliedRecords += changes.recordCount
    this.events.emit('applied', last.position)
  }

  /** Applies everything the log holds now, then returns the number of records applied. */
  async catchUp(): Promise<number> {
    this.applied = await this.store.checkpoint(this.name)
    const before = this.appliedRecords
    for (;;) {
      const batch = await this.log.readAll(this.applied, this.maxBatch)
      if (batch.length === 0) return this.appliedRecords - before
      await this.applyBatch(batch)
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
          await this.applyBatch(batch)
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
