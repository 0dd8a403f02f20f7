/**
 * Property-based test of the /v1 ingest endpoints against adversarial input: 10,000 generated
 * requests per run (fast-check, fixed seed) through `inject` into an app on a real SQLite file,
 * mixing valid and bad bodies and headers: wrong types, lengths in code points at and over their
 * limits, 50/51 objects, 100/101 items, unicode and lone surrogates, deep nesting, non-finite
 * numbers, `__proto__` keys, leap seconds and other date-times, compressed bodies, odd and
 * repeated auth headers. For every request: no 5xx; the status and each item's fate are what an
 * independent oracle (test/helpers/ingest-oracle.ts) says; afterwards every acknowledged event and
 * object upsert is in the log exactly as sent.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batchItems, expectEvent, expectUpsert, RULES, type Verdict } from '../helpers/ingest-oracle.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

const SEED = 20_261_122
const RUNS = 200
const REQUESTS_PER_RUN = 50
const IN_FLIGHT = 50
const BODY_LIMIT = 1024 * 1024

let t: TestApp
let writer: { key: string; dataset: string }
let other: { key: string; dataset: string }
let reader: { key: string; dataset: string }

beforeAll(async () => {
  t = await makeTestApp({ perMinute: 100_000_000, bodyLimitBytes: BODY_LIMIT })
  const w = await t.newKey({ name: 'writer' })
  const o = await t.newKey({ name: 'other' })
  const r = await t.newKey({ name: 'reader', scopes: ['process:read'] })
  writer = { key: w.key, dataset: w.dataset_id }
  other = { key: o.key, dataset: o.dataset_id }
  reader = { key: r.key, dataset: r.dataset_id }
})
afterAll(async () => t.close())

// ---------- JSON text with what JSON.stringify cannot write ----------

/** A piece of JSON text placed as is (1e309, -0, 4,500 nested arrays). */
class Raw {
  constructor(readonly text: string) {}
}

