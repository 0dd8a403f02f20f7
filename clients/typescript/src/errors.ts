/**
 * The client's errors. OcelogRequestError: what a single-item call (sendEvent, upsertObject, health)
 * throws when its request did not succeed. OcelogQueueError: what `onError` gets for a queued item
 * that was not recorded. Bulk calls never throw for an item; they report it in `failures`.
 */
import type { FailureKind, QueuedItem, QueueFailureKind } from './types.js'

/** The message of anything thrown: an Error's `message`, else its string form (a thrown string, number, …). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

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

/**
 * A queued item (enqueueEvent, enqueueObject) that was not recorded, as the `onError` callback gets
 * it: the item, why (`kind`), the HTTP status that decided it and the field errors the service named.
 */
export class OcelogQueueError extends Error {
  override readonly name = 'OcelogQueueError'

  constructor(
    message: string,
    /** Why the item was not recorded (see QueueFailureKind). */
    readonly kind: QueueFailureKind,
    /** HTTP status that decided the failure; null for network errors, timeouts, aborts and drops. */
    readonly status: number | null,
    /** Field errors (`path` is a JSON pointer inside the item), when the service named them. */
    readonly errors: FieldErrorLike[],
    /** The item as it was enqueued. */
    readonly queued: QueuedItem,
  ) {
    super(message)
  }
}
