/**
 * Compressed request bodies (RFC 9110 § 8.4 Content-Encoding): gzip, deflate and br are read,
 * the decompressed size is held to the body limit (413 against zip bombs), a body that does not
 * decompress answers 400, and an unknown coding 415.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventBody, makeTestApp, type TestApp } from '../helpers/test-app.js'

const BODY_LIMIT = 256 * 1024
let t: TestApp
let key: string

beforeAll(async () => {
  t = await makeTestApp({ bodyLimitBytes: BODY_LIMIT })
  key = (await t.newKey()).key
})
afterAll(async () => t.close())

function post(payload: Buffer, encoding: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/event/batch',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': encoding },
    payload,
  })
}

const batch = Buffer.from(JSON.stringify({ events: [eventBody(2), eventBody(3)] }))

describe('Content-Encoding of request bodies', () => {
  it.each([
    ['gzip', gzipSync(batch)],
    ['deflate', deflateSync(batch)],
    ['br', brotliCompressSync(batch)],
    ['identity', batch],
    ['GZip', gzipSync(batch)],
  ])('reads a %s body', async (encoding, payload) => {
    const res = await post(payload, encoding)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ processed: 2, failed: 0 })
  })

  it('answers 415 problem+json naming the coding for an unknown Content-Encoding', async () => {
    const res = await post(batch, 'compress')
    expect(res.statusCode).toBe(415)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toContain('compress')
  })

  it('answers 400 problem+json for a plain body labelled gzip', async () => {
    const res = await post(batch, 'gzip')
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toContain('gzip')
  })

  it('answers 413 problem+json when the decompressed body is over the limit (a zip bomb)', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * BODY_LIMIT, 0x20))
    expect(bomb.length).toBeLessThan(BODY_LIMIT)
    const res = await post(bomb, 'gzip')
    expect(res.statusCode).toBe(413)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  })

  it('still fails an item over 512 KiB once decompressed, though the gzip body is small', async () => {
    const big = Buffer.from(JSON.stringify({ events: [eventBody(1), eventBody(1, { properties: { pad: 'x'.repeat(600 * 1024) } })] }))
    const t2 = await makeTestApp()
    try {
      const k = await t2.newKey()
      const res = await t2.app.inject({
        method: 'POST',
        url: '/v1/event/batch',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: gzipSync(big),
      })
      expect(res.json()).toMatchObject({ processed: 1, failed: 1 })
      expect(res.json().error_details[0]).toMatchObject({ index: 1, path: '' })
    } finally {
      await t2.close()
    }
  })
})
