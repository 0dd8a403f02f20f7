/**
 * The served OpenAPI document's description: the contract's rules in short, in the project's own
 * words, with the limits taken from the code that enforces them. The prose version is docs/api.md.
 */
import { LIMITS } from '../core/limits.js'

/**
 * The description of `/openapi.json` (CommonMark, as OpenAPI 3.0 allows).
 * @param bodyLimitBytes the service's request body limit in bytes (OCELOG_BODY_LIMIT_BYTES).
 * @returns Markdown paragraphs: authentication and scopes, limits, batches, rate limit, errors (RFC 9457).
 */
export function openApiDescription(bodyLimitBytes: number): string {
  const l = LIMITS
  return [
    'Object-centric process events (OCEL 2.0) in, an append-only log and read models out. docs/api.md of the Ocelog repository ' +
      'explains this contract in prose.',
    'Authentication: `Authorization: Bearer <key>` or `X-Ocelog-Api-Key: <key>`; a key is bound to one dataset. Scopes: ' +
      '`ingest:write` for the POST endpoints, `process:read` for `/v1/process/*`; a key created without scopes may do everything. ' +
      'A key that is not accepted answers 401; a valid key whose scopes do not reach the endpoint answers 403.',
    `Limits: event name 1–${String(l.eventNameMax)} characters; 1–${String(l.objectsPerEventMax)} objects per event; object type ` +
      `1–${String(l.objectTypeMax)}, object id 1–${String(l.objectIdMax)}, qualifier 1–${String(l.qualifierMax)} characters; at most ` +
      `${String(l.batchItemsMax)} items per batch; ${String(l.itemBytesMax / 1024)} KiB of JSON per item; \`properties\` nested at most ` +
      `${String(l.propertiesDepthMax)} levels; a request body of at most ${String(bodyLimitBytes)} bytes (413 above it). Unknown fields are refused.`,
    'Batches: items are validated and recorded independently; each failed item is named by its 0-based index in `errors` and ' +
      '`error_details`, and nothing accepted is rolled back. A 200 means the records are durable in the log.',
    'Rate limit: a budget of requests per minute per key (1,200 by default), a batch counting as one request; over it, 429 with ' +
      '`Retry-After` in seconds. Every answer to a valid key carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
    'Errors are RFC 9457 problem details (`application/problem+json`); validation errors name each broken field (a JSON pointer) and its rule.',
  ].join('\n\n')
}
