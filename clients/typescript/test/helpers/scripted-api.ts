/**
 * A scripted stand-in for the ingestion API on node:http, for client tests of what the real service
 * cannot be made to do on demand (5xx, dropped connections, 413 at a chosen size, answers held back).
 * Its answers follow the shapes of src/contract/schemas.ts. It keeps every request: the parsed body, the
 * headers and the size on the wire; a gzip body (`Content-Encoding: gzip`) is decompressed first.
 *
 * ```ts
 * const server = await scripted((req, body, n, res) => (n === 1 ? json(res, 503, { title: 'down' }) : acceptAll(res, body, n)))
 * const client = new OcelogClient({ baseUrl: server.url, apiKey: 'k' })
 * // … server.bodies, server.requests, server.maxInFlight
 * await server.close()
 * ```
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import type { EventInput } from '../../src/api.js'

/** One request as the scripted server got it. */
/** A UUIDv7 (RFC 9562 § 5.7), as the TypeScript client makes idempotency keys. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

export interface ScriptedRequest {
  url: string
  headers: IncomingHttpHeaders
  /** Bytes of the body on the wire (compressed, when it was). */
  wireBytes: number
  /** The JSON body, decompressed. */
  body: ScriptedBody
}

export interface ScriptedBody {
  events?: EventInput[]
  objects?: unknown[]
}

export interface Scripted {
  url: string
  /** Every request body in arrival order (decompressed and parsed). */
  bodies: ScriptedBody[]
  requests: ScriptedRequest[]
  maxInFlight: number
  close(): Promise<void>
}

/** Decides the answer of request `n` (1-based); it may answer later by keeping `res`. */
export type Answer = (req: IncomingMessage, body: ScriptedBody, n: number, res: ServerResponse) => void

/** Starts a scripted server on a free port of 127.0.0.1; each answer is given after `delayMs`. */
export async function scripted(answer: Answer, delayMs = 0): Promise<Scripted> {
  const requests: ScriptedRequest[] = []
  const bodies: ScriptedBody[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server: Server = createServer((req, res) => {
    inFlight += 1
    maxInFlight = Math.max(maxInFlight, inFlight)
    res.on('close', () => {
      inFlight -= 1
    })
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')
      const body: ScriptedBody = text === '' ? {} : JSON.parse(text)
      bodies.push(body)
      requests.push({ url: req.url ?? '', headers: req.headers, wireBytes: raw.length, body })
      const n = bodies.length
      setTimeout(() => answer(req, body, n, res), delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    bodies,
    requests,
    get maxInFlight() {
      return maxInFlight
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Answers `status` with a JSON body (problem+json for 4xx/5xx). */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** A 200 batch answer accepting every item of the body, with made-up ids `<request>-<i>`; `fields` are added to it (e.g. `duplicates`). */
export function acceptAll(res: ServerResponse, body: ScriptedBody, n: number, fields: Record<string, unknown> = {}): void {
  if (body.objects !== undefined) {
    const objects = body.objects.map((o, i) => {
      const { type, id } = o as { type: string; id: string }
      return { object_id: `${String(n)}-${String(i)}`, object_type: type, external_id: id, created: true }
    })
    json(res, 200, { success: true, processed: objects.length, failed: 0, objects, errors: [], error_details: [], ...fields })
    return
  }
  const count = body.events?.length ?? 0
  json(res, 200, {
    success: true,
    processed: count,
    failed: 0,
    event_ids: Array.from({ length: count }, (_, i) => `${String(n)}-${String(i)}`),
    errors: [],
    error_details: [],
    ...fields,
  })
}

/** `n` valid events of type `Create Order` on objects order/o<from>… with timestamps one second apart. */
export function events(n: number, from = 0): EventInput[] {
  return Array.from({ length: n }, (_, i) => ({
    event: 'Create Order',
    timestamp: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(),
    objects: [{ type: 'order', id: `o${String(from + i)}`, qualifier: 'order' }],
  }))
}
