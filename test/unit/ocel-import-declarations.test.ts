/**
 * Unit: the log's type declarations as POST /v1/types requests (src/ocel/import/declarations.ts,
 * docs/ocel.md#declared-types): merged by name, attribute types outside OCEL 2.0's five sent as
 * `string`, names the API refuses left out, keys derived from the content, and a log past the
 * request's limits split into requests that the validation of POST /v1/types accepts.
 */
import { describe, expect, it } from 'vitest'
import { LIMITS } from '../../src/core/limits.js'
import { validateTypes } from '../../src/core/validation.js'
import { declarationRequests, sendDeclarations } from '../../src/ocel/import/declarations.js'

describe('declarationRequests', () => {
  it('sends every declared type once, its attributes merged (a repeated attribute takes the later type), in one request', () => {
    const plan = declarationRequests(
      [
        { name: 'pay order', attributes: [{ name: 'amount', type: 'float' }] },
        {
          name: 'pay order',
          attributes: [
            { name: 'amount', type: 'integer' },
            { name: 'method', type: 'string' },
          ],
        },
      ],
      [{ name: 'warehouse', attributes: [] }],
      '',
    )
    expect(plan.requests.map(({ idempotency_key, ...body }) => body)).toEqual([
      {
        event_types: [
          {
            name: 'pay order',
            attributes: [
              { name: 'amount', type: 'integer' },
              { name: 'method', type: 'string' },
            ],
          },
        ],
        object_types: [{ name: 'warehouse', attributes: [] }],
      },
    ])
    expect([plan.eventTypes, plan.objectTypes, plan.leftOut]).toEqual([1, 1, []])
  })

  it('sends attribute types outside OCEL 2.0 as string, and leaves out names the API refuses', () => {
    const plan = declarationRequests(
      [
        { name: 'x'.repeat(LIMITS.eventNameMax + 1), attributes: [] },
        {
          name: 'e',
          attributes: [
            { name: 'd', type: 'date' },
            { name: '', type: 'string' },
          ],
        },
      ],
      [{ name: 'o'.repeat(LIMITS.objectTypeMax + 1), attributes: [] }],
      '',
    )
    expect(plan.requests.map((r) => r.event_types)).toEqual([[{ name: 'e', attributes: [{ name: 'd', type: 'string' }] }]])
    expect(plan.leftOut).toEqual([
      `event type "${'x'.repeat(LIMITS.eventNameMax + 1)}"`,
      'event type "e" attribute ""',
      `object type "${'o'.repeat(LIMITS.objectTypeMax + 1)}"`,
    ])
  })

  it('keys each request by its content and the prefix: the same log gives the same keys, another prefix others', () => {
    const log = [{ name: 'a', attributes: [{ name: 'n', type: 'integer' }] }]
    const key = (prefix: string) => declarationRequests(log, [], prefix).requests[0]?.idempotency_key
    expect(key('')).toMatch(/^ocel:types:[0-9a-f]{64}$/)
    expect(key('')).toBe(key(''))
    expect(key('second-')).toMatch(/^ocel:second-types:[0-9a-f]{64}$/)
  })

  it('splits a log past the limits into requests the service accepts, each type in a request once', () => {
    const attributes = Array.from({ length: LIMITS.attributesPerTypeMax + 5 }, (_, i) => ({ name: `a${String(i)}`, type: 'string' }))
    const events = Array.from({ length: LIMITS.declaredTypesMax + 1 }, (_, i) => ({ name: `e${String(i)}`, attributes: i === 0 ? attributes : [] }))
    const plan = declarationRequests(events, [], '')
    expect(plan.requests.length).toBeGreaterThan(1)
    for (const body of plan.requests) expect(validateTypes(body)).toEqual({ ok: true, value: body })
    // Every type and attribute is in some request.
    const sent = new Map<string, Set<string>>()
    for (const body of plan.requests) {
      for (const t of body.event_types ?? []) for (const a of t.attributes) sent.set(t.name, (sent.get(t.name) ?? new Set()).add(a.name))
      for (const t of body.event_types ?? []) if (!sent.has(t.name)) sent.set(t.name, new Set())
    }
    expect(sent.size).toBe(LIMITS.declaredTypesMax + 1)
    expect(sent.get('e0')?.size).toBe(LIMITS.attributesPerTypeMax + 5)
  })

  it('makes no request for a log that declares nothing', () => {
    expect(declarationRequests([], [], '').requests).toEqual([])
  })
})

describe('sendDeclarations', () => {
  it('counts the requests, those already recorded, and reports the first failure without throwing', async () => {
    const plan = declarationRequests([{ name: 'a', attributes: [] }], [], '')
    const twice = { ...plan, requests: [...plan.requests, ...plan.requests, ...plan.requests] }
    let n = 0
    const outcome = await sendDeclarations(twice, async () => {
      n += 1
      if (n === 3) throw new Error('POST /v1/types: 503')
      return { success: true, event_types: 1, object_types: 0, duplicate: n === 2 }
    })
    expect(outcome).toEqual({ event_types: 1, object_types: 0, requests: 3, already_recorded: 1, left_out: [], failed: 'POST /v1/types: 503' })
  })
})
