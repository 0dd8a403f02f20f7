/**
 * `@ocelog/client/contract`: the ingestion API's contract as code, shared by the client and the
 * service. The request and response TypeBox schemas (schemas.ts: every request and response type is
 * `Static<typeof …>` of one of them, and the service validates requests and generates its OpenAPI
 * document from them) and the numeric limits (limits.ts). Runtime dependency: `typebox` only.
 * docs/api.md describes the fields, limits and statuses in prose.
 */
export * from './limits.js'
export * from './schemas.js'
