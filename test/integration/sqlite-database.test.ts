import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/adapters/sqlite/database.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-database-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** Undoes migration 5 (the records' idempotency keys), for files of an older version. */
const WITHOUT_KEYS = 'DROP INDEX records_by_idempotency_key; ALTER TABLE records DROP COLUMN idempotency_key; ALTER TABLE records DROP COLUMN fingerprint;'
/** Undoes migration 6 (the O2O read model), for files of an older version. */
const WITHOUT_O2O = 'DROP TABLE rm_object_relationships;'

describe('openDatabase', () => {
  it('brings a schema-version-1 file up to date, keeping its records', () => {
    const v1 = openDatabase(dir)
    v1.prepare("INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-d', 'd', 'ObjectUpserted', 1, '{}', 'now')").run()
    // Back to what version 1 held: without the read side's indexes (v2), the projection stops (v3) and the records' keys (v5).
    v1.exec(
      `DROP INDEX rm_event_objects_by_object; DROP INDEX rm_event_objects_by_external_id; DROP INDEX rm_events_by_type; DROP TABLE rm_projection_stops; ${WITHOUT_KEYS} ${WITHOUT_O2O} PRAGMA user_version = 1`,
    )
    v1.close()
    const db = openDatabase(dir)
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE name IN ('rm_projection_stops', 'rm_event_objects_by_object') ORDER BY name").all()
    expect([db.pragma('user_version', { simple: true }), tables.length, db.prepare('SELECT count(*) AS n FROM records').get()]).toEqual([6, 2, { n: 1 }])
    db.close()
  })
  it("drops the table of object pairs from a version-3 file, adds the records' keys, and keeps the log and the other read models", () => {
    const v3 = openDatabase(dir)
    v3.exec(`
      CREATE TABLE rm_object_links (dataset_id TEXT NOT NULL, object_a TEXT NOT NULL, object_b TEXT NOT NULL, PRIMARY KEY (dataset_id, object_a, object_b));
      INSERT INTO rm_object_links VALUES ('d', 'a', 'b');
      INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-d', 'd', 'ObjectUpserted', 1, '{}', 'now');
      INSERT INTO rm_checkpoints (projector, position, updated_at) VALUES ('read-models', 1, 'now');
      ${WITHOUT_KEYS}
      ${WITHOUT_O2O}
      PRAGMA user_version = 3;`)
    v3.close()
    const db = openDatabase(dir)
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name)
    expect([db.pragma('user_version', { simple: true }), names.includes('rm_object_links'), names.includes('rm_event_objects')]).toEqual([6, false, true])
    expect([db.prepare('SELECT count(*) AS n FROM records').get(), db.prepare('SELECT position FROM rm_checkpoints').get()]).toEqual([
      { n: 1 },
      { position: 1 },
    ])
    db.close()
  })
  it('adds the idempotency key columns to the records of a version-4 file, unique per dataset', () => {
    const v4 = openDatabase(dir)
    v4.exec(`${WITHOUT_KEYS} ${WITHOUT_O2O} PRAGMA user_version = 4;`)
    v4.close()
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
  it('adds the O2O read model to a version-5 file, one row per (object, target, qualifier), keeping its records', () => {
    const v5 = openDatabase(dir)
    v5.prepare("INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES ('dataset-d', 'd', 'ObjectUpserted', 1, '{}', 'now')").run()
    v5.exec(`${WITHOUT_O2O} PRAGMA user_version = 5;`)
    v5.close()
    const db = openDatabase(dir)
    const insert = db.prepare("INSERT OR IGNORE INTO rm_object_relationships VALUES ('d', 'o1', 'o2', ?, 't', '2', 'now', ?)")
    insert.run('', 1)
    insert.run('', 2)
    insert.run('part of', 3)
    expect([db.pragma('user_version', { simple: true }), db.prepare('SELECT count(*) AS n FROM records').get()]).toEqual([6, { n: 1 }])
    expect(db.prepare('SELECT qualifier, position FROM rm_object_relationships ORDER BY qualifier').all()).toEqual([
      { qualifier: '', position: 1 },
      { qualifier: 'part of', position: 3 },
    ])
    db.close()
  })
})
