/**
 * The read models on PostgreSQL (docs/read-models.md#the-read-models-on-postgresql): the `rm_*`
 * tables in the schema `ocelog`, one per read model, holding the fields of the row schemas in
 * src/schemas/read-models.ts under the same names, as the MongoDB collections do. Times of the
 * rows are UTC ISO 8601 text with milliseconds (they order as text); the directly-follows steps
 * keep epoch milliseconds, which the map's durations are computed from.
 *
 * - A qualifier that was not sent is stored as '' (a key column cannot hold null; the API refuses
 *   an empty qualifier), and read back as null.
 * - Event properties and attribute values one record set are `json`: the exact text the record
 *   carried. An object's merged attributes are `jsonb`, merged per top-level key by `||`
 *   (src/core/merge.ts: a key sent replaces its value, null stays null).
 * - `rm_objects` holds each object's identity (every projection that names an object writes it;
 *   never cleared with a projection) and the objects projection's part: `properties`,
 *   `updated_at`, `position` (−1 until that projection applies the object).
 * - Checkpoints (`rm_checkpoints`) move by compare-and-set in the same transaction as the rows.
 */
export const READ_MODELS_MIGRATION = `
CREATE TABLE ocelog.rm_checkpoints (
  projector   text PRIMARY KEY,
  position    bigint NOT NULL,
  version     integer NOT NULL,
  updated_at  text NOT NULL
);
CREATE TABLE ocelog.rm_projection_stops (
  projector  text PRIMARY KEY,
  stop       text NOT NULL
);
CREATE TABLE ocelog.rm_event_types (
  dataset_id text NOT NULL, name text NOT NULL,
  first_seen_at text NOT NULL, last_seen_at text NOT NULL, count bigint NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, name)
);
CREATE TABLE ocelog.rm_object_types (
  dataset_id text NOT NULL, name text NOT NULL,
  first_seen_at text NOT NULL, last_seen_at text NOT NULL, count bigint NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, name)
);
CREATE TABLE ocelog.rm_objects (
  dataset_id text NOT NULL, object_id text NOT NULL, type text NOT NULL, external_id text NOT NULL,
  properties jsonb NOT NULL, created_at text NOT NULL, updated_at text NOT NULL,
  position bigint NOT NULL, first_position bigint NOT NULL,
  PRIMARY KEY (dataset_id, object_id)
);
CREATE UNIQUE INDEX rm_objects_by_type_id ON ocelog.rm_objects (dataset_id, type, external_id);
CREATE TABLE ocelog.rm_object_changes (
  dataset_id text NOT NULL, object_id text NOT NULL, position bigint NOT NULL, time text NOT NULL, attributes json NOT NULL,
  PRIMARY KEY (dataset_id, object_id, position)
);
CREATE TABLE ocelog.rm_events (
  dataset_id text NOT NULL, event_id text NOT NULL, event_type text NOT NULL,
  timestamp text NOT NULL, end_timestamp text, properties json NOT NULL,
  objects_count integer NOT NULL, received_at text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, event_id)
);
CREATE INDEX rm_events_by_time ON ocelog.rm_events (dataset_id, timestamp, position);
CREATE TABLE ocelog.rm_event_objects (
  dataset_id text NOT NULL, event_id text NOT NULL, object_id text NOT NULL, qualifier text NOT NULL,
  object_type text NOT NULL, external_id text NOT NULL, event_time text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, event_id, object_id, qualifier)
);
CREATE INDEX rm_event_objects_by_object ON ocelog.rm_event_objects (dataset_id, object_id, event_time, position);
CREATE INDEX rm_event_objects_by_type ON ocelog.rm_event_objects (dataset_id, object_type, event_time, position);
CREATE TABLE ocelog.rm_object_relationships (
  dataset_id text NOT NULL, object_id text NOT NULL, target_object_id text NOT NULL, qualifier text NOT NULL,
  target_type text NOT NULL, target_external_id text NOT NULL, time text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, object_id, target_object_id, qualifier)
);
CREATE INDEX rm_object_relationships_by_target ON ocelog.rm_object_relationships (dataset_id, target_object_id);
CREATE TABLE ocelog.rm_audit_chain (
  dataset_id text NOT NULL, position bigint NOT NULL, seq bigint NOT NULL, hash text NOT NULL,
  PRIMARY KEY (dataset_id, position)
);
CREATE TABLE ocelog.rm_df_steps (
  dataset_id text NOT NULL, object_id text NOT NULL, object_type text NOT NULL, activity text NOT NULL,
  t bigint NOT NULL, pos bigint NOT NULL, te bigint, kin integer NOT NULL,
  prev_t bigint, prev_pos bigint, prev_act text, prev_te bigint, prev_dt bigint, prev_wait bigint,
  PRIMARY KEY (dataset_id, object_id, t, pos)
);
CREATE INDEX rm_df_steps_by_time ON ocelog.rm_df_steps (dataset_id, t, pos);
CREATE INDEX rm_df_steps_by_edge_elapsed ON ocelog.rm_df_steps (dataset_id, object_type, prev_act, activity, prev_dt) WHERE prev_act IS NOT NULL;
CREATE INDEX rm_df_steps_by_edge_waiting ON ocelog.rm_df_steps (dataset_id, object_type, prev_act, activity, prev_wait) WHERE prev_wait IS NOT NULL;
CREATE TABLE ocelog.rm_df_memberships (
  dataset_id text NOT NULL, object_id text NOT NULL, a text NOT NULL, b text NOT NULL, n integer NOT NULL,
  PRIMARY KEY (dataset_id, object_id, a, b)
);
CREATE TABLE ocelog.rm_df_aggregates (
  dataset_id text NOT NULL, object_type text NOT NULL, a text NOT NULL, b text NOT NULL,
  events bigint NOT NULL, objects bigint NOT NULL, total bigint NOT NULL, starts bigint NOT NULL, ends bigint NOT NULL,
  couples bigint NOT NULL, durations jsonb NOT NULL, waiting jsonb NOT NULL,
  PRIMARY KEY (dataset_id, object_type, a, b)
);
CREATE TABLE ocelog.rm_declared_types (
  dataset_id text NOT NULL, kind text NOT NULL, name text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, kind, name)
);
CREATE TABLE ocelog.rm_declared_attributes (
  dataset_id text NOT NULL, kind text NOT NULL, type_name text NOT NULL, name text NOT NULL, type text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY (dataset_id, kind, type_name, name)
);
`

