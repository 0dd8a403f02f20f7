/**
 * How the client puts one HTTP request on the wire. The default is Node's own `http`/`https`
 * modules with a keep-alive agent per client; a `fetch` passed in the options (a test double, a
 * fetch with a proxy dispatcher) is used instead when given.
 *
 * Why not the global fetch by default: in Node 20, fetch (undici's WHATWG layer: Request, Headers,
 * streams, a FinalizationRegistry per response) cost the client about 0.3 CPU-seconds more than
 * `http.request` over the 285 requests of `ocelog import` of the running example (18,211 events and
 * 10,169 upserts), measured with the service on the same two cores (bench/HISTORY.md#rounds-7-to-9-import-and-the-api-thread). The
 * answers are the same: the service never compresses them, and this transport asks for no content
 * coding (no `Accept-Encoding`), so what arrives is the JSON itself.
 *
 * Differences from fetch that a caller can see: a redirect (3xx) is answered as it is, not followed
 * (the ingestion API never redirects; a proxy that does would turn a POST into a GET under fetch);
 * and `Content-Length` is always sent, never chunked encoding.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

/** One request as the client sends it. `body` is the encoded JSON (gzip bytes when compressed). */
export interface TransportRequest {
  method: 'GET' | 'POST'
  url: string
  headers: Record<string, string>
  body?: string | Buffer
  /** Ends the request (and the reading of its answer) with an error named `AbortError` or `TimeoutError`. */
  signal: AbortSignal
}

/** An answer: the status, the `Retry-After` header (or null) and the body as text (UTF-8). */
export interface TransportAnswer {
  status: number
  retryAfter: string | null
  text: string
}

/**
 * Sends one request and reads its whole answer.
 * @throws (rejects with) an Error when no answer arrived: the connection failed or closed early
 *   (the message says which), or `signal` aborted (then the error's name is `AbortError` or
 *   `TimeoutError`, as fetch's are).
 */
export type Transport = (request: TransportRequest) => Promise<TransportAnswer>

/** The transport over a fetch function (the `fetch` option). */
export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async ({ method, url, headers, body, signal }) => {
    const res = await fetchFn(url, { method, headers, ...(body === undefined ? {} : { body }), signal })
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() }
  }
}

/** Reads a response's body whole, as UTF-8. Rejects when the connection ends before the body does. */
function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    res.on('data', (chunk: Buffer) => chunks.push(chunk))
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    res.on('error', reject)
    res.on('close', () => {
      if (!res.complete) reject(new Error('the connection closed before the answer was complete'))
    })
  })
}

/**
 * Ms after which a kept-alive connection that carries no request is closed: below the 5 s for which
 * Node's HTTP server keeps an idle connection by default (Fastify keeps it 72 s), so the client
 * rarely sends on a connection the server is closing; undici, behind fetch, also closes after 4 s.
 * A request that meets such a close anyway fails as a network error and is retried.
 */
export const IDLE_CONNECTION_MS = 4_000

/**
 * The default transport: `http.request` / `https.request` on keep-alive agents that hold at most
 * `maxSockets` connections per origin (the client's `concurrency`) and close a connection idle for
 * `idleMs`. Idle connections do not keep the process alive (Node unrefs a kept-alive socket while it
 * waits).
 */
export function nodeTransport(maxSockets: number, idleMs = IDLE_CONNECTION_MS): Transport {
  // An agent's `timeout` closes a connection only while it waits in the agent's free list; a request
  // in flight is bounded by `signal` instead.
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets, timeout: idleMs }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets, timeout: idleMs }),
  }
  return ({ method, url, headers, body, signal }) =>
    new Promise<TransportAnswer>((resolve, reject) => {
      // An abort through `signal` rejects with the signal's reason when it is one (TimeoutError for
      // AbortSignal.timeout), as fetch does, so callers tell a timeout from a network error by name.
      const fail = (error: Error) => reject(signal.aborted && signal.reason instanceof Error ? signal.reason : error)
      const target = new URL(url)
      const secure = target.protocol === 'https:'
      const send = secure ? httpsRequest : httpRequest
      const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length
      const req = send(
        target,
        {
          method,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(length) },
          agent: secure ? agents['https:'] : agents['http:'],
          signal,
        },
        (res) => {
          readBody(res).then((text) => {
            const retryAfter = res.headers['retry-after']
            resolve({ status: res.statusCode ?? 0, retryAfter: retryAfter ?? null, text })
          }, fail)
        },
      )
      req.on('error', fail)
      req.end(body)
    })
}
