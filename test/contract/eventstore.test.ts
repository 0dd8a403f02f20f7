/**
 * The EventLog contract on EventStoreDB (src/adapters/eventstore/eventstore-event-log.ts), when an
 * engine answers: EVENTSTORE_URL, or a testcontainers container of the pinned image. Identity
 * claims go through an ObjectClaims; here the SQLite one on a temp file (the port is what matters).
 * Otherwise the suite is skipped and says why.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client'
import { afterAll, describe } from 'vitest'
import { EventStoreEventLog } from '../../src/adapters/eventstore/eventstore-event-log.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteObjectClaims } from '../../src/adapters/sqlite/log/sqlite-object-claims.js'
import { announceSkip, eventStoreEngine } from '../helpers/engines.js'
import { eventLogContract } from './event-log.contract.js'

const engine = await eventStoreEngine()
announceSkip('EventLog contract: EventStoreDB', engine)

afterAll(async () => {
  if (engine.available) await engine.stop()
})

describe.skipIf(!engine.available)('EventStoreDB', () => {
  eventLogContract(
    `EventStoreDB (${engine.available ? engine.source : 'unavailable'})`,
    async () => {
      if (!engine.available) throw new Error(engine.reason)
      const dir = mkdtempSync(join(tmpdir(), 'ocelog-esdb-claims-'))
      const db = openDatabase(dir)
      const client = EventStoreDBClient.connectionString(engine.url)
      const log = new EventStoreEventLog(client, new SqliteObjectClaims(db))
      return {
        log,
        async appendForeign(stream, count) {
          const events = Array.from({ length: count }, (_, i) => jsonEvent({ type: 'ForeignEvent', data: { i } }))
          await client.appendToStream(stream, events)
        },
        async close() {
          await log.close()
          db.close()
          rmSync(dir, { recursive: true, force: true })
        },
      }
    },
    { foreignStreams: true },
  )
})
