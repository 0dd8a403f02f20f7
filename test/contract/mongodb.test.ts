/**
 * The ReadModelStore, ReadModelQuery (with its analysis reads), KeyStore and ObjectClaims contracts on MongoDB (src/adapters/mongodb/*), when an engine
 * answers: MONGODB_URL, or a testcontainers single-node replica set of the pinned image. Every case
 * gets its own database, dropped afterwards. Otherwise the suites are skipped and say why. The
 * ReadModelQuery cases append their records to a real SQLite log in a temp folder (the log is not
 * what they test) and project them into MongoDB with the real Projector.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_STORE_INDEXES, MongoKeyStore } from '../../src/adapters/mongodb/mongodb-key-store.js'
import { MongoObjectClaims, OBJECT_CLAIM_INDEXES } from '../../src/adapters/mongodb/mongodb-object-claims.js'
import { MongoReadModelQuery } from '../../src/adapters/mongodb/mongodb-read-model-query.js'
import { MongoReadModelStore } from '../../src/adapters/mongodb/mongodb-read-model-store.js'
import { READ_MODEL_INDEXES } from '../../src/adapters/mongodb/read-model-writes.js'
import { openDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { announceSkip, mongoEngine } from '../helpers/engines.js'
import { mongoRows } from '../helpers/read-model-rows.js'
import { keyStoreContract } from './key-store.contract.js'
import { objectClaimsContract } from './object-claims.contract.js'
import { analysisQueryContract } from './analysis-query.contract.js'
import { readModelQueryContract } from './read-model-query.contract.js'
import { readModelStoreContract } from './read-model-store.contract.js'

const engine = await mongoEngine()
announceSkip('ReadModelStore contract: MongoDB', engine)
announceSkip('ReadModelQuery contract: MongoDB', engine)
announceSkip('ReadModelQuery analysis contract: MongoDB', engine)
announceSkip('KeyStore contract: MongoDB', engine)
announceSkip('ObjectClaims contract: MongoDB', engine)

let client: MongoClient
beforeAll(async () => {
  if (engine.available) client = await new MongoClient(engine.url).connect()
})
afterAll(async () => {
  if (!engine.available) return
  await client.close()
  await engine.stop()
})

function freshDb() {
  return client.db(`ocelog_ct_${randomUUID().replaceAll('-', '').slice(0, 16)}`)
}

describe.skipIf(!engine.available)('MongoDB', () => {
  const source = engine.available ? engine.source : 'unavailable'

  readModelStoreContract(`MongoDB (${source})`, async () => {
    const db = freshDb()
    const store = new MongoReadModelStore(client, db)
    await store.createIndexes()
    return {
      store,
      rows: mongoRows(db),
      async close() {
        await store.close()
        await db.dropDatabase()
      },
    }
  })

  const queryHarness = async () => {
    const db = freshDb()
    const store = new MongoReadModelStore(client, db)
    const query = new MongoReadModelQuery(db)
    await store.createIndexes()
    await query.createIndexes()
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-contract-'))
    const sqlite = openDatabase(dir)
    const log = new SqliteEventLog(sqlite, { pollMs: 50 })
    return {
      log,
      store,
      query,
      async close() {
        await query.close()
        await store.close()
        await log.close()
        sqlite.close()
        rmSync(dir, { recursive: true, force: true })
        await db.dropDatabase()
      },
    }
  }
  readModelQueryContract(`MongoDB (${source})`, queryHarness)
  analysisQueryContract(`MongoDB (${source})`, queryHarness)

  objectClaimsContract(`MongoDB (${source})`, async () => {
    const db = freshDb()
    const claims = new MongoObjectClaims(db)
    await claims.createIndexes()
    return {
      claims,
      async close() {
        await db.dropDatabase()
      },
    }
  })

  keyStoreContract(`MongoDB (${source})`, async () => {
    const db = freshDb()
    const keys = new MongoKeyStore(db)
    await keys.createIndexes()
    return {
      keys,
      async peer() {
        return new MongoKeyStore(db)
      },
      async close() {
        await keys.close()
        await db.dropDatabase()
      },
    }
  })

  describe('MongoDB indexes', () => {
    it('backs every read-model key and every key-store key with a unique index', async () => {
      const db = freshDb()
      try {
        await new MongoReadModelStore(client, db).createIndexes()
        await new MongoKeyStore(db).createIndexes()
        await new MongoObjectClaims(db).createIndexes()
        for (const [collection, specs] of Object.entries({ ...READ_MODEL_INDEXES, ...KEY_STORE_INDEXES, ...OBJECT_CLAIM_INDEXES })) {
          const keyIndex = (await db.collection(collection).indexes()).find((i) => i.name === 'key')
          expect([collection, keyIndex?.unique]).toEqual([collection, true])
          expect(keyIndex?.key).toEqual(specs[0]?.key)
        }
      } finally {
        await db.dropDatabase()
      }
    })
  })
})
