/**
 * Ocelog's own errors as one tagged union, after the KurrentDB client's `CommandError`: every
 * error Ocelog raises on purpose is an `OcelogError` with a literal `kind`. They are mapped to
 * RFC 9457 problem details in one place (src/api/problem.ts) and to CLI messages in one place
 * (src/cli/context.ts); a switch over `kind` there is exhaustive, so a new kind fails to compile
 * until both places handle it.
 */

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

/**
 * Every Ocelog error. Extend this union (and the two mappings) when adding a kind; other
 * modules' errors join it as they move here.
 */
export type OcelogError = InvalidParameterError | NotFoundError

/** Whether `error` is one of Ocelog's own errors (else: a bug or a foreign library's error). */
export function isOcelogError(error: unknown): error is OcelogError {
  return error instanceof OcelogErrorBase
}
