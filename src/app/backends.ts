/**
 * What the composition root (composition.ts) hands the rest of the service: the ports, opened on
 * the engines the configuration chose (README § Architecture). Above the ports, code sees the
 * engines only through this.
 */
import type { EventLog } from '../ports/event-log.js'
import type { KeyStore } from '../ports/key-store.js'
import type { Leases } from '../ports/leases.js'
import type { RateLimiter } from '../ports/rate-limiter.js'
import type { RateBudget } from '../adapters/rate-limiter.js'
import type { ReadModelQuery } from '../ports/read-model-query.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import type { CommitFeed } from '../projector/embedded.js'
import type { HealingReadModels } from '../adapters/sqlite/read-models/read-models-recovery.js'

export interface Backends {
  /** 'embedded': SQLite files; 'production': EventStoreDB + MongoDB; 'postgres': one PostgreSQL database. */
  mode: 'embedded' | 'production' | 'postgres'
  /** Where the data lives, for logs and messages (never a password). */
  describe: string
  log: EventLog
  /** The projector's writer port of the read models. */
  readModels: ReadModelStore
  /** The read side's query port over the same read models (`/v1/process/*`, MCP, `/ui/`, `ocelog export`). */
  query: ReadModelQuery
  keys: KeyStore
  /**
   * Present when the log is an embedded file that another thread can read and be told of each
   * commit (the embedded default): `serve` then runs the projector in a worker thread woken by it.
   */
  commitFeed?: CommitFeed
  /** Whether an error of these engines means one is away (retry later) rather than a failed write; for the projector. */
  isUnavailable(error: unknown): boolean
  /** What opening the engines did that an operator should read in the log, e.g. a read-model file made anew (then rebuilt from the log). */
  notices: readonly string[]
  /** Embedded: the read models that heal themselves (read-models-recovery.ts), for the server to connect to its projector. */
  healing?: HealingReadModels
  /**
   * A rate limiter that every process on these engines shares (PostgreSQL's), when they offer one;
   * REDIS_URL still takes precedence (composition.ts, openRateLimiter).
   */
  sharedRateLimiter?: (budget: RateBudget) => RateLimiter
  /**
   * Present when several processes may project into these read models (PostgreSQL): each runner
   * is then run under its lease (src/projector/leased-runners.ts), and `ocelog status` shows the holders.
   */
  leases?: Leases
  close(): Promise<void>
}
