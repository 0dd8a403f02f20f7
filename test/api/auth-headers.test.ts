/**
 * Credentials sent more than once, and the Bearer scheme as RFC 9110 § 11 reads it. Repeated
 * field lines are sent as Node's http client sends them (an array value: one line each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTestApp, type TestApp } from '../helpers/test-app.js'

let t: TestApp
let keyA: string
let keyB: string

beforeAll(async () => {
  t = await makeTestApp()
  keyA = (await t.newKey()).key
  keyB = (await t.newKey()).key
})
afterAll(async () => t.close())

function health(headers: Record<string, string | string[]>) {
  return t.app.inject({ method: 'GET', url: '/v1/health', headers })
}

describe('credentials sent more than once', () => {
  it('answers 401 for two Authorization headers with different keys', async () => {
    const res = await health({ authorization: [`Bearer ${keyA}`, `Bearer ${keyB}`] })
    expect(res.statusCode).toBe(401)
    expect(res.json().detail).toContain('Authorization was sent 2 times')
  })

  it('answers 401 for two Authorization headers, the second an unknown key', async () => {
    const res = await health({ authorization: [`Bearer ${keyA}`, `Bearer ocl_0000000000000000_${'A'.repeat(43)}`] })
    expect(res.statusCode).toBe(401)
  })

  it('answers 401 for two X-Ocelog-Api-Key headers with different keys', async () => {
    const res = await health({ 'x-ocelog-api-key': [keyA, keyB] })
    expect(res.statusCode).toBe(401)
    expect(res.json().detail).toContain('X-Ocelog-Api-Key')
  })

  it('accepts two X-Ocelog-Api-Key headers with the same key', async () => {
    const res = await health({ 'x-ocelog-api-key': [keyA, keyA] })
    expect(res.statusCode).toBe(200)
  })
})

describe('the Bearer scheme (RFC 9110 § 11.6.2)', () => {
  it('accepts the scheme in lower case', async () => {
    const res = await health({ authorization: `bearer ${keyA}` })
    expect(res.statusCode).toBe(200)
  })

  it('accepts the scheme in any case', async () => {
    const res = await health({ authorization: `BEARER ${keyA}` })
    expect(res.statusCode).toBe(200)
  })

  it('accepts more than one space after the scheme', async () => {
    const res = await health({ authorization: `Bearer   ${keyA}` })
    expect(res.statusCode).toBe(200)
  })

  it('answers 401 for a scheme glued to the key', async () => {
    const res = await health({ authorization: `Bearer${keyA}` })
    expect(res.statusCode).toBe(401)
  })
})
