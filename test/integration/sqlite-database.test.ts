/**
 * The log file's migrations (src/adapters/sqlite/log/database.ts) and the read-model file
 * (src/adapters/sqlite/read-models/read-models-database.ts): a data dir of any earlier version opens, keeps
 * its log, and gets its read models in read-models.db, made anew and rebuilt from the log.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MIGRATIONS, openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteKeyStore } from '../../src/adapters/sqlite/log/sqlite-key-store.js'
import { openReadModelsDatabase, READ_MODELS_PAGE_SIZE, READ_MODELS_SCHEMA_VERSION } from '../../src/adapters/sqlite/read-models/read-models-database.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-database-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** An ocelog.db as schema version `version` left it: migrations 1 to `version`, then `sql`. */
function oldFile(version: number, sql: string): void {
  const db = new Database(join(dir, 'ocelog.db'))
  for (const migration of MIGRATIONS.slice(0, version)) db.exec(migration)
  db.exec(sql)
  db.pragma(`user_version = ${String(version)}`)
  db.close()
}

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name)

describe('openDatabase', () => {
  it('brings a schema-version-1 file up to date, keeping its records and keys, and moves the read models out of it', () => {
    oldFile(
      1,
      `INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-d', 'd', 'ObjectUpserted', 1, '{}', 'now');
       INSERT INTO datasets VALUES ('d', 'd', 'now');
       INSERT INTO rm_checkpoints (projector, position, updated_at) VALUES ('read-models', 1, 'now');`,
    )
    const db = openDatabase(dir)
    expect([db.pragma('user_version', { simple: true }), db.prepare('SELECT count(*) AS n FROM records').get()]).toEqual([MIGRATIONS.length, { n: 1 }])
    expect(tables(db)).toEqual(['api_keys', 'datasets', 'object_claims', 'records'])
    db.close()
  })

  it('adds the idempotency key columns to the records of a version-4 file, unique per dataset', () => {
    oldFile(4, '')
    const db = openDatabase(dir)
    const insert = db.prepare(
      "INSERT INTO records (stream, dataset_id, type, version, data, appended_at, idempotency_key, fingerprint) VALUES ('s', ?, 'ObjectUpserted', 1, '{}', 'now', ?, 'f')",
    )
    insert.run('d1', 'k')
    insert.run('d2', 'k')
    insert.run('d1', null)
    insert.run('d1', null)
    expect(() => insert.run('d1', 'k')).toThrow(/UNIQUE constraint failed/)
    expect(db.prepare('SELECT count(*) AS n FROM records').get()).toEqual({ n: 4 })
    db.close()
  })

  it('drops the read-model tables of a version-5 file, keeping its log', () => {
    oldFile(5, "INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-d', 'd', 'ObjectUpserted', 1, '{}', 'now');")
    const before = new Database(join(dir, 'ocelog.db'))
    expect(tables(before).filter((t) => t.startsWith('rm_'))).toHaveLength(8)
    before.close()
    const db = openDatabase(dir)
    expect([tables(db), db.prepare('SELECT count(*) AS n FROM records').get()]).toEqual([['api_keys', 'datasets', 'object_claims', 'records'], { n: 1 }])
    db.close()
  })

  it('adds a rate limit column to the keys of a version-6 file: its keys read as on the default (null)', async () => {
    oldFile(
      6,
      `INSERT INTO datasets VALUES ('d', 'd', '2024-05-01T10:00:00.000Z');
       INSERT INTO api_keys VALUES ('k1', 'sender', 'd', '[]', '${'a'.repeat(64)}', '2024-05-01T10:00:01.000Z', NULL);`,
    )
    const db = openDatabase(dir)
    const keys = new SqliteKeyStore(db)
    expect((await keys.findKey('k1'))?.rate_limit_per_minute).toBeNull()
    expect(await keys.setRateLimit('k1', 60_000)).toBe(true)
    expect((await keys.listKeys()).map((k) => [k.key_id, k.rate_limit_per_minute])).toEqual([['k1', 60_000]])
    db.close()
  })

  it('refuses a file of a newer version, naming both versions', () => {
    oldFile(MIGRATIONS.length + 1, '')
    expect(() => openDatabase(dir)).toThrow(`has schema version ${String(MIGRATIONS.length + 1)}; this Ocelog knows up to ${String(MIGRATIONS.length)}`)
  })
})

