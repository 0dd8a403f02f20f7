/**
 * The state of projections for operators: each checkpoint, any stop, and how far it lags behind
 * the log. Shown by `ocelog status` and `GET /metrics`; the event sourcing words: a projection
 * keeps read models from the log, its checkpoint is the last position it applied.
 */
import { Type, type Static } from 'typebox'

/** Why a projection stopped: the record it could not apply (a poison record) and the last failure. */
export const ProjectionStop = Type.Object({
  /** The projector (its name), e.g. `read-models` or `read-models-0-of-2`. */
  projection: Type.String(),
  /** Log position of the record it could not apply; null when the record failed before it was read (the cause names it). */
  position: Type.Union([Type.Integer(), Type.Null()]),
  /** Stream of that record, e.g. `dataset-<id>`; null when unknown. */
  stream: Type.Union([Type.String(), Type.Null()]),
  /** The last failure's message. */
  cause: Type.String(),
  /** How many times the record was tried. */
  attempts: Type.Integer({ minimum: 1 }),
  /** When the projection stopped (UTC ISO 8601). */
  stopped_at: Type.String(),
})
export type ProjectionStop = Static<typeof ProjectionStop>

/** One projection as the read-model store holds it. */
export const ProjectionState = Type.Object({
  projection: Type.String(),
  /** Its checkpoint: the last log position it applied; null when it has applied nothing yet. */
  position: Type.Union([Type.Integer(), Type.Null()]),
  /** The projection's code version stored with the checkpoint; null without a checkpoint. */
  version: Type.Union([Type.Integer(), Type.Null()]),
  /** When the checkpoint last moved (UTC ISO 8601); null without a checkpoint. */
  updated_at: Type.Union([Type.String(), Type.Null()]),
  /** Set while the projection is stopped on a record; cleared when a projector with its name starts again. */
  stopped: Type.Union([ProjectionStop, Type.Null()]),
})
export type ProjectionState = Static<typeof ProjectionState>

/**
 * How far a projection is behind the log (README § Operations: lag): the records after its checkpoint
 * up to the head (every dataset's: a shard's checkpoint passes the others' records too), and the age
 * of the oldest of them, as Kafka's consumer lag in time and EventStoreDB's subscription lag measure it.
 */
export const ProjectionLag = Type.Object({
  /** Records in the log after the checkpoint, up to the head. */
  lag_records: Type.Integer({ minimum: 0 }),
  /** False when the log engine stopped counting at a bound (EventStoreDB): then the lag is at least `lag_records`. */
  lag_records_exact: Type.Boolean(),
  /** Seconds (ms precision) since the oldest record not yet applied was appended; 0 when none is behind. */
  lag_seconds: Type.Number({ minimum: 0 }),
})
export type ProjectionLag = Static<typeof ProjectionLag>

/** `ocelog status --json`: the log head and every projection with its lag. */
/** Who holds a projection runner's lease (PostgreSQL; docs/architecture.md#projection-runners-and-leases). */
export const LeaseState = Type.Object({
  /** The runner and its shard, e.g. `entities` or `process-0-of-2`. */
  lease: Type.String(),
  /** The holding process as it names itself: host name and process id. */
  holder: Type.String(),
  /** The database server's process id of the lease's session. */
  pid: Type.Integer(),
  /** When the lease's session connected (UTC ISO 8601). */
  since: Type.String(),
})
export type LeaseState = Static<typeof LeaseState>

export const Status = Type.Object({
  /** Position of the last record in the log; null for an empty log. */
  head: Type.Union([Type.Integer(), Type.Null()]),
  /** The leases held, where projectors run under leases (PostgreSQL); absent elsewhere. A runner missing here has no projector. */
  leases: Type.Optional(Type.Array(LeaseState)),
  projections: Type.Array(
    Type.Object({
      ...ProjectionState.properties,
      ...ProjectionLag.properties,
    }),
  ),
})
export type Status = Static<typeof Status>
