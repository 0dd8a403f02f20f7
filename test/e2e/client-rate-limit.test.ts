/**
 * e2e: the client against the built service with a tiny rate limit (2 requests per 2-second window,
 * so Retry-After is at most 2 s). The client waits out every 429 for its Retry-After and finishes
 * with nothing lost and nothing duplicated, as `ocelog replay` and `ocelog export` show. The budget
 * is per API key and each test has keys of its own, so the tests run side by side: most of their
 * time is waiting out 429s.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, type ExpectStatic, it } from 'vitest'
import { OcelogClient, type RetryNotice } from '@ocelog/client'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { diffViews, expectedView, exportedView } from '../helpers/ocel-round-trip.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import type { EventInput } from '../../src/schemas/api.js'
import { startService, type RunningService } from '../helpers/service.js'
import { itWithSharedOcel, ocelFixture } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'

/** 60 per minute in a 2 s window: a budget of 2 requests per window. */
const LIMIT = { OCELOG_RATE_LIMIT_PER_MINUTE: '60', OCELOG_RATE_LIMIT_WINDOW_SECONDS: '2' }

let service: RunningService

beforeAll(async () => {
  service = await startService({ env: LIMIT })
})
afterAll(async () => {
  await service.stop()
})

interface ReplayLine {
  type: string
  data: { event_id: string; objects: { id: string }[] }
}

describe.concurrent('OcelogClient under a tiny rate limit', () => {
  it('waits out Retry-After and records every event exactly once', async ({ expect }) => {
    const key = await service.createKey({ name: 'rate-limited' })
    const notices: RetryNotice[] = []
    const client = new OcelogClient({ baseUrl: service.url, apiKey: key.key, concurrency: 4, onRetry: (n) => notices.push(n) })
    const events: EventInput[] = Array.from({ length: 1000 }, (_, i) => ({
      event: 'Ship Parcel',
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      objects: [{ type: 'parcel', id: `p${String(i)}`, qualifier: 'shipped' }],
    }))
    const started = Date.now()
    const result = await client.sendEvents(events)
    const elapsed = Date.now() - started

    expect(result.failures).toEqual([])
    expect(result.accepted).toHaveLength(1000)
    // 10 batches at 2 per 2 s window need at least 4 more windows after the first.
    expect(elapsed).toBeGreaterThanOrEqual(7000)
    expect(notices.length).toBeGreaterThan(0)
    for (const n of notices) {
      expect(n.cause).toBe('rate-limited')
      expect(n.status).toBe(429)
      expect(n.delayMs).toBeGreaterThanOrEqual(1000)
      expect(n.delayMs).toBeLessThanOrEqual(2000)
    }
    // Every request was either one of the 10 accepted batches or one 429 that was waited out.
    expect(result.requests).toBe(10 + notices.length)

    const replay = await service.cli(['replay', '--dataset', key.dataset_id, '--json'])
    expect(replay.code, replay.stderr).toBe(0)
    const records: ReplayLine[] = replay.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(records).toHaveLength(1000)
    expect(records.every((r) => r.type === 'EventRecorded')).toBe(true)
    expect(new Set(records.map((r) => r.data.event_id))).toEqual(new Set(result.accepted.map((a) => a.value)))
    expect(records.map((r) => r.data.objects[0]?.id).sort()).toEqual(events.map((e) => e.objects[0]?.id).sort())
  }, 120_000)

  /** Imports `path` under the limit: nothing fails, the waits are reported, and the export gives it back (checked with the test's `expect`). */
  async function importUnderTheLimit(expect: ExpectStatic, path: string) {
    const key = await service.createKey({ name: 'import-rate-limited' })
    const summary = await service.importOcel(path, key.key)
    expect(summary.failed.events + summary.failed.object_upserts).toBe(0)
    expect(summary.retried['rate-limited']).toBeGreaterThan(0)
    expect(summary.retried.requests).toBe(summary.retried['rate-limited'])

    const doc = await service.exportOcel(key.dataset_id)
    expect(diffViews(expectedView(readOcelFile(path, parseTimeZone('UTC'))), exportedView(doc))).toEqual([])
    return summary
  }

  it('lets ocelog import finish the generated log under the limit, reporting the waits, with an exact round trip', async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
    try {
      const summary = await importUnderTheLimit(expect, writeGeneratedOcel(dir).json)
      expect(summary.sent).toEqual({ events: 7, object_upserts: 61, objects: 57, o2o: 3 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it('reports each cause of retry with its wait while it imports, and a key with its own budget (--rate-limit) imports beside it without a wait', async ({
    expect,
  }) => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-generated-'))
    try {
      const file = writeGeneratedOcel(dir).json
      const live = await service.createKey({ name: 'live' })
      const run = await service.cli(['import', file, '--url', service.url, '--key', live.key])
      expect(run.code, run.stderr).toBe(0)
      const line = run.stderr.split('\n').find((l) => l.startsWith('retrying: '))
      expect(line).toMatch(
        new RegExp(
          `^retrying: rate-limited on /v1/[a-z/]+: 429 Rate limit exceeded: API key ${live.key_id} exceeded 2 requests per minute; retry after [12] s; waiting [12]\\.[0-9] s \\(wait 1\\); a key's own budget: ocelog keys update KEY_ID --rate-limit N$`,
        ),
      )
      expect(run.stdout).toMatch(/retried +[0-9]+ requests \(rate-limited [0-9]+\)/)

      // 6,000 per minute in the 2 s window: 200 requests, more than this import sends.
      const bulk = await service.createKey({ name: 'bulk', rateLimit: 6000 })
      const summary = await service.importOcel(file, bulk.key)
      expect([summary.sent.events, summary.retried.requests]).toEqual([7, 0])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  itWithSharedOcel(
    'lets ocelog import finish a log under the limit, reporting the waits, with an exact round trip',
    async ({ expect }) => {
      const summary = await importUnderTheLimit(expect, ocelFixture('raw/pm4py__ocel20_example.jsonocel'))
      expect(summary.sent.events).toBe(13)
    },
    120_000,
  )
})
