/**
 * The exact duplicate check of a resumed EventStoreDB append (src/adapters/eventstore/landed.ts,
 * append.ts). The fake engine below is an in-memory EventStoreDB stream store that, unlike the
 * real one sometimes, never drops a re-appended event id: a resume that relied on the engine would
 * write the record twice here. The claims are in memory too (the IdempotencyClaims and
 * ObjectClaims ports; their MongoDB adapters have their own contract suite). The adapter loads the
 * EventStoreDB client (gRPC, sockets), so the test is of the integration tier.
 */
import { Readable } from 'node:stream'
import type { AppendResult as ClientAppendResult, EventData, EventStoreDBClient, ReadStreamOptions, ResolvedEvent } from '@eventstore/db-client'
import { describe, expect, it } from 'vitest'
import { type AppendContext, appendRecords } from '../../src/adapters/eventstore/append.js'
import { CLOCK_SKEW_MS, findLanded, searchSince, type TailEvent } from '../../src/adapters/eventstore/landed.js'
import type { IdempotencyClaims, StoredKeyClaim } from '../../src/ports/idempotency-claims.js'
import type { NewRecord } from '../../src/schemas/records.js'
import { upsertRecord } from '../contract/fixtures.js'

interface Stored {
  id: string
  type: string
  data: unknown
  metadata: unknown
  revision: bigint
  position: bigint
  created: Date
}

/** An in-memory EventStoreDB of streams (revisions and `$all` positions), with no check of event ids. */
class FakeEngine {
  readonly streams = new Map<string, Stored[]>()
  private next = 1000n
  /** When set, the next append throws after (`landed`) or before writing. */
  failNext: 'landed' | 'lost' | null = null

  async appendToStream(stream: string, events: EventData | EventData[]): Promise<ClientAppendResult> {
    const list = Array.isArray(events) ? events : [events]
    if (this.failNext === 'lost') {
      this.failNext = null
      throw new Error('deadline exceeded')
    }
    const s = this.streams.get(stream) ?? []
    this.streams.set(stream, s)
    for (const e of list) {
      this.next += 100n
      s.push({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, revision: BigInt(s.length), position: this.next, created: new Date() })
    }
    if (this.failNext === 'landed') {
      this.failNext = null
      throw new Error('deadline exceeded')
    }
    return { success: true, nextExpectedRevision: BigInt(s.length - 1), position: { commit: this.next, prepare: this.next } }
  }

  readStream(stream: string, options: ReadStreamOptions = {}) {
    const s = this.streams.get(stream) ?? []
    const backwards = options.direction === 'backwards'
    const from = typeof options.fromRevision === 'bigint' ? Number(options.fromRevision) : 0
    const picked = backwards ? [...s].reverse() : s.slice(from)
    const max = options.maxCount === undefined ? picked.length : Number(options.maxCount)
    const resolved = picked.slice(0, max).map(
      (e): ResolvedEvent => ({
        event: {
          streamId: stream,
          id: e.id,
          revision: e.revision,
          type: e.type,
          data: e.data as Record<string, unknown>,
          metadata: e.metadata as Record<string, unknown>,
          isJson: true,
          created: e.created,
          position: { commit: e.position, prepare: e.position },
        },
        commitPosition: e.position,
      }),
    )
    return Object.assign(Readable.from(resolved), { cancel: async () => {} })
  }
}

/** IdempotencyClaims in memory, with a switch that makes the next commit fail. */
class MemoryClaims implements IdempotencyClaims {
  readonly byKey = new Map<string, StoredKeyClaim>()
  failCommit = false
  async claim(datasetId: string, entries: readonly Omit<StoredKeyClaim, 'position' | 'appendedAt'>[]) {
    return entries.map((e) => {
      const id = `${datasetId}/${e.key}`
      const found = this.byKey.get(id)
      if (found !== undefined) return found
      this.byKey.set(id, { ...e, position: null, appendedAt: null, claimedAt: new Date().toISOString() })
      return undefined
    })
  }
  async commit(datasetId: string, entries: readonly { key: string; position: number; appendedAt: string }[]) {
    if (this.failCommit) {
      this.failCommit = false
      throw new Error('MongoDB away')
    }
    for (const e of entries) {
      const claim = this.byKey.get(`${datasetId}/${e.key}`)
      if (claim !== undefined) this.byKey.set(`${datasetId}/${e.key}`, { ...claim, position: e.position, appendedAt: e.appendedAt })
    }
  }
}

function harness() {
  const engine = new FakeEngine()
  const claims = new MemoryClaims()
  const ctx: AppendContext = {
    client: engine as unknown as Pick<EventStoreDBClient, 'appendToStream' | 'readStream'>,
    objectClaims: { claim: async (_ds: string, ids: readonly string[]) => new Set(ids) },
    claims,
    budget: 900_000,
    appendDeadlineMs: 1000,
  }
  return { engine, claims, ctx }
}

const ds = 'ds1'

