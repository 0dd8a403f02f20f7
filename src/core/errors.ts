/**
 * Ocelog's own errors as one tagged union, after the KurrentDB client's `CommandError`: every
 * error Ocelog raises on purpose is an `OcelogError` with a literal `kind`. They are mapped to
 * RFC 9457 problem details in one place (src/api/problem.ts) and to CLI messages in one place
 * (src/cli/context.ts); a switch over `kind` there is exhaustive, so a new kind fails to compile
 * until both places handle it.
 */
import type { ProjectionStop } from '../schemas/projections.js'

/** The base of every Ocelog error; `kind` is the union's tag. */
export abstract class OcelogErrorBase<K extends string> extends Error {
  abstract readonly kind: K
}

/**
 * A query parameter (or MCP tool argument) broke its rule. Maps to 422 problem+json whose
 * `errors[0].path` names the parameter.
 */
export class InvalidParameterError extends OcelogErrorBase<'invalid_parameter'> {
  override readonly name = 'InvalidParameterError'
  readonly kind = 'invalid_parameter' as const
  /**
   * @param parameter the parameter's name as the caller wrote it, e.g. `from`, `cursor`, `object_type`.
   * @param rule what the parameter must be, e.g. `ISO 8601 date-time with Z or an offset`.
   */
  constructor(
    readonly parameter: string,
    readonly rule: string,
  ) {
    super(`${parameter}: ${rule}`)
  }
}

/** What was asked for does not exist in the caller's dataset (404). */
export class NotFoundError extends OcelogErrorBase<'not_found'> {
  override readonly name = 'NotFoundError'
  readonly kind = 'not_found' as const
}

/** The log engine could not take or serve the request (503 with Retry-After; nothing of the request was accepted). */
export class LogUnavailableError extends OcelogErrorBase<'log_unavailable'> {
  override readonly name = 'LogUnavailableError'
  readonly kind = 'log_unavailable' as const
}

/** A configured engine could not be reached or opened; the message names it (and its variable). */
export class EngineUnavailableError extends OcelogErrorBase<'engine_unavailable'> {
  override readonly name = 'EngineUnavailableError'
  readonly kind = 'engine_unavailable' as const
}

/** Another projector moved the checkpoint first; the caller re-reads the checkpoint and retries. */
export class CheckpointConflictError extends OcelogErrorBase<'checkpoint_conflict'> {
  override readonly name = 'CheckpointConflictError'
  readonly kind = 'checkpoint_conflict' as const
  constructor(
    readonly projector: string,
    readonly expected: number | null,
    readonly actual: number | null,
  ) {
    super(`checkpoint of ${projector} is ${String(actual)}, expected ${String(expected)}`)
  }
}

/** A dataset with this id already exists (key store). */
export class DatasetExistsError extends OcelogErrorBase<'dataset_exists'> {
  override readonly name = 'DatasetExistsError'
  readonly kind = 'dataset_exists' as const
}

/** An environment variable breaks its rule; the message names the variable and the rule. */
export class ConfigError extends OcelogErrorBase<'config'> {
  override readonly name = 'ConfigError'
  readonly kind = 'config' as const
}

/** A key or dataset administration request cannot be done (unknown dataset, unknown scope, unknown key). */
export class AdminError extends OcelogErrorBase<'admin'> {
  override readonly name = 'AdminError'
  readonly kind = 'admin' as const
}

/** A CLI command was used wrongly or could not do its work; the message is for a person. */
export class CliError extends OcelogErrorBase<'cli'> {
  override readonly name = 'CliError'
  readonly kind = 'cli' as const
}

/** The file is not an OCEL 2.0 log this reader can read (the message says why and where). */
export class OcelReadError extends OcelogErrorBase<'ocel_read'> {
  override readonly name = 'OcelReadError'
  readonly kind = 'ocel_read' as const
}

/** A single item is larger than one EventStoreDB append may be: it can never be appended. */
export class AppendTooLargeError extends OcelogErrorBase<'append_too_large'> {
  override readonly name = 'AppendTooLargeError'
  readonly kind = 'append_too_large' as const
}

/**
 * A projection stopped on a record it could not apply (a poison record), after a bounded retry
 * with back-off. Only that projection stops; the log, the API and other shards go on. Restarting
 * the projector tries the record again.
 */
export class ProjectionStoppedError extends OcelogErrorBase<'projection_stopped'> {
  override readonly name = 'ProjectionStoppedError'
  readonly kind = 'projection_stopped' as const
  constructor(readonly stop: ProjectionStop) {
    const at = stop.position === null ? 'a record it could not read' : `the record at position ${String(stop.position)}`
    super(
      `projection ${stop.projection} stopped at ${at}${stop.stream === null ? '' : ` of stream ${stop.stream}`} after ${String(stop.attempts)} attempt(s): ${stop.cause}`,
    )
  }
}

/**
 * The read models are being rebuilt from the log after their file was found damaged (README §
 * Operations): reads answer 503 with Retry-After and the progress, `position` of `head` (log
 * positions), until the rebuild reaches `head`, the log's head when the damage was found.
 */
export class ReadModelsRebuildingError extends OcelogErrorBase<'read_models_rebuilding'> {
  override readonly name = 'ReadModelsRebuildingError'
  readonly kind = 'read_models_rebuilding' as const
  constructor(
    readonly position: number,
    readonly head: number,
  ) {
    super(`the read models are being rebuilt from the log after their file was found damaged: at position ${String(position)} of ${String(head)}`)
  }
}

/** Every Ocelog error. Extend this union and the two mappings (problem+json, CLI message) when adding a kind. */
export type OcelogError =
  | InvalidParameterError
  | NotFoundError
  | LogUnavailableError
  | EngineUnavailableError
  | CheckpointConflictError
  | DatasetExistsError
  | ConfigError
  | AdminError
  | CliError
  | OcelReadError
  | AppendTooLargeError
  | ProjectionStoppedError
  | ReadModelsRebuildingError

/** Whether `error` is one of Ocelog's own errors (else: a bug or a foreign library's error). */
export function isOcelogError(error: unknown): error is OcelogError {
  return error instanceof OcelogErrorBase
}

/** The message of anything thrown: an Error's `message`, else its string form (a thrown string, number, …). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Fails to compile when a switch over `kind` misses a case; at run time, names the unknown kind. */
export function unreachable(value: never): never {
  throw new Error(`unhandled error kind: ${JSON.stringify(value)}`)
}
