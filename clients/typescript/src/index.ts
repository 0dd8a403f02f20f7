/**
 * `@ocelog/client`: the Node.js /
 * TypeScript client of the Ocelog ingestion API.
 *
 * ```ts
 * import { OcelogClient } from '@ocelog/client'
 * const client = new OcelogClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.OCELOG_API_KEY ?? '' })
 * const { accepted, failures } = await client.sendEvents([
 *   { event: 'place order', timestamp: '2024-05-01T10:00:00Z', objects: [{ type: 'order', id: 'o1', qualifier: 'order' }] },
 * ])
 * await client.enqueueEvent({ event: 'pay order', objects: [{ type: 'order', id: 'o1' }] })
 * await client.close() // flushes the queue
 * ```
 * Input and result types are `Static` types of the API's TypeBox schemas, which this package ships as
 * `@ocelog/client/contract` (the service validates with the same schemas); the client itself imports
 * them as types only: at run time it needs Node's http, https and zlib modules and `uuid`.
 */
export { OcelogClient, BATCH_MAX } from './client.js'
export { OcelogQueueError, OcelogRequestError, type FieldErrorLike } from './errors.js'
export { DEFAULT_RETRY_POLICY, backoffDelayMs, classifyStatus, parseRetryAfterMs, type StatusClass } from './retry.js'
export type {
  Accepted,
  BatchNotice,
  BulkOptions,
  BulkResult,
  ClientStats,
  FailureKind,
  ItemFailure,
  OcelogClientOptions,
  QueuedItem,
  QueueFailureKind,
  RetryCause,
  RetryNotice,
  RetryPolicy,
} from './types.js'
export type {
  EventInput,
  EventObjectInput,
  EventResponse,
  HealthResponse,
  ObjectResult,
  ObjectUpsertInput,
  ObjectUpsertResponse,
  Properties,
  TypesInput,
  TypesResponse,
} from './api.js'