/**
 * Migration 3: the ids as PostgreSQL's `uuid` (16 bytes, compared as bytes) instead of text (37
 * bytes, compared as strings); E2O keyed by its event's log position (one event per record), so
 * that its rows are appended at the end of that index in log order, and no E2O index by object
 * type (no read ranges over it). Every
 * event id (UUIDv7) and object id (UUIDv5) is a canonical lowercase UUID (docs/architecture.md#records-and-ids),
 * which `uuid` gives back as the same text and orders as the same bytes. Each row the projector
 * writes costs an entry in each index: the two smaller indexes of E2O and the narrower keys of the
 * steps and memberships are what a catch-up writes less (docs/read-models.md#the-read-models-on-postgresql).
 * The tables whose rows are updated in place (a membership's count, an object's attributes) leave
 * room in each page (fillfactor), so that an update that changes no indexed column stays on its
 * page and writes no index entry (a heap-only tuple).
 */
export const READ_MODELS_UUID_MIGRATION = `
DROP INDEX ocelog.rm_event_objects_by_type;
ALTER TABLE ocelog.rm_df_memberships SET (fillfactor = 50);
ALTER TABLE ocelog.rm_objects SET (fillfactor = 70);
ALTER TABLE ocelog.rm_objects ALTER COLUMN object_id TYPE uuid USING object_id::uuid;
ALTER TABLE ocelog.rm_object_changes ALTER COLUMN object_id TYPE uuid USING object_id::uuid;
ALTER TABLE ocelog.rm_events ALTER COLUMN event_id TYPE uuid USING event_id::uuid;
ALTER TABLE ocelog.rm_event_objects ALTER COLUMN event_id TYPE uuid USING event_id::uuid, ALTER COLUMN object_id TYPE uuid USING object_id::uuid,
  DROP CONSTRAINT rm_event_objects_pkey, ADD PRIMARY KEY (position, object_id, qualifier);
ALTER TABLE ocelog.rm_object_relationships
  ALTER COLUMN object_id TYPE uuid USING object_id::uuid, ALTER COLUMN target_object_id TYPE uuid USING target_object_id::uuid;
ALTER TABLE ocelog.rm_df_steps ALTER COLUMN object_id TYPE uuid USING object_id::uuid;
ALTER TABLE ocelog.rm_df_memberships ALTER COLUMN object_id TYPE uuid USING object_id::uuid;
`

/**
 * Migration 4: one index of each edge's couples in time order (`rm_df_steps_by_edge`, the elapsed
 * and waiting times carried in it) instead of two ordered by those times. New steps mostly come in
 * time order, so their entries go to the end of their edge's range instead of a place spread over
 * the whole index; a refill of an edge's kept extremes reads the edge's range and keeps the values
 * it needs (docs/process-map.md#medians-of-the-all-time-map).
 */
export const READ_MODELS_EDGE_INDEX_MIGRATION = `
DROP INDEX ocelog.rm_df_steps_by_edge_elapsed;
DROP INDEX ocelog.rm_df_steps_by_edge_waiting;
CREATE INDEX rm_df_steps_by_edge ON ocelog.rm_df_steps (dataset_id, object_type, prev_act, activity, t, pos) INCLUDE (prev_dt, prev_wait)
  WHERE prev_act IS NOT NULL;
`

/** Every read-model table, emptied by a full reset. */
export const READ_MODEL_TABLES = [
  'rm_checkpoints',
  'rm_projection_stops',
  'rm_event_types',
  'rm_object_types',
  'rm_objects',
  'rm_object_changes',
  'rm_events',
  'rm_event_objects',
  'rm_object_relationships',
  'rm_audit_chain',
  'rm_df_steps',
  'rm_df_memberships',
  'rm_df_aggregates',
  'rm_declared_types',
  'rm_declared_attributes',
] as const
