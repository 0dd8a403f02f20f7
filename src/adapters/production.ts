/**
 * Production backends: EventStoreDB log, MongoDB read models and key store (issue #3).
 * Not built yet: this answers with a clear error so that nobody mistakes it for working.
 */
import type { Backends } from '../composition.js'
import { EngineUnavailableError } from '../composition.js'

export async function openProductionBackends(eventstoreUrl: string, mongodbUrl: string, redact: (url: string) => string): Promise<Backends> {
  throw new EngineUnavailableError(
    `EVENTSTORE_URL=${redact(eventstoreUrl)} and MONGODB_URL=${redact(mongodbUrl)} are set, but this build has no production adapters yet; unset both to use the embedded SQLite default`,
  )
}
