/**
 * The numeric limits of the ingestion API (docs/api.md#limits). They live in the client package with the
 * request and response schemas (`@ocelog/client/contract`, clients/typescript/src/contract/limits.ts).
 */
export { LIMITS } from '@ocelog/client/contract'
