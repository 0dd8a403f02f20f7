/**
 * Port: leases, the right of one process to run one projection runner (a runner and its shard) while
 * others wait as standbys (docs/architecture.md#projection-runners-and-leases). Adapter: PostgreSQL
 * (src/adapters/postgres/postgres-lease.ts: a session advisory lock on a connection of its own).
 * The embedded default needs none: one process per data directory.
 */

/** A lease held: `lost` aborts when the holder can no longer be sure it holds it (its session ended or stopped answering). */
export interface Lease {
  name: string
  lost: AbortSignal
  /** Releases the lease. */
  release(): Promise<void>
}

/** Who holds a lease: the engine's id of the holding session, the holder's description, and since when (UTC ISO 8601). */
export interface LeaseHolder {
  name: string
  pid: number
  holder: string
  since: string
}

export interface Leases {
  /**
   * Waits until this process holds lease `name`, trying again every retry interval (a standby is a
   * caller still waiting here). Resolves null when `signal` aborts first.
   */
  acquire(name: string, signal: AbortSignal): Promise<Lease | null>
  /** Takes lease `name` if nobody holds it; null when another holder has it. */
  tryAcquire(name: string): Promise<Lease | null>
  /** The holders of the leases `names` that are held, ordered by name. */
  holders(names: readonly string[]): Promise<LeaseHolder[]>
}
