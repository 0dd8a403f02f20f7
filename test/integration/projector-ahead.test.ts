/**
 * Read models ahead of their log (resetReadModelsAheadOfLog in src/projector/runner.ts): when the log has
 * lost its last records (a power cut before their fdatasync, or an older ocelog.db put back) and
 * the read models kept them, the read models are reset and rebuilt from the log as it now is.
 * Two real SQLite data dirs stand for "before" and "after" the loss.
 */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector, resetReadModelsAheadOfLog, warnAndResetIfAhead } from '../../src/projector/runner.js'
import { openSqliteFixture, type SqliteFixture, testContext } from '../helpers/sqlite.js'

let full: SqliteFixture
let older: SqliteFixture

/** Events a1..a`n` of dataset d1, one request each (one record each). */
async function events(f: SqliteFixture, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await f.ingest.recordEvents(
      [{ event: `a${String(i)}`, timestamp: `2024-01-0${String(i)}T10:00:00Z`, objects: [{ type: 'order', id: 'o1' }] }],
      testContext('d1'),
    )
  }
}

const activities = (f: SqliteFixture) =>
  (f.rmDb.prepare('SELECT (SELECT name FROM rm_names WHERE nid = event_type_id) FROM rm_events ORDER BY position').pluck().all() as string[]).join()

beforeEach(async () => {
  full = openSqliteFixture('ocelog-ahead-full-')
  older = openSqliteFixture('ocelog-ahead-older-')
  await events(full, 5)
  await events(older, 2)
  // The read models of `full` have applied all 5 records.
  await new Projector(full.log, full.store).catchUp()
})

afterEach(async () => {
  await full.log.close()
  await older.log.close()
  full.close()
  older.close()
})

describe('read models ahead of the log', () => {
  it('are reset when a checkpoint is past the head, and then rebuilt from the log as it is', async () => {
    expect(await full.store.checkpoint('events')).toBe(5)
    expect(activities(full)).toBe('a1,a2,a3,a4,a5')
    // The log that lost records 3-5, beside the read models that applied them.
    const { head, ahead } = await resetReadModelsAheadOfLog(older.log, full.store)
    expect(head).toBe(2)
    expect(ahead.map((p) => [p.projection, p.position])).toEqual(
      ['audit_chain', 'declared_types', 'directly_follows', 'event_types', 'events', 'object_relationships', 'object_types', 'objects'].map((name) => [
        name,
        5,
      ]),
    )
    expect(await full.store.checkpoint('events')).toBeNull()
    expect(activities(full)).toBe('')
    await new Projector(older.log, full.store).catchUp()
    expect(await full.store.checkpoint('events')).toBe(2)
    expect(activities(full)).toBe('a1,a2')
  })

  it('are left alone when every checkpoint is at or behind the head', async () => {
    expect(await resetReadModelsAheadOfLog(full.log, full.store)).toEqual({ head: 5, ahead: [] })
    await events(full, 1)
    expect(await resetReadModelsAheadOfLog(full.log, full.store)).toEqual({ head: 6, ahead: [] })
    expect(await full.store.checkpoint('events')).toBe(5)
    expect(activities(full)).toBe('a1,a2,a3,a4,a5')
  })

  it('are reported in a warning that names the checkpoint and the head (what `serve` and `project` log)', async () => {
    const warnings: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) })
    await warnAndResetIfAhead(older.log, full.store, logger)
    expect(warnings).toEqual([
      "read models are ahead of the log (audit_chain at 5, declared_types at 5, directly_follows at 5, event_types at 5, events at 5, object_relationships at 5, object_types at 5, objects at 5; the log's head is 2): the log lost its last records, so the read models are rebuilt from it",
    ])
    // Reset: the next start finds nothing ahead and says nothing.
    await warnAndResetIfAhead(older.log, full.store, logger)
    expect(warnings).toHaveLength(1)
  })
})
