/**
 * A 413 reaches a client that sends a too-large body without `Expect: 100-continue`: the answer
 * comes before the body is read, and the connection is not reset under the client. Over a real
 * socket (inject has none), with a client that writes the whole body before it reads the answer,
 * as Python's http.client and many others do: a server that closes while the body is still
 * arriving resets the connection, and such a client sees EPIPE/ECONNRESET instead of the 413.
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.js'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let key: string
let port: number

beforeAll(async () => {
  t = await makeTestApp()
  key = (await t.newKey()).key
  port = await freePort()
  await t.app.listen({ port, host: '127.0.0.1' })
})
afterAll(async () => t.close())

interface Answer {
  status: number
  head: string
  body: string
}

/**
 * POSTs `size` bytes with a Content-Length and no Expect header over a raw socket; writes all of
 * it, then reads the answer. Rejects when a write fails or the connection is reset before the answer.
 */
function postBytes(size: number, authorization = `Bearer ${key}`, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    const received: Buffer[] = []
    let written = false
    socket.on('error', reject)
    socket.on('data', (c: Buffer) => {
      if (written) received.push(c)
      else socket.pause() // read nothing until the body is written, then take what is buffered
    })
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1')
      const [head = '', body = ''] = text.split('\r\n\r\n', 2)
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)
      if (status === 0) reject(new Error(`no answer (${String(text.length)} bytes received)`))
      else resolve({ status, head, body })
    })
    socket.pause()
    socket.write(
      `POST /v1/event/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${String(size)}`}\r\nConnection: close\r\n\r\n`,
    )
    const chunk = Buffer.alloc(1024 * 1024, 0x20)
    let left = size
    const writeMore = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length)
        left -= n
        const data = n === chunk.length ? chunk : chunk.subarray(0, n)
        if (chunked) socket.write(`${n.toString(16)}\r\n`)
        if (!socket.write(chunked ? Buffer.concat([data, Buffer.from('\r\n')]) : data)) {
          socket.once('drain', writeMore)
          return
        }
      }
      if (chunked) socket.write('0\r\n\r\n')
      written = true
      socket.resume()
    }
    writeMore()
  })
}

describe('a body over the limit, sent without Expect: 100-continue', () => {
  it.each([1, 2, 3, 4, 5, 6])('answers 413 problem+json to a 32 MiB body (try %i)', async () => {
    const answer = await postBytes(32 * 1024 * 1024)
    expect(answer.status).toBe(413)
    expect(answer.head.toLowerCase()).toContain('content-type: application/problem+json')
    expect(JSON.parse(answer.body)).toMatchObject({ status: 413, type: 'urn:ocelog:problem:payload-too-large' })
  })

  it('answers 413 problem+json to a 6 MiB body', async () => {
    const answer = await postBytes(6 * 1024 * 1024)
    expect(answer.status).toBe(413)
  })

  it('answers 413 before looking at the key', async () => {
    const answer = await postBytes(32 * 1024 * 1024, 'Basic x')
    expect(answer.status).toBe(413)
  })

  it('answers 413 to a 32 MiB body sent chunked (no Content-Length)', async () => {
    const answer = await postBytes(32 * 1024 * 1024, `Bearer ${key}`, true)
    expect(answer.status).toBe(413)
  })

  it('lets a 401 sent before a 4 MiB body reach the client too', async () => {
    const answer = await postBytes(4 * 1024 * 1024, 'Basic x')
    expect(answer.status).toBe(401)
  })
})