describe('openReadModelsDatabase', () => {
  it('makes read-models.db when it is missing, and says so', () => {
    const first = openReadModelsDatabase(dir)
    expect([first.made, first.db.pragma('user_version', { simple: true })]).toEqual([
      'read-models.db is missing; read-models-process.db is missing',
      READ_MODELS_SCHEMA_VERSION,
    ])
    expect(tables(first.db)).toContain('rm_object_relationships')
    // Both files made with pages of READ_MODELS_PAGE_SIZE.
    expect([first.db.pragma('main.page_size', { simple: true }), first.db.pragma('process.page_size', { simple: true })]).toEqual([
      READ_MODELS_PAGE_SIZE,
      READ_MODELS_PAGE_SIZE,
    ])
    first.db.prepare("INSERT INTO rm_checkpoints VALUES ('events', 7, 1, 'now')").run()
    first.db.close()
    const again = openReadModelsDatabase(dir)
    expect([again.made, again.db.prepare('SELECT position FROM rm_checkpoints').get()]).toEqual([null, { position: 7 }])
    again.db.close()
  })

  it('makes the process file alone when only it is missing, and keeps the entities file and its checkpoints', () => {
    const first = openReadModelsDatabase(dir)
    first.db.prepare("INSERT INTO main.rm_checkpoints VALUES ('events', 7, 1, 'now')").run()
    first.db.prepare("INSERT INTO process.rm_checkpoints VALUES ('directly_follows', 7, 1, 'now')").run()
    first.db.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `read-models-process.db${suffix}`), { force: true })
    const again = openReadModelsDatabase(dir)
    const checkpoints = again.db.prepare('SELECT projector FROM main.rm_checkpoints UNION ALL SELECT projector FROM process.rm_checkpoints').pluck().all()
    expect([again.made, checkpoints]).toEqual(['read-models-process.db is missing', ['events']])
    expect(tables(again.db)).toContain('rm_events')
    expect(again.db.prepare("SELECT name FROM process.sqlite_schema WHERE type = 'table' AND name = 'rm_df_steps'").pluck().get()).toBe('rm_df_steps')
    again.db.close()
  })

  it('makes it anew when it holds another schema version, so that its read models are rebuilt from the log', () => {
    const old = new Database(join(dir, 'read-models.db'))
    old.exec(
      "CREATE TABLE rm_checkpoints (projector TEXT PRIMARY KEY, position INTEGER, updated_at TEXT); INSERT INTO rm_checkpoints VALUES ('read-models', 7, 'now')",
    )
    old.pragma(`user_version = ${String(READ_MODELS_SCHEMA_VERSION + 1)}`)
    old.close()
    const opened = openReadModelsDatabase(dir)
    expect(opened.made).toBe(
      `read-models.db had schema version ${String(READ_MODELS_SCHEMA_VERSION + 1)}; this build writes version ${String(READ_MODELS_SCHEMA_VERSION)}; read-models-process.db is missing`,
    )
    expect([opened.db.pragma('user_version', { simple: true }), opened.db.prepare('SELECT count(*) AS n FROM rm_checkpoints').get()]).toEqual([
      READ_MODELS_SCHEMA_VERSION,
      { n: 0 },
    ])
    opened.db.close()
  })

  it('remakes a file of the wide layout (schema version 1) in the narrow one, empty, so the projector replays the log into it', () => {
    const old = new Database(join(dir, 'read-models.db'))
    old.exec(`CREATE TABLE rm_checkpoints (projector TEXT PRIMARY KEY, position INTEGER NOT NULL, updated_at TEXT NOT NULL);
      INSERT INTO rm_checkpoints VALUES ('read-models', 3, 'now');
      CREATE TABLE rm_event_objects (dataset_id TEXT NOT NULL, event_id TEXT NOT NULL, object_id TEXT NOT NULL, qualifier TEXT NOT NULL,
        object_type TEXT NOT NULL, external_id TEXT NOT NULL, event_time TEXT NOT NULL, position INTEGER NOT NULL,
        PRIMARY KEY (dataset_id, event_id, object_id, qualifier));
      INSERT INTO rm_event_objects VALUES ('ds', 'e1', 'o1', '', 'order', 'o-1', '2024-01-01T00:00:00.000Z', 1);`)
    old.pragma('user_version = 1')
    old.close()
    const opened = openReadModelsDatabase(dir)
    expect(opened.made).toBe(
      `read-models.db had schema version 1; this build writes version ${String(READ_MODELS_SCHEMA_VERSION)}; read-models-process.db is missing`,
    )
    const columns = (table: string) => (opened.db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((c) => c.name)
    expect(columns('rm_event_objects')).toEqual(['seq', 'position', 'rid', 'qualifier_id'])
    expect(columns('rm_datasets')).toEqual(['did', 'dataset_id'])
    expect([
      opened.db.prepare('SELECT count(*) AS n FROM rm_checkpoints').get(),
      opened.db.prepare('SELECT count(*) AS n FROM rm_event_objects').get(),
    ]).toEqual([{ n: 0 }, { n: 0 }])
    opened.db.close()
  })

  it('keeps the read models apart from the log: two files, two write locks', () => {
    const log = openDatabase(dir)
    const readModels = openReadModelsDatabase(dir).db
    log.prepare('BEGIN IMMEDIATE').run()
    // The log's write lock does not hold up a write to the read models.
    readModels.prepare("INSERT INTO rm_checkpoints VALUES ('p', 1, 1, 'now')").run()
    log.prepare('COMMIT').run()
    expect(tables(log).some((t) => t.startsWith('rm_'))).toBe(false)
    log.close()
    readModels.close()
  })
})
