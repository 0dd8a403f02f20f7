/**
 * Integration (README § Operations, digests): a record edited or removed in a real SQLite log
 * (with its immutability triggers dropped, as anyone with write access to the file can) is found
 * by verifyDigest: the history no longer gives the auditor's digest, and the comparison with the
 * audit read model names the first changed position. Once the read models are rebuilt from the
 * changed log, only the digest still tells.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { verifyDigest } from '../../src/read/audit-check.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { eventRecord, freshDatasetId } from '../contract/fixtures.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

let f: SqliteFixture
let query: SqliteReadModelQuery
let ds: string
let positions: number[]

function dropTriggers(): void {
  f.db.exec('DROP TRIGGER records_are_immutable_update; DROP TRIGGER records_are_immutable_delete')
}

beforeEach(async () => {
  f = openSqliteFixture('ocelog-audit-tamper-')
  query = new SqliteReadModelQuery(f.rmDb)
  ds = freshDatasetId()
  const other = freshDatasetId()
  positions = []
  for (let i = 0; i < 40; i++) {
    // Another dataset's records between this one's: its positions are not consecutive.
    await f.log.append(other, [eventRecord(other, 'Noise', [{ type: 'order', id: `n${String(i)}` }])], [])
    const appended = await f.log.append(ds, [eventRecord(ds, i % 2 === 0 ? 'Pick' : 'Ship', [{ type: 'order', id: `o${String(i % 5)}` }])], [])
    positions.push(...appended.positions)
  }
  await new Projector(f.log, f.store).catchUp()
})
afterEach(() => f.close())

async function digestAt(position: number): Promise<string> {
  const entry = await query.auditChainAt(ds, position)
  if (entry === null) throw new Error('no chain entry')
  return entry.hash
}

const at = (i: number): number => positions[i] ?? -1

describe('verifyDigest', () => {
  it('finds the history unchanged up to a digest the auditor took', async () => {
    const position = at(29)
    const check = await verifyDigest(f.log, query, ds, position, await digestAt(position))
    expect(check).toMatchObject({ unchanged: true, first_changed: null, records: 30, compared: 30 })
  })

  it('names the first changed position of a record edited with the triggers dropped', async () => {
    const digest = await digestAt(at(39))
    dropTriggers()
    f.db.prepare('UPDATE records SET data = replace(data, \'"Ship"\', \'"Shipped"\') WHERE position = ?').run(at(13))
    f.db.prepare('UPDATE records SET data = replace(data, \'"Pick"\', \'"Picked"\') WHERE position = ?').run(at(20))
    const check = await verifyDigest(f.log, query, ds, at(39), digest)
    expect(check.unchanged).toBe(false)
    expect(check.first_changed).toMatchObject({ position: at(13), seq: 14 })
    // History before the change still verifies against a digest taken there.
    expect(await verifyDigest(f.log, query, ds, at(12), await digestAt(at(12)))).toMatchObject({ unchanged: true, first_changed: null })
  })

  it('names the position of a removed record', async () => {
    const digest = await digestAt(at(39))
    dropTriggers()
    f.db.prepare('DELETE FROM records WHERE position = ?').run(at(7))
    const check = await verifyDigest(f.log, query, ds, at(39), digest)
    expect(check).toMatchObject({ unchanged: false, records: 39 })
    expect(check.first_changed?.position).toBe(at(7))
  })

  it('still finds the change by the digest, though no longer where, once the read models are rebuilt from the changed log', async () => {
    const digest = await digestAt(at(39))
    dropTriggers()
    f.db.prepare('UPDATE records SET data = replace(data, \'"Ship"\', \'"Shipped"\') WHERE position = ?').run(at(5))
    await f.store.reset()
    await new Projector(f.log, f.store).catchUp()
    const check = await verifyDigest(f.log, query, ds, at(39), digest)
    expect(check).toMatchObject({ unchanged: false, first_changed: null, compared: 40 })
  })
})
