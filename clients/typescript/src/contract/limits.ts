/**
 * The numeric limits of the ingestion API (README § The API; the OpenAPI document at /openapi.json
 * carries them as the schemas' minLength, maxLength and maxItems). Limits marked "chosen" are
 * Ocelog's own choices beyond the field limits.
 */
export const LIMITS = {
  /** event name, 1 to 200 characters (Unicode code points). */
  eventNameMax: 200,
  /** object type name, 1 to 100 characters. */
  objectTypeMax: 100,
  /** object id, 1 to 500 characters. */
  objectIdMax: 500,
  /** qualifier, 1 to 100 characters. */
  qualifierMax: 100,
  /** objects per event, 1 to 50; more answers 422. */
  objectsPerEventMax: 50,
  /** events per event batch and objects per object batch. */
  batchItemsMax: 100,
  /**
   * Chosen: one item (an event with its inline object properties, or an
   * object upsert) serialises to at most 512 KiB of JSON. This keeps every record far below
   * EventStoreDB's 1 MiB default append size, so no accepted record can fail to append there.
   */
  itemBytesMax: 512 * 1024,
  /**
   * Chosen: `properties` (of an event, of an object inside an event, of an
   * upsert) nest at most 64 levels of objects and arrays, the properties object itself being level 1.
   * Deeper items are rejected with 422 naming the path (Segment and Mixpanel cap property depth too);
   * the cap keeps every recursive step after validation (JSON encoding, the log's encoders) far from
   * the call-stack limit.
   */
  propertiesDepthMax: 64,
  /**
   * Ocelog extension: an item's optional `idempotency_key`, 1 to 255 characters,
   * unique per dataset for ever (the length follows the common practice of Stripe's keys).
   */
  idempotencyKeyMax: 255,
  /**
   * Ocelog extension: an object upsert's optional `relationships` (OCEL 2.0 O2O),
   * 0 to 100 per upsert; an object with more sends several upserts (relationships accumulate).
   */
  relationshipsPerObjectMax: 100,
  /** Chosen: the default request body limit (bytes): OCELOG_BODY_LIMIT_BYTES. */
  bodyBytesDefault: 5 * 1024 * 1024,
} as const
