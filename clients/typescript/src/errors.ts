/**
 * The error a single-item call (sendEvent, upsertObject, health) throws when its request did not
 * succeed. Bulk calls never throw for an item; they report it in `failures`.
 */
import type { FailureKind } from './types.js'

export interface FieldErrorLike {
  path: string
  message: string
}

export class OcelogRequestError extends Error {
  override readonly name = 'OcelogRequestError'

  constructor(
    message: string,
    /** Why the request failed (see FailureKind). */
    readonly kind: FailureKind,
    /** HTTP status of the last answer; null for network errors, timeouts and aborts. */
    readonly status: number | null,
    /** Field errors of a 422 problem answer (`errors` of RFC 9457 body). */
    readonly errors: FieldErrorLike[] = [],
  ) {
    super(message)
  }
}
