/** The import summary (src/ocel/import/summary.ts). */
import { describe, expect, it } from 'vitest'
import { newNotes, type OcelLog } from '../../src/ocel/import/model.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import type { RunResult } from '../../src/ocel/import/run.js'
import { formatSummary, logCounts, reasonKey, summarize } from '../../src/ocel/import/summary.js'

const log: OcelLog = {
  format: 'sqlite',
  eventTypes: [
    { name: 'pay', attributes: [] },
    { name: 'never', attributes: [] },
  ],
  objectTypes: [{ name: 'order', attributes: [] }],
  notes: { ...newNotes('UTC'), naiveTimestamps: 3, unreadable: { event_unreadable_time: { count: 1, examples: ['e9 (soon)'] } } },
  objects: [
    {
      id: 'o1',
      type: 'order',
      attributes: [],
      relationships: [
        { objectId: 'o2', qualifier: null },
        { objectId: 'o2', qualifier: null },
      ],
    },
  ],
  events: [
    {
      id: 'e1',
      type: 'pay',
      time: 1000,
      attributes: {},
      relationships: [
        { objectId: 'o1', qualifier: null },
        { objectId: 'ghost', qualifier: null },
      ],
    },
    { id: 'e2', type: 'pay', time: 2000, attributes: {}, relationships: [{ objectId: 'o1', qualifier: null }] },
  ],
}

const run: RunResult = {
  events: { accepted: 1, failed: 1, alreadyRecorded: 0 },
  upserts: { accepted: 1, failed: 0, alreadyRecorded: 0 },
  objectsAccepted: 1,
  relationshipsAccepted: 1,
  failures: [{ kind: 'event', source: 'e2', failure: 'rejected', reason: 'Event 1: /objects/0/type: must NOT have more than 100 characters', status: 200 }],
  requests: 3,
  batches: 2,
  aborted: null,
}

const summary = summarize({
  file: 'log.sqlite',
  datasetId: 'ds1',
  log: logCounts(log),
  plan: planImport(log),
  run,
  retries: { 'rate-limited': 2, network: 0, timeout: 0, 'server-error': 1 },
  elapsedMs: 500,
})

describe('summarize', () => {
  it('counts what was sent, what failed by reason, and what was retried', () => {
    expect(summary.sent).toEqual({ events: 1, object_upserts: 1, objects: 1, o2o: 1 })
    expect(summary.failed).toEqual({
      events: 1,
      object_upserts: 0,
      reasons: [{ kind: 'event', reason: '/objects/*/type: must NOT have more than 100 characters', count: 1, examples: ['e2'] }],
    })
    expect(summary.retried).toEqual({ requests: 3, 'rate-limited': 2, network: 0, timeout: 0, 'server-error': 1 })
    expect(summary.events_per_second).toBe(2)
  })

  it('reports the skips of reading and of planning with their meaning', () => {
    expect(Object.keys(summary.skipped).sort()).toEqual(['event_unreadable_time', 'o2o_duplicate'])
    expect(summary.skipped.o2o_duplicate).toMatchObject({ count: 1, examples: ['o1 → o2'], description: expect.stringContaining('sent once') })
  })

  it('reports the objects the log never defines (E2O and O2O targets), the type they were sent with and the events naming them', () => {
    expect(summary.undefined_objects).toEqual({ type: 'ocelog:undefined', objects: 2, events: 1 })
  })

  it('describes the log: declared and used types, E2O and O2O', () => {
    expect(summary.log).toEqual({
      events: 2,
      objects: 1,
      event_types: { declared: 2, used: 1 },
      object_types: { declared: 1, used: 1 },
      e2o: 3,
      o2o: 2,
      object_attribute_values: 0,
    })
    expect(summary.timezone).toEqual({ zone: 'UTC', naive_timestamps: 3, truncated_to_ms: 0 })
  })
})

describe('formatSummary', () => {
  it('says that the import had failures and lists the reason, the skips and the time-zone assumption', () => {
    const text = formatSummary(summary)
    expect(text.split('\n')[0]).toBe('Imported with failures: log.sqlite (OCEL 2.0 SQLite) into dataset ds1')
    expect(text).toContain('1 event(s): /objects/*/type: must NOT have more than 100 characters (e.g. e2)')
    expect(text).toContain('1 O2O relationships repeated with the same target and qualifier in one object; sent once (e.g. o1 → o2)')
    expect(text).toContain('sent        1 events, 1 object upserts (1 objects, 1 O2O)')
    expect(text).toContain('3 without a time zone, read as UTC (--timezone)')
    expect(text).toContain('retried     3 requests (rate-limited 2, server-error 1)')
  })

  it('says how many undefined objects were sent with which type, and in how many events', () => {
    expect(formatSummary(summary)).toContain(
      'undefined   2 objects the log references but never defines, sent as type "ocelog:undefined" (--unknown-object-type), named by 1 events',
    )
  })

  it('leaves out the undefined line when the log defines every object it references', () => {
    expect(formatSummary({ ...summary, undefined_objects: { type: 'ocelog:undefined', objects: 0, events: 0 } })).not.toContain('undefined ')
  })
})

describe('reasonKey', () => {
  it('groups item failures by rule, not by item', () => {
    expect(reasonKey('Event 17: /objects/3/qualifier: must NOT have more than 100 characters')).toBe(
      '/objects/*/qualifier: must NOT have more than 100 characters',
    )
  })
})
