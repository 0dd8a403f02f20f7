/**
 * The numeric limits of the ingestion contract and the limits Ocelog chooses beyond it (item
 * size, nesting, extensions), all documented in docs/api.md#limits.
 */
export const LIMITS = {
  /** Event name, 1 to 200 characters, counted in Unicode code points (docs/api.md#limits). */
  eventNameMax: 200,
  /** Object type name, 1 to 100 characters (docs/api.md#limits). */
  objectTypeMax: 100,
  /** Object id, 1 to 500 characters (docs/api.md#limits). */
  objectIdMax: 500,
  /** Qualifier, 1 to 100 characters (docs/api.md#limits). */
  qualifierMax: 100,
  /** Objects per event, 1 to 50; more answers 422 (docs/api.md#limits). */
  objectsPerEventMax: 50,
  /** Events per event batch and objects per object batch (docs/api.md#limits). */
  batchItemsMax: 100,
  /**
   * Ocelog's choice: one item (an event with its inline object properties, or an
   * object upsert) serialises to at most 512 KiB of JSON. This keeps every record far below
   * EventStoreDB's 1 MiB default append size, so no accepted record can fail to append there.
   */
  itemBytesMax: 512 * 1024,
  /**
   * Ocelog's choice: `properties` (of an event, of an object inside an event, of an
   * upsert) nest at most 64 levels of objects and arrays, the properties object itself being level 1.
   * Deeper items are rejected with 422 naming the path (Segment and Mixpanel cap property depth too);
   * the cap keeps every recursive step after validation (JSON encoding, the log's encoders) far from
   * the call-stack limit.
   */
  propertiesDepthMax: 64,
  /**
   * Ocelog extension (docs/api.md#idempotency-keys): an item's optional `idempotency_key`, 1 to 255 characters,
   * unique per dataset for ever (the length follows the common practice of Stripe's keys).
   */
  idempotencyKeyMax: 255,
  /**
   * Ocelog extension (docs/api.md#o2o-relationships-and-attribute-times): an object upsert's optional `relationships` (OCEL 2.0 O2O),
   * 0 to 100 per upsert; an object with more sends several upserts (relationships accumulate).
   */
  relationshipsPerObjectMax: 100,
  /**
   * Ocelog extension (docs/api.md#declared-types): POST /v1/types declares 0 to 1,000 event types
   * and 0 to 1,000 object types in one request; a log that declares more sends several requests.
   */
  declaredTypesMax: 1000,
  /** Ocelog extension (docs/api.md#declared-types): 0 to 200 attribute declarations per declared type. */
  attributesPerTypeMax: 200,
  /** Ocelog extension (docs/api.md#declared-types): a declared attribute's name, 1 to 200 characters. */
  attributeNameMax: 200,
  /** Ocelog's choice: the default request body limit (bytes): OCELOG_BODY_LIMIT_BYTES. */
  bodyBytesDefault: 5 * 1024 * 1024,
} as const
