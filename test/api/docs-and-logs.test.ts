import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/api/app.js'
import { memoryRateLimiter } from '../../src/adapters/rate-limiter.js'
import { Ingest } from '../../src/write/ingest.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await makeTestApp()
})
afterAll(async () => t.close())

describe('GET /openapi.json', () => {
  it('documents the five ingest endpoints, POST /v1/types and the ten read endpoints from the TypeBox schemas, without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    const doc = res.json()
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/event',
      '/v1/event/batch',
      '/v1/health',
      '/v1/object/batch',
      '/v1/object/upsert',
      '/v1/process/compare',
      '/v1/process/event-types',
      '/v1/process/events',
      '/v1/process/map',
      '/v1/process/object-types',
      '/v1/process/objects/{type}/{id}',
      '/v1/process/performance',
      '/v1/process/summary',
      '/v1/process/type-relations',
      '/v1/process/variants',
      '/v1/types',
    ])
    const typesBody = doc.paths['/v1/types'].post.requestBody.content['application/json'].schema
    expect(typesBody.properties.event_types.maxItems).toBe(1000)
    const attributeType = JSON.stringify(typesBody.properties.object_types.items.properties.attributes.items.properties.type)
    expect(['string', 'time', 'integer', 'float', 'boolean'].filter((t) => attributeType.includes(`"${t}"`))).toHaveLength(5)
    expect(attributeType).not.toContain('"date"')
    const eventBody = doc.paths['/v1/event'].post.requestBody.content['application/json'].schema
    expect(eventBody.properties.objects.maxItems).toBe(50)
    expect(eventBody.properties.event.maxLength).toBe(200)
    expect(Object.keys(doc.paths['/v1/event'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '422', '429']))
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'bearer'])
  })
})

describe('GET /docs', () => {
  it('serves the docs page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
  })
})

describe('unknown routes', () => {
  it('answer 404 problem+json', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/event' })
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  })
})

describe('request logs', () => {
  it('carry the request id and never the key secret', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const limiter = memoryRateLimiter({ perMinute: 100 })
    const app = await buildApp({ ingest: new Ingest(t.log), keys: t.keys, rateLimiter: limiter, logger: pino({ level: 'info' }, sink) })
    try {
      const k = await t.newKey()
      await app.inject({ method: 'GET', url: '/v1/health', headers: { authorization: `Bearer ${k.key}`, 'x-request-id': 'log-check-1' } })
      await app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-ocelog-api-key': k.key } })
      const text = lines.join('')
      expect(text).toContain('"reqId":"log-check-1"')
      expect(text).not.toContain(k.key)
      expect(text).not.toContain(k.key.slice(-43))
    } finally {
      await app.close()
      await limiter.close()
    }
  })
})
