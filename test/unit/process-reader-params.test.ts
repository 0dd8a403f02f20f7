import { describe, expect, it } from 'vitest'
import { InvalidParameterError } from '../../src/core/errors.js'
import { decodeCursor, encodeCursor, parseLimit, parseWindow } from '../../src/read/process-reader.js'

/** The parameter an InvalidParameterError thrown by `fn` names, or null when `fn` does not throw one. */
function rejected(fn: () => unknown): string | null {
  try {
    fn()
  } catch (error) {
    if (error instanceof InvalidParameterError) return error.parameter
    throw error
  }
  return null
}

describe('parseLimit', () => {
  it('defaults to 100', () => {
    expect(parseLimit(undefined)).toBe(100)
  })

  it('reads decimal text and numbers from 1 to 1000', () => {
    expect([parseLimit('1'), parseLimit('1000'), parseLimit(250), parseLimit('007')]).toEqual([1, 1000, 250, 7])
  })

  it.each(['0', '1001', '-1', '1.5', '', 'ten', '1e2', ' 5', '0x10'])('rejects %j naming limit', (text) => {
    expect(rejected(() => parseLimit(text))).toBe('limit')
  })

  it.each([0, 1001, 2.5, Number.NaN])('rejects the number %d naming limit', (n) => {
    expect(rejected(() => parseLimit(n))).toBe('limit')
  })
})

describe('parseWindow', () => {
  it('turns from and to into UTC ISO 8601 with milliseconds', () => {
    expect(parseWindow({ from: '2024-05-01T12:00:00+02:00', to: '2024-05-02T00:00:00Z' })).toEqual({
      from: '2024-05-01T10:00:00.000Z',
      to: '2024-05-02T00:00:00.000Z',
    })
  })

  it('gives an open window when neither is given', () => {
    expect(parseWindow({})).toEqual({})
  })

  it('rejects a from without a zone, naming from', () => {
    expect(rejected(() => parseWindow({ from: '2024-05-01T10:00:00' }))).toBe('from')
  })

  it('rejects a to that is not a date-time, naming to', () => {
    expect(rejected(() => parseWindow({ to: 'yesterday' }))).toBe('to')
  })

  it('rejects a to not later than from, naming to', () => {
    expect(rejected(() => parseWindow({ from: '2024-05-01T10:00:00Z', to: '2024-05-01T12:00:00+02:00' }))).toBe('to')
    expect(rejected(() => parseWindow({ from: '2024-05-02T00:00:00Z', to: '2024-05-01T00:00:00Z' }))).toBe('to')
  })
})

describe('cursor', () => {
  it('decodes what it encodes', () => {
    const after = { timestamp: '2024-05-01T10:00:00.000Z', position: 42 }
    expect(decodeCursor(encodeCursor(after))).toEqual(after)
  })

  it('is URL-safe text', () => {
    expect(encodeCursor({ timestamp: '2024-05-01T10:00:00.000Z', position: 9_007_199_254 })).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
  it.each([
    ['not base64url', 'a+b/c='],
    ['not JSON', b64('{nope')],
    ['an array', b64([1, 2])],
    ['a missing position', b64({ t: '2024-05-01T10:00:00.000Z' })],
    ['a negative position', b64({ t: '2024-05-01T10:00:00.000Z', p: -1 })],
    ['a fractional position', b64({ t: '2024-05-01T10:00:00.000Z', p: 1.5 })],
    ['a time not in the log’s form', b64({ t: '2024-05-01T10:00:00Z', p: 1 })],
    ['an impossible time', b64({ t: '2024-13-01T10:00:00.000Z', p: 1 })],
    ['an extra field', b64({ t: '2024-05-01T10:00:00.000Z', p: 1, x: 0 })],
    ['nothing', ''],
  ])('rejects %s naming cursor', (_, cursor) => {
    expect(rejected(() => decodeCursor(cursor))).toBe('cursor')
  })
})
