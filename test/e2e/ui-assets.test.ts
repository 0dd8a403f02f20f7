/**
 * API tier: `/ui/` is served by the app itself from the assets `npm run build` puts in dist/ui
 * (`npm test` builds first), with a Content-Security-Policy that lets the page reach only its own origin;
 * its icon is `/favicon.ico`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAVICON_SVG } from '../../src/api/favicon.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp

beforeAll(async () => {
  t = await makeTestApp()
})
afterAll(async () => t.close())

describe('/ui/', () => {
  it('serves the page without a key, with a same-origin Content-Security-Policy', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.body).toContain('<script type="module" src="main.js"></script>')
    expect(res.headers['content-security-policy']).toContain("connect-src 'self'")
  })

  it('serves Graphviz as WebAssembly from the service itself', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/vendor/graphviz.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('javascript')
    expect(res.body).toContain('WebAssembly')
  })

  it('answers /favicon.ico with its SVG icon, without a key, and the page links it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.ico' })
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/svg+xml'])
    expect(res.body).toBe(FAVICON_SVG)
    expect(res.body).not.toMatch(/href=|url\(/)
    const page = await t.app.inject({ method: 'GET', url: '/ui/' })
    expect(page.body).toContain('<link rel="icon" href="/favicon.ico" type="image/svg+xml" />')
  })

  it('redirects /ui to /ui/', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui' })
    expect([res.statusCode, res.headers.location]).toEqual([301, '/ui/'])
  })
})
