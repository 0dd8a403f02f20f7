/**
 * Vitest globalSetup of the contract project (vitest.config.ts; docs/operations.md#engines-in-tests):
 * one container of each production engine for the whole run, shared by every suite through
 * provide/inject (engines.ts reads it), instead of one per suite file. An engine named by
 * EVENTSTORE_URL / MONGODB_URL is not started. Without a Docker engine the containers cannot start:
 * the reason is provided instead, and the suites skip with it (or fail, with OCELOG_REQUIRE_ENGINES=1).
 * The containers are stopped when the run ends.
 */
import type { TestProject } from 'vitest/node'
import { type Engine, type SharedEngine, startEventStoreContainer, startMongoContainer } from './engines.js'

function shared(engine: Engine): SharedEngine {
  return engine.available
    ? { url: engine.url, source: `${engine.source}, shared by the run` }
    : { reason: `${engine.reason} (tried once for the run, by the globalSetup)` }
}

function named(variable: string): boolean {
  const value = process.env[variable]
  return value !== undefined && value !== ''
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: Engine[] = []
  const [eventstore, mongodb] = await Promise.all([
    named('EVENTSTORE_URL') ? undefined : startEventStoreContainer(),
    named('MONGODB_URL') ? undefined : startMongoContainer(),
  ])
  if (eventstore !== undefined) {
    started.push(eventstore)
    project.provide('ocelog:eventstore', shared(eventstore))
  }
  if (mongodb !== undefined) {
    started.push(mongodb)
    project.provide('ocelog:mongodb', shared(mongodb))
  }
  return async () => {
    for (const engine of started) if (engine.available) await engine.stop()
  }
}
