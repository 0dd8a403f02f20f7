/**
 * The production path end to end: records appended to EventStoreDB, projected by the Projector into
 * MongoDB read models, both through catch-up (`readAll`) and live tailing (`tail`). Runs where both
 * engines answer (EVENTSTORE_URL and MONGODB_URL, or Docker); otherwise skipped with the reason.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { Projector } from '../../src/projector/runner.js'
import { EventStoreEventLog } from '../../src/adapters/eventstore/eventstore-event-log.js'
import { MongoObjectClaims } from '../../src/adapters/mongodb/mongodb-object-claims.js'
import { MongoReadModelStore } from '../../src/adapters/mongodb/mongodb-read-model-store.js'
import { connectEventStore, connectMongo } from '../../src/app/production.js'
import { eventRecord, freshDatasetId, objectIdsOf, upsertRecord } from '../contract/fixtures.js'
import { announceSkip, eventStoreEngine, mongoEngine } from '../helpers/engines.js'
import { mongoRows } from '../helpers/read-model-rows.js'

const es = await eventStoreEngine()
const mongo = es.available ? await mongoEngine() : es
announceSkip('production projector (EventStoreDB → MongoDB)', es.available ? mongo : es)
const available = es.available && mongo.available

afterAll(async () => {
  if (es.available) await es.stop()
  if (mongo.available) await mongo.stop()
})

async function openProduction() {
  if (!es.available || !mongo.available) throw new Error('engines unavailable')
  const client = await connectMongo(mongo.url, 'MONGODB_URL')
  const db = client.db(`ocelog_it_${randomUUID().replaceAll('-', '').slice(0, 16)}`)
  const claims = new MongoObjectClaims(db)
  const store = new MongoReadModelStore(client, db)
  await claims.createIndexes()
  await store.createIndexes()
  const log = new EventStoreEventLog(await connectEventStore(es.url, 'EVENTSTORE_URL'), claims)
  return {
    log,
    store,
    rows: mongoRows(db),
    async close() {
      await log.close()
      await db.dropDatabase()
      await client.close()
    },
  }
}

describe.skipIf(!available)('Projector on EventStoreDB and MongoDB', () => {
  it('catches up: the read models hold what was appended', async () => {
    const p = await openProduction()
    try {
      const ds = freshDatasetId()
      const event = eventRecord(ds, 'Create Order', [{ type: 'order', id: 'o1', properties: { amount: 1 } }])
      await p.log.append(ds, [event, upsertRecord(ds, 'order', 'o1', { amount: 2 })], objectIdsOf(event))
      await new Projector(p.log, p.store, { name: `it-${randomUUID()}` }).catchUp()
      expect((await p.rows(ds).then((r) => r.objects)).map((o) => [o.external_id, o.properties])).toEqual([['o1', { amount: 2 }]])
      expect((await p.rows(ds).then((r) => r.eventTypes)).map((t) => [t.name, t.count])).toEqual([['Create Order', 1]])
    } finally {
      await p.close()
    }
  })

  it('tails: a record appended while the projector runs reaches the read models', async () => {
    const p = await openProduction()
    const controller = new AbortController()
    try {
      const projector = new Projector(p.log, p.store, { name: `it-${randomUUID()}` })
      const running = projector.run(controller.signal)
      const ds = freshDatasetId()
      const { positions } = await p.log.append(ds, [upsertRecord(ds, 'order', 'late', { n: 1 })], [])
      const target = positions[0] ?? Infinity
      await new Promise<void>((resolve) => {
        const check = (position: number) => {
          if (position >= target) {
            projector.events.off('applied', check)
            resolve()
          }
        }
        projector.events.on('applied', check)
      })
      expect((await p.rows(ds).then((r) => r.objects)).map((o) => o.external_id)).toEqual(['late'])
      controller.abort()
      await running
    } finally {
      controller.abort()
      await p.close()
    }
  }, 120_000)
})
