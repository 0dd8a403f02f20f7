/**
 * Opening the production backends (src/app/production.ts) when an engine is missing or
 * unreachable: the error names the variable. Uses closed local ports, so it runs without engines.
 */
import { describe, expect, it } from 'vitest'
import { connectEventStore, connectMongo, openProductionBackends } from '../../src/app/production.js'
import { EngineUnavailableError } from '../../src/app/composition.js'
import { redactUrl } from '../../src/core/connection-url.js'
import { freePort } from '../helpers/free-port.js'

describe('openProductionBackends', () => {
  it('fails with EngineUnavailableError naming MONGODB_URL when MongoDB does not answer', async () => {
    const port = await freePort()
    const error = await openProductionBackends('esdb://127.0.0.1:1?tls=false', `mongodb://u:secret@127.0.0.1:${String(port)}/ocelog`, redactUrl).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(EngineUnavailableError)
    expect(String(error)).toMatch(/MONGODB_URL=mongodb:\/\/\*\*\*@127\.0\.0\.1:\d+\/ocelog did not answer/)
    expect(String(error)).not.toContain('secret')
  })
})

describe('connectEventStore', () => {
  it('fails with EngineUnavailableError naming EVENTSTORE_URL when EventStoreDB does not answer', async () => {
    const port = await freePort()
    const url = `esdb://127.0.0.1:${String(port)}?tls=false`
    const error = await connectEventStore(url, url, 1000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(EngineUnavailableError)
    expect(String(error)).toContain(`EVENTSTORE_URL=${url} did not answer within 1000 ms`)
  })

  it('fails naming EVENTSTORE_URL when the connection string cannot be parsed', async () => {
    const error = await connectEventStore('esdb://', 'esdb://', 1000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(EngineUnavailableError)
    expect(String(error)).toContain('EVENTSTORE_URL=esdb:// is not a usable EventStoreDB connection string')
  })
})

describe('connectMongo', () => {
  it('fails within its timeout when MongoDB does not answer', async () => {
    const port = await freePort()
    const started = Date.now()
    await expect(connectMongo(`mongodb://127.0.0.1:${String(port)}/x`, 'shown', 500)).rejects.toThrow(/MONGODB_URL=shown did not answer within 500 ms/)
    expect(Date.now() - started).toBeLessThan(5000)
  })
})
