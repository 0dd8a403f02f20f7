/**
 * The request and response TypeBox schemas of the HTTP API. They live in the client package, which
 * the service and the client both build on (`@ocelog/client/contract`, clients/typescript/src/contract),
 * so that the client builds, tests and packs on its own; this module keeps the service's imports short.
 */
export * from '@ocelog/client/contract'
