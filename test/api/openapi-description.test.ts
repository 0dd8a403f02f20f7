/**
 * The served OpenAPI document states the contract's rules in the project's own words (docs/api.md
 * in prose), with the limits the service enforces: the body limit it was built with, and LIMITS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await makeTestApp({ bodyLimitBytes: 65_536 })
})
afterAll(async () => t.close())

describe('GET /openapi.json info.description', () => {
  it('states authentication, scopes, limits, batches, the rate limit and the error format, with the served body limit', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    const description: unknown = res.json().info.description
    expect(typeof description).toBe('string')
    const text = String(description)
    expect(text).toContain('docs/api.md')
    expect(text).toContain('`Authorization: Bearer <key>` or `X-Ocelog-Api-Key: <key>`')
    expect(text).toContain('`ingest:write` for the POST endpoints, `process:read` for `/v1/process/*`')
    expect(text).toContain('event name 1–200 characters; 1–50 objects per event; object type 1–100, object id 1–500, qualifier 1–100 characters')
    expect(text).toContain('at most 100 items per batch; 512 KiB of JSON per item; `properties` nested at most 64 levels')
    expect(text).toContain('a request body of at most 65536 bytes (413 above it)')
    expect(text).toContain('429 with `Retry-After`')
    expect(text).toContain('RFC 9457 problem details')
    expect(text).not.toMatch(/specification/i)
  })
})
