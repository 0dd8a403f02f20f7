/**
 * MCP over Streamable HTTP at `/mcp` (Model Context Protocol 2025-06-18, § Transports, Streamable
 * HTTP), stateless: every POST gets a new server and transport for the key's dataset, answered as
 * one JSON response. Scope `process:read` (docs/api.md#authentication-and-scopes).
 *
 * Order of checks, all before any MCP message is read:
 * 1. Host and Origin against DNS rebinding (the transport section's security warning): the Host
 *    header's name must be one of the allowed host names, and an Origin, when sent, must name one
 *    of them too. Otherwise 403 problem+json of type `urn:ocelog:problem:host-not-allowed`, titled
 *    "Host not allowed".
 * 2. The /v1 authentication hook: key (401), rate limit (429, the request counts against the key's
 *    budget), scope (403).
 *
 * The MCP SDK and its zod schemas are loaded on the first call (mcpModules), not at start: a
 * service that no agent reads through MCP does not carry them in its heap (docs/operations.md#lazy-modules).
 */
import { hostname, networkInterfaces } from 'node:os'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type AuthDeps, authHook } from './auth.js'
import type { ProcessReads } from './process-routes.js'
import { problem, sendProblem } from './problem.js'

export interface McpRouteDeps extends AuthDeps {
  reader: ProcessReads
  /** Host names (no port; IPv6 in brackets) that Host and Origin may name. */
  allowedHosts: readonly string[]
  version: string
}

/**
 * The host names a server answers to by default: loopback (`localhost`, `127.0.0.1`, `[::1]`),
 * the machine's host name, and the addresses of its network interfaces. A DNS-rebinding page
 * reaches the server under the attacker's own domain name, which is none of these.
 */
export function defaultAllowedHosts(): string[] {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', hostname().toLowerCase()])
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) names.add(a.family === 'IPv6' ? `[${a.address.replace(/%.*$/, '')}]` : a.address)
  }
  return [...names]
}

/** The host name of a Host header value or of an Origin, lower case, or null when it does not parse. */
function hostNameOf(value: string, asOrigin: boolean): string | null {
  try {
    return new URL(asOrigin ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return null
  }
}

/** Checks Host and Origin (see module comment); sends 403 and returns false when they fail. */
export function hostGuard(allowedHosts: readonly string[]) {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()))
  const hint = 'DNS rebinding protection of /mcp; set OCELOG_ALLOWED_HOSTS to the host names clients use'
  // Its own type and title: the key and its scope were not even looked at.
  const refused = (detail: string) => problem(403, detail, { type: 'urn:ocelog:problem:host-not-allowed', title: 'Host not allowed' })
  return async function checkHost(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const host = req.headers.host
    const name = host === undefined ? null : hostNameOf(host, false)
    if (name === null || !allowed.has(name)) {
      await sendProblem(reply, refused(`Host ${host ?? '(none)'} is not one of this server's host names (${hint})`))
      return
    }
    const origin = req.headers.origin
    if (origin !== undefined) {
      const originName = hostNameOf(origin, true)
      if (originName === null || !allowed.has(originName)) {
        await sendProblem(reply, refused(`Origin ${origin} is not one of this server's host names (${hint})`))
      }
    }
  }
}

/** The modules that answer an MCP message, loaded once on the first `/mcp` call (see module comment). */
let mcpModules: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('../mcp/server.js')]> | null = null
function loadMcpModules() {
  // A load that failed is tried again on the next call, not remembered.
  mcpModules ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('../mcp/server.js')]).catch((error: unknown) => {
    mcpModules = null
    throw error
  })
  return mcpModules
}

/** Registers `/mcp` on `app` (call inside its own encapsulated plugin). */
export async function mcpRoute(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  app.decorateRequest('auth', null)
  app.addHook('onRequest', hostGuard(deps.allowedHosts))
  app.addHook('onRequest', authHook(deps))

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/mcp',
    config: { scope: 'process:read' },
    schema: { hide: true },
    handler: async (req, reply) => {
      if (req.auth === null) throw new Error('/mcp reached without authentication')
      if (req.method !== 'POST') {
        // Stateless: no session to resume or delete, and no server-initiated stream.
        reply.header('allow', 'POST')
        return sendProblem(reply, problem(405, `${req.method} /mcp: this MCP endpoint is stateless; send each JSON-RPC message as a POST`))
      }
      const [{ StreamableHTTPServerTransport }, { createReadServer }] = await loadMcpModules()
      const server = createReadServer(deps.reader, req.auth.datasetId, { version: deps.version })
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      // The transport writes the answer itself: keep the headers set so far (request id, rate limit).
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value)
      reply.hijack()
      reply.raw.on('close', () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(req.raw, reply.raw, req.body)
    },
  })
}