function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`
  if (typeof v === 'object' && v !== null) {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

// ---------- generators ----------

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })

/** A string for a field of at most `max` code points: mostly valid, sometimes at or over the limit, empty, mistyped or ill-formed. */
function nameArb(max: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    w(10, fc.string({ minLength: 1, maxLength: 12 })),
    w(3, fc.string({ unit: 'binary', minLength: 1, maxLength: 12 })),
    w(
      1,
      fc.constantFrom(max, max + 1).map((n) => '😀'.repeat(n)),
    ),
    w(
      1,
      fc.constantFrom(max, max + 1).map((n) => 'é'.repeat(n)),
    ),
    w(1, fc.constantFrom<unknown>('', null, 42, true, [], {}, ['x'], 'a\ud800b', '\udc00', ' ', '\u0000')),
  )
}

/** 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
const MIN_MS = -62_135_596_800_000
const MAX_MS = 253_402_300_799_999
const DAY_MS = 86_400_000

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/** A date-time written from an instant and an offset in one of the accepted forms (the local year may leave 0000–9999). */
const formedTimestampArb = fc
  .record({
    ms: fc.oneof(
      w(6, fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) })),
      w(1, fc.integer({ min: MIN_MS, max: MAX_MS })),
      w(1, fc.integer({ min: MIN_MS - DAY_MS, max: MIN_MS + DAY_MS })),
      w(1, fc.integer({ min: MAX_MS - DAY_MS, max: MAX_MS + DAY_MS })),
    ),
    offset: fc.oneof(w(3, fc.constant(0)), w(2, fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }))),
    form: fc.constantFrom('extended', 'basic', 'colonless', 'hours', 'z', 'lower'),
    fraction: fc.constantFrom('', '.5', ',25', '.123', '.999999', ',0'),
  })
  .map(({ ms, offset, form, fraction }) => {
    const hoursOnly = form === 'hours'
    const off = hoursOnly ? Math.trunc(offset / 60) * 60 : offset
    const local = new Date(ms + off * 60_000)
    const y = local.getUTCFullYear()
    const ys = y < 0 ? `-${pad(-y, 4)}` : pad(y, 4)
    const [mo, d, h, mi, s] = [local.getUTCMonth() + 1, local.getUTCDate(), local.getUTCHours(), local.getUTCMinutes(), local.getUTCSeconds()].map((n) =>
      pad(n, 2),
    )
    const sign = off < 0 ? '-' : '+'
    const oh = pad(Math.trunc(Math.abs(off) / 60), 2)
    const om = pad(Math.abs(off) % 60, 2)
    const zone =
      form === 'z' || off === 0 ? 'Z' : form === 'colonless' || form === 'basic' ? `${sign}${oh}${om}` : hoursOnly ? `${sign}${oh}` : `${sign}${oh}:${om}`
    const text = form === 'basic' ? `${ys}${mo}${d}T${h}${mi}${s}${fraction}${zone}` : `${ys}-${mo}-${d}T${h}:${mi}:${s}${fraction}${zone}`
    return form === 'lower' ? text.toLowerCase() : text
  })

const timestampArb: fc.Arbitrary<unknown> = fc.oneof(
  w(8, formedTimestampArb),
  w(
    3,
    fc.constantFrom<unknown>(
      '2016-12-31T23:59:60Z',
      '2016-12-31T23:59:60.5+00:00',
      '20161231T235960Z',
      '2024-05-01T24:00:00Z',
      '2024-05-01T24:00:00.000+02',
      '2024-05-01T24:00:01Z',
      '2024-05-01T10:00:00',
      '2024-05-01',
      '2024-05-01T10:00Z',
      '2024-W18-3T10:00:00Z',
      '2024-122T10:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-02-29T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-05-01T10:00:00+24:00',
      '2024-05-01T10:00:00+02:60',
      '20240501T10:00:00Z',
      '2024-05-01 10:00:00Z',
      '+012024-05-01T10:00:00Z',
      '0000-01-01T00:00:00+14:00',
      '9999-12-31T23:59:59.999-12:00',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
      'yesterday',
      '',
      1714557600000,
      null,
    ),
  ),
)

const keyArb = fc.oneof(
  w(6, fc.string({ minLength: 0, maxLength: 8 })),
  w(2, fc.string({ unit: 'binary', minLength: 1, maxLength: 6 })),
  w(2, fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'a/b', '~1', '', '\ud800x', 'end_timestamp')),
)

const leafArb: fc.Arbitrary<unknown> = fc.oneof(
  w(4, fc.string({ unit: 'binary', maxLength: 16 })),
  w(3, fc.integer()),
  w(2, fc.double({ noNaN: true, noDefaultInfinity: true })),
  w(1, fc.boolean()),
  w(1, fc.constant(null)),
  w(1, fc.constantFrom<unknown>(new Raw('1e309'), new Raw('-1e309'), new Raw('1e308'), new Raw('-0'), new Raw('12345678901234567890'), new Raw('1E2'))),
  w(1, fc.constantFrom<unknown>('a\ud800', '\udfff', '😀', '\u0000', '\u2028')),
  w(
    1,
    fc.constantFrom(62, 63, 64, 65, 4500).map((d) => new Raw(`${'['.repeat(d)}${']'.repeat(d)}`)),
  ),
)

const { value: jsonValueArb } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leafArb, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries)),
}))

const propertiesObjectArb = fc.array(fc.tuple(keyArb, jsonValueArb), { maxLength: 5 }).map((entries) => Object.fromEntries(entries))

/** Padding that puts an item near 512 KiB as JSON. */
const bigPadArb = fc
  .constantFrom(500 * 1024, RULES.itemBytesMax - 120, RULES.itemBytesMax - 60, RULES.itemBytesMax, 600 * 1024)
  .map((n) => ({ pad: 'x'.repeat(n) }))

const propertiesArb: fc.Arbitrary<unknown> = fc.oneof(
  w(120, propertiesObjectArb),
  w(6, fc.constantFrom<unknown>(null, [], 'x', 1, [{ a: 1 }])),
  w(1, bigPadArb),
)

/** Sometimes `arb`, mostly absent (undefined keys are dropped by `present`), so that most items are valid. */
function rarely<T>(arb: fc.Arbitrary<T>, weight = 1, absent = 3): fc.Arbitrary<T | undefined> {
  return fc.oneof(w(absent, fc.constant(undefined)), w(weight, arb))
}

/** The object without its undefined keys: what JSON would carry. */
function present(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
}

const eventObjectArb = fc
  .record({
    type: nameArb(RULES.objectTypeMax),
    id: nameArb(RULES.objectIdMax),
    qualifier: rarely(nameArb(RULES.qualifierMax), 1, 2),
    properties: rarely(propertiesArb, 1, 2),
    extra: rarely(fc.constant(1), 1, 7),
  })
  .map(present)
const saneObjectArb = fc.record({ type: fc.constantFrom('order', 'item', 'customer'), id: fc.string({ minLength: 1, maxLength: 6 }) })

const objectsArb: fc.Arbitrary<unknown> = fc.oneof(
  w(10, fc.array(eventObjectArb, { minLength: 1, maxLength: 4 })),
  w(
    2,
    fc.constantFrom(0, 1, 50, 51).map((n) => Array.from({ length: n }, (_, i) => ({ type: 'order', id: `o${String(i)}` }))),
  ),
  w(1, fc.constantFrom<unknown>(null, {}, 'x', [null], [[]])),
)

const eventArb: fc.Arbitrary<unknown> = fc.oneof(
  w(
    12,
    fc
      .record({
        event: nameArb(RULES.eventNameMax),
        objects: fc.oneof(w(3, fc.array(saneObjectArb, { minLength: 1, maxLength: 3 })), w(2, objectsArb)),
        timestamp: rarely(timestampArb, 3, 1),
        end_timestamp: rarely(timestampArb, 1, 1),
        properties: rarely(propertiesArb, 2, 1),
        timestmp: rarely(fc.constant('2024-05-01T10:00:00Z'), 1, 10),
      })
      .map(present),
  ),
  w(1, fc.constantFrom<unknown>(null, [], 'event', 7, {})),
)

const upsertArb: fc.Arbitrary<unknown> = fc.oneof(
  w(
    12,
    fc
      .record({
        type: nameArb(RULES.objectTypeMax),
        id: nameArb(RULES.objectIdMax),
        properties: rarely(propertiesArb, 3, 1),
        extra: rarely(fc.constant(true), 1, 7),
      })
      .map(present),
  ),
  w(1, fc.constantFrom<unknown>(null, [], 'object', {})),
)

function batchArb(field: 'events' | 'objects', item: fc.Arbitrary<unknown>, simple: () => unknown): fc.Arbitrary<unknown> {
  return fc.oneof(
    w(
      12,
      fc.array(item, { maxLength: 6 }).map((items) => ({ [field]: items })),
    ),
    w(
      1,
      fc.constantFrom(99, 100, 101).map((n) => ({ [field]: Array.from({ length: n }, simple) })),
    ),
    w(
      1,
      fc.constantFrom<unknown>(
        [],
        {},
        { [field]: null },
        { [field]: {} },
        { [field]: [], extra: 1 },
        { [field === 'events' ? 'objects' : 'events']: [] },
        'batch',
      ),
    ),
  )
}

type Endpoint = 'event' | 'eventBatch' | 'upsert' | 'objectBatch'
const PATHS: Record<Endpoint, string> = { event: '/v1/event', eventBatch: '/v1/event/batch', upsert: '/v1/object/upsert', objectBatch: '/v1/object/batch' }

const bodyArb = (endpoint: Endpoint): fc.Arbitrary<unknown> => {
  switch (endpoint) {
    case 'event':
      return eventArb
    case 'eventBatch':
      return batchArb('events', eventArb, () => ({ event: 'Bulk', objects: [{ type: 'order', id: 'b' }] }))
    case 'upsert':
      return upsertArb
    case 'objectBatch':
      return batchArb('objects', upsertArb, () => ({ type: 'order', id: 'b', properties: { n: 1 } }))
  }
}

type AuthCase =
  | 'bearer'
  | 'bearer-lower'
  | 'bearer-spaces'
  | 'x-key'
  | 'both-same'
  | 'x-key-twice-same'
  | 'both-different'
  | 'authorization-twice'
  | 'x-key-twice-different'
  | 'x-key-empty-with-bearer'
  | 'none'
  | 'malformed'
  | 'basic'
  | 'unknown-key'
  | 'reader'

const authArb: fc.Arbitrary<AuthCase> = fc.oneof(
  w(30, fc.constant<AuthCase>('bearer')),
  w(
    1,
    fc.constantFrom<AuthCase>(
      'bearer-lower',
      'bearer-spaces',
      'x-key',
      'both-same',
      'x-key-twice-same',
      'both-different',
      'authorization-twice',
      'x-key-twice-different',
      'x-key-empty-with-bearer',
      'none',
      'malformed',
      'basic',
      'unknown-key',
      'reader',
    ),
  ),
)

function authHeaders(auth: AuthCase): Record<string, string | string[]> {
  const unknown = `ocl_0000000000000000_${'A'.repeat(43)}`
  switch (auth) {
    case 'bearer':
      return { authorization: `Bearer ${writer.key}` }
    case 'bearer-lower':
      return { authorization: `bearer ${writer.key}` }
    case 'bearer-spaces':
      return { authorization: `Bearer    ${writer.key}` }
    case 'x-key':
      return { 'x-ocelog-api-key': writer.key }
    case 'both-same':
      return { authorization: `Bearer ${writer.key}`, 'x-ocelog-api-key': writer.key }
    case 'x-key-twice-same':
      return { 'x-ocelog-api-key': [writer.key, writer.key] }
    case 'both-different':
      return { authorization: `Bearer ${writer.key}`, 'x-ocelog-api-key': other.key }
    case 'authorization-twice':
      return { authorization: [`Bearer ${writer.key}`, `Bearer ${unknown}`] }
    case 'x-key-twice-different':
      return { 'x-ocelog-api-key': [writer.key, other.key] }
    case 'x-key-empty-with-bearer':
      return { authorization: `Bearer ${writer.key}`, 'x-ocelog-api-key': '' }
    case 'none':
      return {}
    case 'malformed':
      return { authorization: 'Bearer not-a-key' }
    case 'basic':
      return { authorization: `Basic ${writer.key}` }
    case 'unknown-key':
      return { 'x-ocelog-api-key': unknown }
    case 'reader':
      return { authorization: `Bearer ${reader.key}` }
  }
}

function authStatus(auth: AuthCase): number | null {
  if (auth === 'reader') return 403
  return ['bearer', 'bearer-lower', 'bearer-spaces', 'x-key', 'both-same', 'x-key-twice-same'].includes(auth) ? null : 401
}

type ContentType = 'json' | 'json-charset' | 'text' | 'none' | 'form'
type Encoding = 'none' | 'gzip' | 'deflate' | 'br' | 'identity' | 'unknown' | 'mislabelled'
type Mangle = 'none' | 'truncate' | 'empty' | 'trailing' | 'padded'

const requestArb = fc.constantFrom<Endpoint>('event', 'eventBatch', 'upsert', 'objectBatch').chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    body: bodyArb(endpoint),
    auth: authArb,
    contentType: fc.oneof(w(30, fc.constant<ContentType>('json')), w(1, fc.constantFrom<ContentType>('json-charset', 'text', 'none', 'form'))),
    encoding: fc.oneof(w(25, fc.constant<Encoding>('none')), w(1, fc.constantFrom<Encoding>('gzip', 'deflate', 'br', 'identity', 'unknown', 'mislabelled'))),
    mangle: fc.oneof(w(40, fc.constant<Mangle>('none')), w(1, fc.constantFrom<Mangle>('truncate', 'empty', 'trailing', 'padded'))),
    requestId: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('ok-id.1:2', 'x'.repeat(129), 'bad id')), { nil: undefined }),
  }),
)

type GeneratedRequest = typeof requestArb extends fc.Arbitrary<infer R> ? R : never

// ---------- the oracle for a whole request ----------

interface Expected {
  status: number
  /** Per item of the request (one for single endpoints): its verdict, when the request reaches validation. */
  verdicts?: Verdict[]
  /** The parsed items, as the service parses them. */
  items?: unknown[]
}

function encode(text: string, encoding: Encoding): Buffer {
  const raw = Buffer.from(text)
  switch (encoding) {
    case 'gzip':
      return gzipSync(raw)
    case 'deflate':
      return deflateSync(raw)
    case 'br':
      return brotliCompressSync(raw)
    default:
      return raw
  }
}

function bodyText(r: GeneratedRequest): string {
  const text = toJson(r.body)
  switch (r.mangle) {
    case 'truncate':
      return text.slice(0, Math.max(0, text.length - 1))
    case 'empty':
      return ''
    case 'trailing':
      return `${text} x`
    case 'padded':
      // Valid JSON over the body limit (white space): 413 as sent, or once decompressed.
      return `${text}${' '.repeat(BODY_LIMIT)}`
    default:
      return text
  }
}

function expected(r: GeneratedRequest, text: string, sent: Buffer): Expected {
  if (sent.length > BODY_LIMIT) return { status: 413 }
  const auth = authStatus(r.auth)
  if (auth !== null) return { status: auth }
  if (r.encoding === 'unknown') return { status: 415 }
  // A request without Content-Type and without a body has nothing to parse: its missing item is a 422.
  if (r.contentType === 'none' && sent.length === 0) return { status: 422 }
  if (r.contentType === 'text' || r.contentType === 'none' || r.contentType === 'form') return { status: 415 }
  if (Buffer.byteLength(text) > BODY_LIMIT) return { status: 413 }
  if (r.encoding === 'mislabelled') return { status: 400 }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { status: 400 }
  }
  // The service measures items when the body may be over 512 KiB: always when it came compressed.
  const measured = !['none', 'identity'].includes(r.encoding) || sent.length > RULES.itemBytesMax
  switch (r.endpoint) {
    case 'event': {
      const v = expectEvent(parsed, measured)
      return { status: v.ok ? 200 : 422, verdicts: [v], items: [parsed] }
    }
    case 'upsert': {
      const v = expectUpsert(parsed, measured)
      return { status: v.ok ? 200 : 422, verdicts: [v], items: [parsed] }
    }
    case 'eventBatch':
    case 'objectBatch': {
      const items = batchItems(parsed, r.endpoint === 'eventBatch' ? 'events' : 'objects')
      if (items === null) return { status: 422 }
      const judge = r.endpoint === 'eventBatch' ? expectEvent : expectUpsert
      return { status: 200, verdicts: items.map((i) => judge(i, measured)), items }
    }
  }
}

// ---------- running ----------

interface Acknowledged {
  events: Map<string, { item: Record<string, unknown>; verdict: Verdict }>
  upserts: { requestId: string; objectId: string; item: Record<string, unknown> }[]
}

const CONTENT_TYPES: Record<ContentType, string | undefined> = {
  json: 'application/json',
  'json-charset': 'application/json; charset=utf-8',
  text: 'text/plain',
  none: undefined,
  form: 'application/x-www-form-urlencoded',
}

/** Answers seen, by status, and items refused, by the oracle's reason: the run must have reached each kind. */
const statuses = new Map<number, number>()
const refusals = new Map<string, number>()

async function send(r: GeneratedRequest, ack: Acknowledged): Promise<void> {
  const text = bodyText(r)
  const payload = encode(text, r.encoding)
  const headers: Record<string, string | string[]> = { ...authHeaders(r.auth) }
  const contentType = CONTENT_TYPES[r.contentType]
  if (contentType !== undefined) headers['content-type'] = contentType
  if (r.encoding !== 'none') headers['content-encoding'] = r.encoding === 'mislabelled' ? 'gzip' : r.encoding === 'unknown' ? 'compress' : r.encoding
  if (r.requestId !== undefined) headers['x-request-id'] = r.requestId
  const res = await t.app.inject({ method: 'POST', url: PATHS[r.endpoint], headers, payload })
  const exp = expected(r, text, payload)
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  const context = `${r.endpoint} ${r.auth} ${r.contentType} ${r.encoding} ${r.mangle}: ${text.slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 300)}`
  expect(res.statusCode, context).toBeLessThan(500)
  expect(res.statusCode, context).toBe(exp.status)
  if (res.statusCode !== 200) {
    expect(res.headers['content-type'], context).toMatch(/^application\/problem\+json/)
    return
  }
  const body = res.json()
  const requestId = String(res.headers['x-request-id'])
  const verdicts = exp.verdicts ?? []
  const items = exp.items ?? []
  const acceptedIndexes = verdicts.flatMap((v, i) => (v.ok ? [i] : []))
  for (const v of verdicts) if (!v.ok) refusals.set(v.why, (refusals.get(v.why) ?? 0) + 1)
  if (r.endpoint === 'event' || r.endpoint === 'eventBatch') {
    const ids: string[] = r.endpoint === 'event' ? [body.event_id] : body.event_ids
    expect(ids.length, context).toBe(acceptedIndexes.length)
    if (r.endpoint === 'eventBatch') {
      expect(body.failed, context).toBe(verdicts.length - acceptedIndexes.length)
      expect([...new Set((body.error_details as { index: number }[]).map((d) => d.index))], context).toEqual(verdicts.flatMap((v, i) => (v.ok ? [] : [i])))
    }
    acceptedIndexes.forEach((index, k) => {
      const id = ids[k]
      const verdict = verdicts[index]
      if (id === undefined || verdict === undefined) throw new Error(`missing id or verdict: ${context}`)
      ack.events.set(id, { item: items[index] as Record<string, unknown>, verdict })
    })
  } else {
    const results: { object_id: string }[] = r.endpoint === 'upsert' ? [body] : body.objects
    expect(results.length, context).toBe(acceptedIndexes.length)
    if (r.endpoint === 'objectBatch') expect(body.failed, context).toBe(verdicts.length - acceptedIndexes.length)
    acceptedIndexes.forEach((index, k) => {
      const result = results[k]
      if (result === undefined) throw new Error(`missing result: ${context}`)
      ack.upserts.push({ requestId, objectId: result.object_id, item: items[index] as Record<string, unknown> })
    })
  }
}

describe('the /v1 ingest endpoints under 10,000 adversarial requests', () => {
  it('never answer 5xx, accept exactly what the oracle accepts, and lose nothing acknowledged', async () => {
    const ack: Acknowledged = { events: new Map(), upserts: [] }
    let sent = 0
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: REQUESTS_PER_RUN, maxLength: REQUESTS_PER_RUN }), async (requests) => {
        for (let i = 0; i < requests.length; i += IN_FLIGHT) {
          await Promise.all(requests.slice(i, i + IN_FLIGHT).map((r) => send(r, ack)))
        }
        sent += requests.length
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    expect(sent).toBe(RUNS * REQUESTS_PER_RUN)

    const records = await t.log.readAll(null, 10_000_000)
    const events = new Map(records.flatMap((rec) => (rec.type === 'EventRecorded' ? [[rec.data.event_id, rec] as const] : [])))
    for (const [id, { item, verdict }] of ack.events) {
      const rec = events.get(id)
      expect(rec?.datasetId, id).toBe(writer.dataset)
      if (rec?.type !== 'EventRecorded' || !verdict.ok) throw new Error(`event ${id} acknowledged but not in the log`)
      expect(rec.data.event_type).toBe(item.event)
      if (verdict.timestamp !== undefined) expect(rec.data.timestamp).toBe(verdict.timestamp)
      expect(rec.data.end_timestamp).toBe(verdict.endTimestamp)
      expect(JSON.stringify(rec.data.properties)).toBe(JSON.stringify(item.properties ?? {}))
      const objects = item.objects as Record<string, unknown>[]
      expect(rec.data.objects.map((o) => [o.type, o.id, o.qualifier, JSON.stringify(o.properties)])).toEqual(
        objects.map((o) => [o.type, o.id, o.qualifier, o.properties === undefined ? undefined : JSON.stringify(o.properties)]),
      )
    }
    // Request ids may repeat (clients choose them), so an upsert is looked for among the records of its request id and object.
    const upserts = new Map<string, string[]>()
    for (const rec of records) {
      if (rec.type !== 'ObjectUpserted') continue
      const k = `${rec.data.request_id} ${rec.data.object_id}`
      upserts.set(k, [...(upserts.get(k) ?? []), JSON.stringify(rec.data.properties)])
    }
    for (const u of ack.upserts) {
      expect(upserts.get(`${u.requestId} ${u.objectId}`), `upsert ${u.objectId} of request ${u.requestId}`).toContain(JSON.stringify(u.item.properties ?? {}))
    }
    // Nothing lands anywhere but the writer's dataset.
    expect(records.every((rec) => rec.datasetId === writer.dataset)).toBe(true)
    // The run must have exercised both sides.
    console.info(
      `adversarial run (seed ${String(SEED)}): answers by status ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ` +
        `items refused by reason ${JSON.stringify(Object.fromEntries([...refusals].sort()))}`,
    )
    expect([...statuses.keys()].sort()).toEqual([200, 400, 401, 403, 413, 415, 422])
    expect([...refusals.keys()].sort()).toEqual(
      [
        'end_timestamp',
        'event name',
        'item size',
        'not an object',
        'object properties',
        'object shape',
        'object type or id',
        'objects count',
        'properties',
        'qualifier',
        'timestamp',
        'type or id',
        'unknown field',
      ].sort(),
    )
    const accepted = [...ack.events.values()].map((e) => JSON.stringify(e.item))
    expect(accepted.some((text) => text.includes('"__proto__"'))).toBe(true)
    expect(accepted.some((text) => /[\u{10000}-\u{10FFFF}]/u.test(text))).toBe(true)
    expect(ack.events.size).toBeGreaterThan(1000)
    expect(ack.upserts.length).toBeGreaterThan(1000)
  }, 300_000)
})
