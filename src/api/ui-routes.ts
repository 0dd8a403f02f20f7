/**
 * `/ui/`: the web page that draws the process map, served by the service itself (no CDN). Its
 * assets (page, stylesheet, compiled script, Graphviz as WebAssembly) are built into `dist/ui` by
 * `npm run build`, which `npm install` runs. The page reads `/v1/process/*` with an API key the
 * user pastes, kept in the tab's sessionStorage only.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { FAVICON_SVG } from './favicon.js'
import { UI_ASSET_DIR } from './ui-assets.js'
import { problem, sendProblem } from './problem.js'

/**
 * The page only talks to its own origin; the inline WebAssembly of Graphviz needs
 * 'wasm-unsafe-eval'; Graphviz's SVG carries inline style attributes.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Registers `/ui/` (and `/ui` → `/ui/`) and the icon `/favicon.ico` (SVG, no key needed) on `app`. */
export async function uiRoutes(app: FastifyInstance): Promise<void> {
  app.get('/favicon.ico', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG),
  )
  if (!existsSync(join(UI_ASSET_DIR, 'index.html'))) {
    app.get('/ui/*', { schema: { hide: true } }, async (_req, reply) =>
      sendProblem(reply, problem(503, `the web page's assets are not built (${UI_ASSET_DIR} is missing): run npm run build`)),
    )
    return
  }
  app.get('/ui', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/', 301))
  await app.register(fastifyStatic, {
    root: UI_ASSET_DIR,
    prefix: '/ui/',
    index: ['index.html'],
    wildcard: true,
    cacheControl: true,
    maxAge: 0,
    setHeaders: (res) => {
      res.header('content-security-policy', CONTENT_SECURITY_POLICY)
      res.header('x-content-type-options', 'nosniff')
      res.header('referrer-policy', 'no-referrer')
    },
  })
}
