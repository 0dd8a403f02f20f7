/**
 * The TypeScript client's transport (clients/typescript/src/transport.ts) over real HTTP against the
 * scripted node:http server: Node's http with a keep-alive agent by default, the `fetch` option when
 * given. What a caller can observe: connections are reused up to `concurrency`, a timeout is told
 * from a network failure, an answer cut off midway is a network failure and is retried, Retry-After
 * and the body arrive as sent, and a redirect is answered as it is.
 */
import { once } from 'node:events'
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { OcelogClient, OcelogRequestError, type RetryNotice } from '../src/index.js'
import { nodeTransport } from '../src/transport.js'
import { acceptAll, events, json, type Scripted, scripted } from './helpers/scripted-api.js'

const fast = { baseDelayMs: 5, maxDelayMs: 20 }

describe('client transport', () => {
  let server: Scripted | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('reuses at most `concurrency` keep-alive connections over many requests', async () => {
    const sockets = new Set<Socket>()
    server = await scripted((req, body, n, res) => {
      sockets.add(req.socket)
      acceptAll(res, body, n)
    })
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', concurrency: 3 })
    const result = await client.sendEvents(events(2_000))
    expect(result.accepted).toHaveLength(2_000)
    expect(server.requests).toHaveLength(20)
    expect(sockets.size).toBeGreaterThanOrEqual(1)
    expect(sockets.size).toBeLessThanOrEqual(3)
    expect(server.requests.every((r) => r.headers.connection === 'keep-alive')).toBe(true)
    expect(server.requests.every((r) => r.headers['content-length'] === String(r.wireBytes))).toBe(true)
  })

  it('closes a kept-alive connection idle for idleMs, and answers the next request on a new one', async () => {
    const sockets = new Set<Socket>()
    server = await scripted((req, body, n, res) => {
      sockets.add(req.socket)
      acceptAll(res, body, n)
    })
    const send = nodeTransport(1, 100)
    const request = () =>
      send({ method: 'POST', url: `${server?.url ?? ''}/v1/event/batch`, headers: {}, body: '{"events":[]}', signal: AbortSignal.timeout(5_000) })
    await request()
    await request()
    expect(sockets.size).toBe(1)
    // The server sees the kept-alive connection end when the client closes it, idle for 100 ms.
    const [first] = sockets
    if (first !== undefined && !first.closed) await once(first, 'close')
    const third = await request()
    expect(third.status).toBe(200)
    expect(sockets.size).toBe(2)
  })

  it('keeps a request that outlasts idleMs waiting for its answer', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n), 300)
    const answer = await nodeTransport(
      1,
      100,
    )({
      method: 'POST',
      url: `${server.url}/v1/event/batch`,
      headers: {},
      body: '{"events":[]}',
      signal: AbortSignal.timeout(5_000),
    })
    expect(answer.status).toBe(200)
  })

  it('reports a request that outlives timeoutMs as a timeout and retries it', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) return // never answered: the client's timer ends it
      acceptAll(res, body, n)
    })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', timeoutMs: 200, retry: fast, onRetry: (x) => notices.push(x) })
    const result = await client.sendEvents(events(3))
    expect(result.accepted.map((a) => a.index)).toEqual([0, 1, 2])
    expect(notices.map((x) => [x.cause, x.message])).toEqual([['timeout', 'no answer within 200 ms']])
  })

  it('reports an answer cut off before its end as a network failure and retries it', async () => {
    server = await scripted((_req, body, n, res) => {
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
        res.write('{"success":true,')
        setTimeout(() => res.socket?.destroy(), 20)
        return
      }
      acceptAll(res, body, n)
    })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', retry: fast, onRetry: (x) => notices.push(x) })
    const result = await client.sendEvents(events(2))
    expect(result.accepted).toHaveLength(2)
    expect(notices.map((x) => x.cause)).toEqual(['network'])
    expect(server.bodies).toHaveLength(2)
  })

  it('reports a refused connection as a network failure with the system message', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const url = server.url
    await server.close()
    server = undefined
    const client = new OcelogClient({ baseUrl: url, apiKey: 'k', retry: { ...fast, maxAttempts: 2 } })
    const error = await client.health().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(OcelogRequestError)
    expect((error as OcelogRequestError).kind).toBe('retries-exhausted')
    expect((error as OcelogRequestError).message).toMatch(/ECONNREFUSED.*after 2 attempts/)
  })

  it('hands the status, Retry-After and body over as sent, and does not follow a redirect', async () => {
    server = await scripted((_req, _body, n, res) => {
      if (n === 1) json(res, 503, { title: 'down' }, { 'retry-after': '7' })
      else json(res, 307, { title: 'moved' }, { location: 'http://127.0.0.1:1/elsewhere' })
    })
    const send = nodeTransport(1)
    const signal = AbortSignal.timeout(5_000)
    const headers = { 'content-type': 'application/json' }
    const first = await send({ method: 'POST', url: `${server.url}/v1/event/batch`, headers, body: '{"events":[]}', signal })
    expect(first).toEqual({ status: 503, retryAfter: '7', text: '{"title":"down"}' })
    const second = await send({ method: 'POST', url: `${server.url}/v1/event/batch`, headers, body: Buffer.from('{"events":[]}'), signal })
    expect(second).toEqual({ status: 307, retryAfter: null, text: '{"title":"moved"}' })
    expect(server.requests.map((r) => [r.url, r.wireBytes])).toEqual([
      ['/v1/event/batch', 13],
      ['/v1/event/batch', 13],
    ])
  })

  it('sends through the `fetch` option when one is given', async () => {
    server = await scripted((_req, body, n, res) => acceptAll(res, body, n))
    const urls: string[] = []
    const counting: typeof fetch = (input, init) => {
      urls.push(String(input))
      return fetch(input, init)
    }
    const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k', fetch: counting })
    const result = await client.sendEvents(events(150))
    expect(result.accepted).toHaveLength(150)
    expect(urls).toEqual([`${server.url}/v1/event/batch`, `${server.url}/v1/event/batch`])
  })
})
