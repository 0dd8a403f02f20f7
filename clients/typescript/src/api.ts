/**
 * The request and response types of the ingestion API, as the client sees them: `Static<typeof …>`
 * of the TypeBox schemas in ./contract/schemas.ts (also the service's schemas), imported as types
 * only, so the client's JavaScript never loads the schema module.
 */
export type {
  EventInput,
  EventObjectInput,
  EventResponse,
  HealthResponse,
  ItemErrorDetail,
  ObjectResult,
  ObjectUpsertInput,
  ObjectUpsertResponse,
  Properties,
  TypesInput,
  TypesResponse,
} from './contract/schemas.js'
