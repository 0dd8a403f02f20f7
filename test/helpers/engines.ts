/**
 * Where the production engines come from in tests (README § Tests: contract suites run
 * where an engine answers; docs/operations.md#engines-in-tests): EVENTSTORE_URL / MONGODB_URL when
 * set; else the one container of each engine that the contract project's globalSetup
 * (engines-global-setup.ts) started for the whole run, or the reason it could not; else (suites of
 * other projects) a testcontainers 11 GenericContainer of the same pinned image as
 * docker-compose.yml, started by the suite, when a Docker engine answers. When none works, the
 * engine is unavailable with the reason: the suite prints one line and skips, or, with
 * OCELOG_REQUIRE_ENGINES=1 (a CI with Docker), fails.
 */
import type { EventStoreDBClient } from '@eventstore/db-client'
import { MongoClient } from 'mongodb'
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers'
import { inject } from 'vitest'
import { connectEventStore, connectMongo } from '../../src/app/production.js'
import { redactUrl } from '../../src/core/connection-url.js'
import { messageOf } from '../../src/core/errors.js'

/** What the globalSetup hands every suite of its project (vitest provide/inject): per engine, its URL or why there is none. */
export type SharedEngine = { url: string; source: string } | { reason: string }

declare module 'vitest' {
  export interface ProvidedContext {
    'ocelog:eventstore'?: SharedEngine
    'ocelog:mongodb'?: SharedEngine
  }
}

/** The pinned images, the same as docker-compose.yml (test/integration/compose-file.test.ts checks it). */
export const ENGINE_IMAGES = {
  eventstore: 'eventstore/eventstore:23.10.1-bookworm-slim',
  mongodb: 'mongo:7.0.14',
  redis: 'redis:7.2.5-alpine',
} as const

export type Engine = { available: true; url: string; source: string; stop(): Promise<void> } | { available: false; reason: string }

const noop = async () => {}

async function stopContainer(container: StartedTestContainer): Promise<void> {
  await container.stop({ remove: true }).catch(() => {})
}

/**
 * An EventStoreDB to test against: EVENTSTORE_URL, or a container of ENGINE_IMAGES.eventstore
 * (single node, insecure, in memory; `$all` is read as admin).
 */
export async function eventStoreEngine(): Promise<Engine> {
  const shared = sharedEngine('ocelog:eventstore')
  if (shared !== undefined) return shared
  const fromEnv = process.env.EVENTSTORE_URL
  if (fromEnv !== undefined && fromEnv !== '') {
    try {
      const client: EventStoreDBClient = await connectEventStore(fromEnv, redactUrl(fromEnv), 5000)
      await client.dispose()
      return { available: true, url: fromEnv, source: 'EVENTSTORE_URL', stop: noop }
    } catch (error) {
      return { available: false, reason: messageOf(error) }
    }
  }
  return startEventStoreContainer()
}

/** A container of ENGINE_IMAGES.eventstore (single node, insecure, in memory), or why it could not start. */
export async function startEventStoreContainer(): Promise<Engine> {
  let container: StartedTestContainer
  try {
    container = await new GenericContainer(ENGINE_IMAGES.eventstore)
      .withEnvironment({
        EVENTSTORE_INSECURE: 'true',
        EVENTSTORE_CLUSTER_SIZE: '1',
        EVENTSTORE_RUN_PROJECTIONS: 'None',
        EVENTSTORE_MEM_DB: 'true',
      })
      .withExposedPorts(2113)
      .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCodeMatching((s) => s >= 200 && s < 300))
      .withStartupTimeout(120_000)
      .start()
  } catch (error) {
    return { available: false, reason: `EVENTSTORE_URL is not set and testcontainers could not start ${ENGINE_IMAGES.eventstore}: ${messageOf(error)}` }
  }
  const url = `esdb://admin:changeit@${container.getHost()}:${String(container.getMappedPort(2113))}?tls=false`
  return { available: true, url, source: `container ${ENGINE_IMAGES.eventstore}`, stop: () => stopContainer(container) }
}

