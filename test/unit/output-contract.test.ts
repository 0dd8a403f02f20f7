/**
 * unit: the output contract's pure parts: offset pages with total/truncated/next_cursor, the
 * most frequent edges per object type, and the cut of a body to a byte budget.
 */
import { describe, expect, it } from 'vitest'
import { InvalidParameterError } from '../../src/core/errors.js'
import { capToFit, keepTopEdges, pageOf, parseMaxEdges } from '../../src/read/output-contract.js'
import type { ObjectTypeMap, Stats } from '../../src/schemas/process.js'

const stats: Stats = { count: 1, mean: 1, median: 1, min: 1, max: 1, sum: 1 }
const edge = (source: string, target: string, total: number) => ({ source, target, total, objects: 1, event_couples: total, elapsed: stats, waiting: null })
const typeMap = (object_type: string, edges: ReturnType<typeof edge>[]): ObjectTypeMap => ({
  object_type,
  objects: 1,
  activities: [],
  edges,
  start_activities: [],
  end_activities: [],
})

describe('pageOf', () => {
  it('pages a list to its end with total, truncated and next_cursor', () => {
    const list = ['a', 'b', 'c', 'd', 'e']
    const first = pageOf(list, 2, undefined)
    expect(first).toMatchObject({ items: ['a', 'b'], total: 5, truncated: true })
    const second = pageOf(list, 2, first.next_cursor ?? undefined)
    const third = pageOf(list, 2, second.next_cursor ?? undefined)
    expect([second.items, third.items]).toEqual([['c', 'd'], ['e']])
    expect([third.truncated, third.next_cursor]).toEqual([false, null])
    expect(pageOf([], 25, undefined)).toEqual({ items: [], total: 0, truncated: false, next_cursor: null })
  })

  it('rejects a cursor it did not make, naming cursor', () => {
    expect(() => pageOf(['a'], 1, 'zzz')).toThrow(InvalidParameterError)
    expect(() => pageOf(['a'], 1, Buffer.from('{"o":-1}').toString('base64url'))).toThrow(/^cursor: /)
  })
})

describe('parseMaxEdges', () => {
  it('reads 0 to 100000 as digits or a number, and names max_edges otherwise', () => {
    expect([parseMaxEdges(undefined), parseMaxEdges('0'), parseMaxEdges(7)]).toEqual([undefined, 0, 7])
    expect(() => parseMaxEdges('-1')).toThrow(/^max_edges: an integer from 0 to 100000$/)
    expect(() => parseMaxEdges(1.5)).toThrow(/^max_edges: /)
  })
})

describe('keepTopEdges', () => {
  it('keeps the most frequent edges of each type (ties by source, then target) in the map’s order, counting the rest', () => {
    const types = [typeMap('order', [edge('A', 'B', 1), edge('A', 'C', 5), edge('B', 'C', 1), edge('A', 'D', 1)]), typeMap('item', [edge('X', 'Y', 2)])]
    const cut = keepTopEdges(types, 2)
    expect(cut.object_types.map((t) => t.edges.map((e) => `${e.source}${e.target}`))).toEqual([['AB', 'AC'], ['XY']])
    expect(cut.edges_left_out).toBe(2)
    expect(keepTopEdges(types, 0).edges_left_out).toBe(5)
    expect(keepTopEdges(types, 10).edges_left_out).toBe(0)
  })
})

describe('capToFit', () => {
  it('leaves a body that fits untouched', () => {
    const body: Record<string, unknown> = { list: [1, 2, 3] }
    expect(capToFit(body, 100)).toBe(false)
    expect(body).toEqual({ list: [1, 2, 3] })
  })

  it('halves the largest list, at any depth, until the body fits, and marks it truncated', () => {
    const body: Record<string, unknown> = { small: ['x'], outer: { inner: Array.from({ length: 64 }, () => 'y'.repeat(10)) } }
    expect(capToFit(body, 200)).toBe(true)
    const inner = (body.outer as { inner: string[] }).inner
    expect(inner.length).toBe(8)
    expect(body.small).toEqual(['x'])
    expect(body.truncated).toBe(true)
    expect(JSON.stringify(body).length).toBeLessThanOrEqual(200)
  })
})
