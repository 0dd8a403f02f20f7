/**
 * unit: the byte budget of read answers (src/read/answer-budget.ts): `max_bytes`, the cut of a
 * list with its cursor, approx_tokens, the text cap, and the deflated cursor of long variants.
 */
import { describe, expect, it } from 'vitest'
import { cutList, fitText, parseMaxBytes, withBudget } from '../../src/read/answer-budget.js'
import { decodeVariantsCursor, encodeVariantsCursor } from '../../src/read/process-reader.js'

describe('parseMaxBytes', () => {
  it('reads 1000 to 1048576 as a number or digits, and nothing as no budget', () => {
    expect([parseMaxBytes(undefined), parseMaxBytes('1000'), parseMaxBytes(1_048_576)]).toEqual([undefined, 1000, 1_048_576])
    for (const bad of ['999', '1048577', '1e5', '', 100.5]) expect(() => parseMaxBytes(bad)).toThrow(/^max_bytes: an integer from 1000 to 1048576/)
  })
})

describe('cutList and withBudget', () => {
  it('cuts a list from its end until the JSON fits, marking after each cut, and keeps the minimum asked', () => {
    const body = { items: Array.from({ length: 100 }, (_, i) => `item-${String(i).padStart(3, '0')}`), last: '' }
    const left = cutList(body, body.items, 300, () => {
      body.last = body.items[body.items.length - 1] ?? ''
    })
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(300)
    expect(left).toBe(100 - body.items.length)
    expect(body.items[0]).toBe('item-000')
    expect(body.last).toBe(body.items[body.items.length - 1])
    const huge = { items: ['x'.repeat(5000), 'y'] }
    cutList(huge, huge.items, 100, () => undefined, 1)
    expect(huge.items).toEqual(['x'.repeat(5000)])
  })

  it('sets truncated and approx_tokens = characters / 4 rounded up, counting its own digits', () => {
    const body: { list: string[]; truncated?: boolean; approx_tokens?: number } = { list: Array.from({ length: 500 }, () => 'ééé') }
    const cut = withBudget(body, 1000, (b, max) => cutList(b, b.list, max, () => undefined) > 0)
    const json = JSON.stringify(body)
    expect([cut, body.truncated, body.approx_tokens]).toEqual([true, true, Math.ceil(json.length / 4)])
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(1000)
    const small: { truncated?: boolean; approx_tokens?: number } = {}
    expect(withBudget(small, 1000, () => false)).toBe(false)
    expect(small).toEqual({ truncated: false, approx_tokens: Math.ceil(JSON.stringify(small).length / 4) })
  })
})

describe('fitText', () => {
  it('keeps a short text and its tail whole', () => {
    expect(fitText('a\nb', 'tail')).toBe('a\nb\ntail')
    expect(fitText('a', '')).toBe('a')
  })

  it('cuts a long text at a line end within the limit, marks the cut and keeps the tail', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${String(i)}`).join('\n')
    const out = fitText(text, 'narrow it with from and to', 10_000)
    expect(out.length).toBeLessThanOrEqual(10_000)
    expect(out.startsWith('line 0\nline 1\n')).toBe(true)
    expect(out.endsWith('\n…\nnarrow it with from and to')).toBe(true)
    expect(out.split('\n').at(-3)).toMatch(/^line \d+$/)
  })
})

describe('variants cursor', () => {
  it('is deflated past 512 characters, and both forms decode', () => {
    const short = { objects: 3, activities: ['a', 'b'] }
    expect(decodeVariantsCursor(encodeVariantsCursor(short))).toEqual(short)
    const steps = Array.from({ length: 1670 }, (_, i) => ['Check Item', 'Pick Item', 'Pack Item', 'Send Package'][i % 4] as string)
    const long = { objects: 1, activities: steps }
    const cursor = encodeVariantsCursor(long)
    expect(cursor.startsWith('z.')).toBe(true)
    expect(cursor.length).toBeLessThan(1000)
    expect(decodeVariantsCursor(cursor)).toEqual(long)
    expect(() => decodeVariantsCursor('z.bm90IGRlZmxhdGVk')).toThrow(/^cursor: /)
    expect(() => decodeVariantsCursor('z.!!')).toThrow(/^cursor: /)
  })
})