/**
 * A MongoDB replica set to test against: MONGODB_URL, or a container of ENGINE_IMAGES.mongodb
 * started as a single-node replica set (transactions need one). Suites make one database per case.
 */
export async function mongoEngine(): Promise<Engine> {
  const shared = sharedEngine('ocelog:mongodb')
  if (shared !== undefined) return shared
  const fromEnv = process.env.MONGODB_URL
  if (fromEnv !== undefined && fromEnv !== '') {
    try {
      const client: MongoClient = await connectMongo(fromEnv, redactUrl(fromEnv), 5000)
      await client.close()
      return { available: true, url: fromEnv, source: 'MONGODB_URL', stop: noop }
    } catch (error) {
      return { available: false, reason: messageOf(error) }
    }
  }
  return startMongoContainer()
}

/** A container of ENGINE_IMAGES.mongodb started as a single-node replica set, or why it could not start. */
export async function startMongoContainer(): Promise<Engine> {
  let container: StartedTestContainer
  try {
    container = await new GenericContainer(ENGINE_IMAGES.mongodb)
      .withCommand(['mongod', '--replSet', 'rs0', '--bind_ip_all'])
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .withStartupTimeout(120_000)
      .start()
  } catch (error) {
    return { available: false, reason: `MONGODB_URL is not set and testcontainers could not start ${ENGINE_IMAGES.mongodb}: ${messageOf(error)}` }
  }
  const url = `mongodb://${container.getHost()}:${String(container.getMappedPort(27017))}/?directConnection=true`
  try {
    const init = await container.exec(['mongosh', '--quiet', '--eval', "rs.initiate({_id: 'rs0', members: [{_id: 0, host: 'localhost:27017'}]}).ok"])
    if (init.exitCode !== 0) throw new Error(`rs.initiate failed: ${init.output}`)
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 })
    try {
      const deadline = Date.now() + 60_000
      while ((await client.db('admin').command({ hello: 1 })).isWritablePrimary !== true) {
        if (Date.now() > deadline) throw new Error('the replica set elected no primary within 60 s')
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    } finally {
      await client.close()
    }
  } catch (error) {
    await stopContainer(container)
    return { available: false, reason: `the ${ENGINE_IMAGES.mongodb} container started but its replica set did not: ${messageOf(error)}` }
  }
  return { available: true, url, source: `container ${ENGINE_IMAGES.mongodb}`, stop: () => stopContainer(container) }
}

/**
 * The engine the globalSetup provided (engines-global-setup.ts), when it ran for this suite's
 * project and no URL variable names one; the container is the setup's to stop.
 */
function sharedEngine(key: 'ocelog:eventstore' | 'ocelog:mongodb'): Engine | undefined {
  const shared = inject(key)
  if (shared === undefined) return undefined
  return 'url' in shared ? { available: true, url: shared.url, source: shared.source, stop: noop } : { available: false, reason: shared.reason }
}

/** Whether a missing engine fails its suites instead of skipping them: OCELOG_REQUIRE_ENGINES=1 (a CI with Docker). */
export function enginesRequired(): boolean {
  return process.env.OCELOG_REQUIRE_ENGINES === '1'
}

/**
 * Prints the one line that says a suite was skipped and why (never a silent pass).
 * @throws Error naming the suite and the reason when OCELOG_REQUIRE_ENGINES=1: the suite's file then fails.
 */
export function announceSkip(suite: string, engine: Engine): void {
  if (engine.available) return
  if (enginesRequired()) throw new Error(`${suite}: OCELOG_REQUIRE_ENGINES=1 and the engine is unavailable: ${engine.reason}`)
  console.warn(`[skipped] ${suite}: ${engine.reason} (OCELOG_REQUIRE_ENGINES=1 makes this a failure)`)
}