function keyed(key: string, n: number): NewRecord {
  return { ...upsertRecord(ds, 'order', `o-${key}`, { n }), idempotency: { key, fingerprint: `fp-${key}-${String(n)}` } }
}

describe('a resumed append on EventStoreDB', () => {
  it('does not append again a record that landed before its claim was committed, and answers its position', async () => {
    const { engine, claims, ctx } = harness()
    claims.failCommit = true
    await expect(appendRecords(ctx, ds, [keyed('k1', 1)], [])).rejects.toThrow(/appended but their idempotency keys were not marked/)
    const landed = engine.streams.get('dataset-ds1')?.[0]
    expect(engine.streams.get('dataset-ds1')).toHaveLength(1)

    const retry = await appendRecords(ctx, ds, [keyed('k1', 1), keyed('k2', 2)], [])
    expect(engine.streams.get('dataset-ds1')?.map((e) => e.id)).toEqual([landed?.id, expect.any(String)])
    expect(retry.outcomes).toEqual([
      { kind: 'appended', position: Number(landed?.position) },
      { kind: 'appended', position: Number(engine.streams.get('dataset-ds1')?.[1]?.position) },
    ])
    expect(claims.byKey.get('ds1/k1')?.position).toBe(Number(landed?.position))

    const third = await appendRecords(ctx, ds, [keyed('k1', 1)], [])
    expect(third.outcomes).toMatchObject([{ kind: 'duplicate', original: { position: Number(landed?.position) } }])
    expect(engine.streams.get('dataset-ds1')).toHaveLength(2)
  })

  it('appends the record when the failed append left it out of the log, under its claimed event id', async () => {
    const { engine, claims, ctx } = harness()
    engine.failNext = 'lost'
    await expect(appendRecords(ctx, ds, [keyed('k1', 1)], [])).rejects.toThrow(/append to dataset-ds1 failed/)
    expect(engine.streams.get('dataset-ds1') ?? []).toHaveLength(0)
    const claimed = claims.byKey.get('ds1/k1')?.eventId
    const retry = await appendRecords(ctx, ds, [keyed('k1', 1)], [])
    expect(engine.streams.get('dataset-ds1')?.map((e) => e.id)).toEqual([claimed])
    expect(retry.outcomes).toEqual([{ kind: 'appended', position: Number(engine.streams.get('dataset-ds1')?.[0]?.position) }])
  })

  it('finds a record whose append timed out after it was written', async () => {
    const { engine, ctx } = harness()
    engine.failNext = 'landed'
    await expect(appendRecords(ctx, ds, [keyed('k1', 1)], [])).rejects.toThrow(/deadline exceeded/)
    await appendRecords(ctx, ds, [keyed('other', 3)], [])
    const retry = await appendRecords(ctx, ds, [keyed('k1', 1)], [])
    expect(engine.streams.get('dataset-ds1')).toHaveLength(2)
    expect(retry.outcomes).toEqual([{ kind: 'appended', position: Number(engine.streams.get('dataset-ds1')?.[0]?.position) }])
  })
})

describe('findLanded', () => {
  const at = (s: number) => new Date(Date.parse('2024-05-01T10:00:00.000Z') + s * 1000)
  async function* tail(events: TailEvent[], read: TailEvent[]) {
    for (const e of events) {
      read.push(e)
      yield e
    }
  }
  const events: TailEvent[] = [
    { id: 'e5', position: 500, created: at(50) },
    { id: 'e4', position: 400, created: at(40) },
    { id: 'e3', position: 300, created: at(30) },
    { id: 'e2', position: 200, created: at(20) },
    { id: 'e1', position: 100, created: at(10) },
  ]

  it('stops as soon as every id is found', async () => {
    const read: TailEvent[] = []
    expect(await findLanded(tail(events, read), new Set(['e4', 'e5']), null)).toEqual(
      new Map([
        ['e5', 500],
        ['e4', 400],
      ]),
    )
    expect(read).toHaveLength(2)
  })

  it('stops at the first event older than `since`: an id not found there did not land', async () => {
    const read: TailEvent[] = []
    expect(await findLanded(tail(events, read), new Set(['e1', 'missing']), at(25))).toEqual(new Map())
    expect(read.map((e) => e.id)).toEqual(['e5', 'e4', 'e3', 'e2'])
  })

  it('reads the whole stream without `since`', async () => {
    const read: TailEvent[] = []
    expect(await findLanded(tail(events, read), new Set(['e1', 'missing']), null)).toEqual(new Map([['e1', 100]]))
    expect(read).toHaveLength(5)
  })
})

describe('searchSince', () => {
  it('is the oldest claim time less CLOCK_SKEW_MS, or null when a claim has no time', () => {
    expect(searchSince(['2024-05-01T10:10:00.000Z', '2024-05-01T10:00:00.000Z'])?.getTime()).toBe(Date.parse('2024-05-01T10:00:00.000Z') - CLOCK_SKEW_MS)
    expect(searchSince(['2024-05-01T10:00:00.000Z', undefined])).toBe(null)
  })
})
