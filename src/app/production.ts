/**
 * Production backends (README § Architecture, § Production): the EventStoreDB log, the MongoDB read models and
 * the MongoDB key store, chosen when EVENTSTORE_URL and MONGODB_URL are set (src/app/composition.ts).
 * Both engines are reached with a short timeout at start, so a missing or unreachable engine stops
 * the process with a message naming its variable instead of failing the first request.
 */
import { BACKWARDS, END, EventStoreDBClient } from '@eventstore/db-client'
import { MongoClient, MongoError, MongoNetworkError, MongoNotConnectedError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb'
import { messageOf, EngineUnavailableError } from '../core/errors.js'
import type { Backends } from './backends.js'
import { EventStoreEventLog } from '../adapters/eventstore/eventstore-event-log.js'
import { MongoKeyStore } from '../adapters/mongodb/mongodb-key-store.js'
import { MongoIdempotencyClaims } from '../adapters/mongodb/mongodb-idempotency-claims.js'
import { MongoObjectClaims } from '../adapters/mongodb/mongodb-object-claims.js'
import { MongoReadModelQuery } from '../adapters/mongodb/mongodb-read-model-query.js'
import { MongoReadModelStore } from '../adapters/mongodb/mongodb-read-model-store.js'

/** How long each engine may take to answer at start, in ms. */
export const ENGINE_START_TIMEOUT_MS = 5000

/**
 * Whether a MongoDB failure means the engine is away (network, no primary, closed client, or an
 * error labelled transient by the driver) rather than a write that cannot be done.
 */
export function isMongoUnavailable(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true
  if (error instanceof MongoNotConnectedError || error instanceof MongoTopologyClosedError) return true
  return error instanceof MongoError && (error.hasErrorLabel('TransientTransactionError') || error.hasErrorLabel('RetryableWriteError'))
}

/**
 * Connects to EventStoreDB: parses the connection string and reads one event of `$all` (which
 * needs the admin or $ops user the projector needs anyway).
 * @throws EngineUnavailableError naming EVENTSTORE_URL.
 */
export async function connectEventStore(url: string, shown: string, timeoutMs = ENGINE_START_TIMEOUT_MS): Promise<EventStoreDBClient> {
  let client: EventStoreDBClient
  try {
    client = EventStoreDBClient.connectionString(url)
  } catch (error) {
    throw new EngineUnavailableError(`EVENTSTORE_URL=${shown} is not a usable EventStoreDB connection string: ${messageOf(error)}`)
  }
  try {
    for await (const _ of client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, deadline: timeoutMs })) break
  } catch (error) {
    await client.dispose().catch(() => {})
    throw new EngineUnavailableError(
      `EventStoreDB at EVENTSTORE_URL=${shown} did not answer within ${String(timeoutMs)} ms or refused to read $all (the user needs admin or $ops rights): ${messageOf(error)}`,
    )
  }
  return client
}

/**
 * Connects to MongoDB and checks that it can run transactions (a replica set member or mongos).
 * @throws EngineUnavailableError naming MONGODB_URL.
 */
export async function connectMongo(url: string, shown: string, timeoutMs = ENGINE_START_TIMEOUT_MS): Promise<MongoClient> {
  let client: MongoClient
  try {
    client = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs })
    await client.connect()
  } catch (error) {
    throw new EngineUnavailableError(`MongoDB at MONGODB_URL=${shown} did not answer within ${String(timeoutMs)} ms: ${messageOf(error)}`)
  }
  let hello: Record<string, unknown>
  try {
    hello = await client.db('admin').command({ hello: 1 })
  } catch (error) {
    await client.close()
    throw new EngineUnavailableError(`MongoDB at MONGODB_URL=${shown} refused the hello command: ${messageOf(error)}`)
  }
  if (typeof hello.setName !== 'string' && hello.msg !== 'isdbgrid') {
    await client.close()
    throw new EngineUnavailableError(
      `MongoDB at MONGODB_URL=${shown} is a standalone server; Ocelog's read models need transactions, so run it as a replica set (a single node is enough: mongod --replSet rs0, then rs.initiate())`,
    )
  }
  return client
}

/**
 * Opens the production backends: EventStoreDB (EVENTSTORE_URL) for the log, MongoDB (MONGODB_URL,
 * its database from the URL path, default `test`) for the read models and the key store, and
 * creates the MongoDB indexes.
 * @param redact hides credentials in the URLs shown in messages.
 * @throws EngineUnavailableError naming the variable of the engine that is missing or unreachable.
 */
export async function openProductionBackends(eventstoreUrl: string, mongodbUrl: string, redact: (url: string) => string): Promise<Backends> {
  const mongo = await connectMongo(mongodbUrl, redact(mongodbUrl))
  let esdb: EventStoreDBClient
  try {
    esdb = await connectEventStore(eventstoreUrl, redact(eventstoreUrl))
  } catch (error) {
    await mongo.close()
    throw error
  }
  const db = mongo.db()
  const keys = new MongoKeyStore(db)
  const readModels = new MongoReadModelStore(mongo, db)
  const query = new MongoReadModelQuery(db)
  const objectClaims = new MongoObjectClaims(db)
  try {
    await keys.createIndexes()
    await objectClaims.createIndexes()
    await readModels.createIndexes()
    await query.createIndexes()
  } catch (error) {
    await mongo.close()
    await esdb.dispose()
    throw new EngineUnavailableError(`cannot create the indexes in MongoDB at MONGODB_URL=${redact(mongodbUrl)}: ${messageOf(error)}`)
  }
  const log = new EventStoreEventLog(esdb, objectClaims, {}, new MongoIdempotencyClaims(db))
  return {
    mode: 'production',
    describe: `EventStoreDB ${redact(eventstoreUrl)} + MongoDB ${redact(mongodbUrl)} (database ${db.databaseName})`,
    log,
    readModels,
    query,
    keys,
    isUnavailable: isMongoUnavailable,
    notices: [],
    async close() {
      await log.close()
      await mongo.close()
    },
  }
}
