import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/app/config.js'

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '0.0.0.0',
      dataDir: './data',
      eventstoreUrl: null,
      mongodbUrl: null,
      postgresUrl: null,
      postgresPoolSize: 10,
      redisUrl: null,
      rateLimitPerMinute: 1200,
      rateLimitWindowSeconds: 60,
      bodyLimitBytes: 5 * 1024 * 1024,
      metrics: true,
      logLevel: 'info',
      allowedHosts: null,
    })
  })

  it('reads OCELOG_ALLOWED_HOSTS as a comma-separated list of host names, in lower case', () => {
    expect(loadConfig({ OCELOG_ALLOWED_HOSTS: 'Ocelog.example.com,localhost' }).allowedHosts).toEqual(['ocelog.example.com', 'localhost'])
    expect(() => loadConfig({ OCELOG_ALLOWED_HOSTS: 'a,,b' })).toThrow(/^OCELOG_ALLOWED_HOSTS=a,,b/)
  })

  it('turns /metrics off with OCELOG_METRICS=off and names a value other than on or off', () => {
    expect([loadConfig({ OCELOG_METRICS: 'off' }).metrics, loadConfig({ OCELOG_METRICS: 'on' }).metrics]).toEqual([false, true])
    expect(() => loadConfig({ OCELOG_METRICS: 'yes' })).toThrow(/^OCELOG_METRICS=yes/)
  })

  it('selects PostgreSQL with POSTGRES_URL alone, with its pool size, and refuses it beside EventStoreDB or MongoDB', () => {
    const c = loadConfig({ POSTGRES_URL: 'postgres://ocelog@db:5432/ocelog', OCELOG_POSTGRES_POOL_SIZE: '4' })
    expect([c.postgresUrl, c.postgresPoolSize]).toEqual(['postgres://ocelog@db:5432/ocelog', 4])
    expect(loadConfig({ POSTGRES_URL: 'postgresql://db/ocelog' }).postgresUrl).toBe('postgresql://db/ocelog')
    expect(() => loadConfig({ POSTGRES_URL: 'mysql://db/ocelog' })).toThrow(/^POSTGRES_URL=mysql:\/\/db\/ocelog/)
    expect(() => loadConfig({ POSTGRES_URL: 'postgres://db/o', EVENTSTORE_URL: 'esdb://es:2113', MONGODB_URL: 'mongodb://m' })).toThrow(
      /POSTGRES_URL goes alone/,
    )
    // An empty variable counts as unset (docker-compose.yml's postgres profile empties the other engines').
    expect(loadConfig({ POSTGRES_URL: 'postgres://db/o', EVENTSTORE_URL: '', MONGODB_URL: '', REDIS_URL: '' })).toMatchObject({
      postgresUrl: 'postgres://db/o',
      eventstoreUrl: null,
      redisUrl: null,
    })
    expect(() => loadConfig({ POSTGRES_URL: 'postgres://db/o', OCELOG_POSTGRES_POOL_SIZE: '0' })).toThrow(
      /OCELOG_POSTGRES_POOL_SIZE=0: must be a whole number from 1 to 1000/,
    )
  })

  it('names the variable of a bad value', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError)
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^PORT=eighty/)
  })

  it('rejects a port out of range', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT=70000: must be a whole number from 1 to 65535/)
  })

  it('rejects an unknown log level', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/^LOG_LEVEL=loud/)
  })

  it('rejects a Redis URL of another scheme', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://localhost' })).toThrow(/^REDIS_URL=/)
  })

  it('asks for EVENTSTORE_URL and MONGODB_URL together', () => {
    expect(() => loadConfig({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' })).toThrow(/go together/)
  })

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', REDIS_URL: '' }).port).toBe(8080)
  })
})

describe('loadConfig engine URLs', () => {
  it('accepts esdb:// with mongodb://', () => {
    const c = loadConfig({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false', MONGODB_URL: 'mongodb://localhost:27017/ocelog' })
    expect([c.eventstoreUrl, c.mongodbUrl]).toEqual(['esdb://localhost:2113?tls=false', 'mongodb://localhost:27017/ocelog'])
  })

  it('rejects kurrentdb://, which @eventstore/db-client 6 cannot open', () => {
    expect(() => loadConfig({ EVENTSTORE_URL: 'kurrentdb://localhost:2113', MONGODB_URL: 'mongodb://localhost' })).toThrow(/^EVENTSTORE_URL=/)
  })
})
