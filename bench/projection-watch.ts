/**
 * Watches how far the service's read models trail its log, from outside the service: the SQLite
 * file opened read-only (WAL lets this reader run beside the service's writer without blocking
 * it). `head` is the last appended position, `checkpoint` the projector's last applied one.
 */
import { lagOf } from '../src/core/lag.js'
import { projectorCheckpoints, READ_MODELS_PROJECTION } from '../src/projector/checkpoints.js'
import { ALL_CHECKPOINTS_SQL, openReadModelsReadOnly } from '../src/adapters/sqlite/read-models/read-models-database.js'
import Database from 'better-sqlite3'
import { join } from 'node:path'

export interface Lag {
  head: number
  checkpoint: number
  /** Records appended but not yet applied to the read models. */
  behind: number
}

export interface CatchUp {
  /** Seconds from the end of the load until the checkpoint reached the head (null: timed out). */
  seconds: number | null
  /** Records behind when the load ended. */
  behindAtEnd: number
  /** Records behind when the wait stopped (0 unless it timed out). */
  behindAfter: number
  /** Records the projector applied between the end of the load and the end of the wait, per second. */
  recordsPerSec: number
}

export class ProjectionWatch {
  private readonly db: Database.Database
  private readonly rmDb: Database.Database
  private readonly head: Database.Statement<[], { p: number | null }>
  /** The projector's checkpoint names (JSON) and how many there are. */
  private readonly names: string
  private readonly count = projectorCheckpoints().length
  private readonly checkpoint: Database.Statement<[string], { n: number; position: number | null }>
  private readonly firstAfter: Database.Statement<[number], { appended_at: string }>

  /** @param dataDir the service's OCELOG_DATA_DIR (its `ocelog.db` and read-models files must exist). */
  constructor(dataDir: string, projector = READ_MODELS_PROJECTION) {
    this.names = JSON.stringify(projectorCheckpoints(projector))
    this.db = new Database(join(dataDir, 'ocelog.db'), { readonly: true, fileMustExist: true })
    this.head = this.db.prepare('SELECT max(position) AS p FROM records')
    this.firstAfter = this.db.prepare('SELECT appended_at FROM records WHERE position > ? ORDER BY position LIMIT 1')
    this.rmDb = openReadModelsReadOnly(dataDir)
    // The read models are as far as their lowest projection (0 while one has no checkpoint), over both runners' files.
    this.checkpoint = this.rmDb.prepare(
      `SELECT count(*) AS n, min(position) AS position
       FROM (${ALL_CHECKPOINTS_SQL})
       WHERE projector IN (SELECT value FROM json_each(?))`,
    )
  }

  lag(): Lag {
    const head = this.head.get()?.p ?? 0
    const row = this.checkpoint.get(this.names)
    const checkpoint = row === undefined || row.n < this.count ? 0 : (row.position ?? 0)
    return { head, checkpoint, behind: Math.max(0, head - checkpoint) }
  }

  /**
   * How far behind the read models are in time, s: the age of the oldest record not yet applied
   * (now − the append time of the record just after the lowest checkpoint), 0 when caught up. The
   * service's `ocelog_projection_lag_seconds` by the same rule (src/core/lag.ts `lagOf`), read
   * from outside: the largest over the projections, since the lowest checkpoint lags most.
   * @param nowMs the clock to age the record against (epoch ms).
   */
  lagSeconds(nowMs = Date.now()): number {
    const lag = this.lag()
    if (lag.behind === 0) return 0
    const first = this.firstAfter.get(lag.checkpoint)
    return lagOf(lag.behind, true, first?.appended_at ?? null, nowMs).lag_seconds
  }

  /**
   * Polls every `pollMs` until the read models have caught up with the log.
   * @param endedAt wall clock (ms) when the load stopped.
   * @param settleUntil wall clock (ms) before which "caught up" is not believed, because requests
   *   still in flight when the load stopped may append later.
   */
  async waitCaughtUp(endedAt: number, settleUntil: number, timeoutSec: number, pollMs = 20): Promise<CatchUp> {
    const atEnd = this.lag()
    const deadline = endedAt + timeoutSec * 1000
    for (;;) {
      const now = Date.now()
      const lag = this.lag()
      const applied = lag.checkpoint - atEnd.checkpoint
      const seconds = (now - endedAt) / 1000
      if (lag.behind === 0 && now >= settleUntil) {
        return { seconds, behindAtEnd: atEnd.behind, behindAfter: 0, recordsPerSec: seconds > 0 ? applied / seconds : 0 }
      }
      if (now >= deadline) return { seconds: null, behindAtEnd: atEnd.behind, behindAfter: lag.behind, recordsPerSec: seconds > 0 ? applied / seconds : 0 }
      await new Promise((r) => setTimeout(r, pollMs))
    }
  }

  close(): void {
    this.db.close()
    this.rmDb.close()
  }
}
