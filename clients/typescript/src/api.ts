/**
 * The request and response types of the ingestion API, as the client sees them. They are the
 * server's own TypeBox types (src/schemas/api.ts, `Static<typeof …>`), imported as types only: the
 * client's JavaScript never loads the schema module. The package build compiles that module into its
 * own dist, so the published declarations need nothing but `typebox`.
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
} from '../../../src/schemas/api.js'
