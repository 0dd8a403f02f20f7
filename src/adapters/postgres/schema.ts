/**
 * Ocelog's PostgreSQL schema (docs/operations.md#production-on-postgresql): every table in the
 * schema `ocelog`, made and migrated by Ocelog at start, the version applied recorded in
 * `ocelog.schema_version`. Several processes may start at once: the migration runs under a
 * session advisory lock, so one migrates and the others find it done.
 *
 * The log (docs/architecture.md#the-log-on-postgresql):
 * - `records`: one row per record, its body (`data`) stored as the exact text `replay` prints;
 *   triggers refuse UPDATE, DELETE and TRUNCATE.
 * - `log_head`: one row, the last position given out. An append takes it last in its transaction,
 *   so positions are dense, global, and visible in commit order.
 * - `idempotency_keys`, `object_claims`: claimed before the head, so a retry waits for the first
 *   append of its key instead of taking a position it would not fill.
 * - `datasets`, `api_keys`: the key store; `rate_limits`: rate-limiter-flexible's table.
 *
 * The read models: the `rm_*` tables of read-models-schema.ts (migrations 2 to 4).
 */
import type pg from 'pg'
import { EngineUnavailableError } from '../../core/errors.js'
import { checkOut } from './connection.js'
import { READ_MODELS_EDGE_INDEX_MIGRATION, READ_MODELS_MIGRATION, READ_MODELS_UUID_MIGRATION } from './read-models-schema.js'

/** The schema that holds every table of Ocelog's. */
export const SCHEMA = 'ocelog'

/** Arbitrary, fixed: the key of the advisory lock held while migrating (pg_advisory_lock(bigint)). */
const MIGRATION_LOCK = 7_302_011_001

/** The migrations, in order: migration i + 1 takes the schema from version i to i + 1. */
const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE ocelog.log_head (
  only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  position  bigint NOT NULL
);
INSERT INTO ocelog.log_head (only_row, position) VALUES (true, 0);

CREATE TABLE ocelog.records (
  position         bigint PRIMARY KEY,
  stream           text NOT NULL,
  dataset_id       text NOT NULL,
  type             text NOT NULL,
  version          integer NOT NULL,
  data             text NOT NULL,
  appended_at      text NOT NULL,
  idempotency_key  text,
  fingerprint      text
);
CREATE INDEX records_by_stream ON ocelog.records (stream, position);
CREATE UNIQUE INDEX records_by_key ON ocelog.records (dataset_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE FUNCTION ocelog.refuse_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'records are immutable: % on %.% refused', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER records_are_immutable BEFORE UPDATE OR DELETE ON ocelog.records
  FOR EACH ROW EXECUTE FUNCTION ocelog.refuse_record_change();
CREATE TRIGGER records_are_not_truncated BEFORE TRUNCATE ON ocelog.records
  FOR EACH STATEMENT EXECUTE FUNCTION ocelog.refuse_record_change();

CREATE TABLE ocelog.idempotency_keys (
  dataset_id  text NOT NULL,
  key         text NOT NULL,
  PRIMARY KEY (dataset_id, key)
);
CREATE TABLE ocelog.object_claims (
  object_id   text PRIMARY KEY,
  dataset_id  text NOT NULL
);

CREATE TABLE ocelog.datasets (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  text NOT NULL
);
CREATE TABLE ocelog.api_keys (
  key_id                 text PRIMARY KEY,
  name                   text NOT NULL,
  dataset_id             text NOT NULL REFERENCES ocelog.datasets (id),
  scopes                 text NOT NULL,
  secret_hash            text NOT NULL,
  created_at             text NOT NULL,
  revoked_at             text,
  rate_limit_per_minute  integer
);

CREATE TABLE ocelog.rate_limits (
  key     varchar(255) PRIMARY KEY,
  points  integer NOT NULL DEFAULT 0,
  expire  bigint
);
`,
  READ_MODELS_MIGRATION,
  READ_MODELS_UUID_MIGRATION,
  READ_MODELS_EDGE_INDEX_MIGRATION,
]

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length

/**
 * Makes or migrates the schema to SCHEMA_VERSION, under the migration lock.
 * @param options.to the version to stop at (default SCHEMA_VERSION): tests of a migration make the
 *   schema an earlier build left, then migrate it on.
 * @returns the version found before (0: a new database).
 * @throws EngineUnavailableError when the database holds a newer version than this build knows
 *   (a newer Ocelog migrated it: run that one), or a migration fails (its message, nothing applied).
 */
export async function migrate(pool: pg.Pool, options: { to?: number } = {}): Promise<number> {
  const to = Math.min(options.to ?? SCHEMA_VERSION, SCHEMA_VERSION)
  const { client, release } = await checkOut(pool)
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`)
      await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_version (version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
      const found = Number((await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${SCHEMA}.schema_version`)).rows[0]?.v ?? 0)
      if (found > SCHEMA_VERSION)
        throw new EngineUnavailableError(
          `the PostgreSQL schema ${SCHEMA} is at version ${String(found)}, newer than this build's ${String(SCHEMA_VERSION)}: run the Ocelog that migrated it`,
        )
      for (let v = found; v < to; v++) {
        await client.query('BEGIN')
        try {
          await client.query(MIGRATIONS[v] ?? '')
          await client.query(`INSERT INTO ${SCHEMA}.schema_version (version) VALUES ($1)`, [v + 1])
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw new EngineUnavailableError(`migration of the PostgreSQL schema ${SCHEMA} to version ${String(v + 1)} failed: ${(error as Error).message}`)
        }
      }
      return found
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    release()
  }
}
