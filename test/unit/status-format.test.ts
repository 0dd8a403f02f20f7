import { describe, expect, it } from 'vitest'
import { formatStatus } from '../../src/cli/text.js'
import { lagOf } from '../../src/core/lag.js'

describe('formatStatus', () => {
  it('lists who holds each lease where projectors run under leases, and says so when none is held', () => {
    const base = { head: null, projections: [] }
    const held = formatStatus({
      ...base,
      leases: [
        { lease: 'entities', holder: 'ocelog host-a pid 41', pid: 9001, since: '2026-12-05T10:00:00.000Z' },
        { lease: 'process', holder: 'ocelog host-b pid 77', pid: 9002, since: '2026-12-05T10:00:01.000Z' },
      ],
    })
    expect(held.split('\n').filter((l) => l.startsWith('lease'))).toEqual([
      'lease entities: held by ocelog host-a pid 41 (server pid 9001) since 2026-12-05T10:00:00.000Z',
      'lease process: held by ocelog host-b pid 77 (server pid 9002) since 2026-12-05T10:00:01.000Z',
    ])
    expect(formatStatus({ ...base, leases: [] })).toContain('leases: none held (no projector runs)')
    // Where nothing runs under leases (the embedded default), no lease line at all.
    expect(formatStatus(base)).not.toContain('lease')
  })

  it('prints the head, a table of projections with their lag in records and seconds, and each stop with its record and cause', () => {
    const text = formatStatus({
      head: 120,
      projections: [
        {
          projection: 'read-models-0-of-2',
          position: 120,
          version: 1,
          updated_at: '2026-01-01T00:00:00.000Z',
          stopped: null,
          lag_records: 0,
          lag_records_exact: true,
          lag_seconds: 0,
        },
        {
          projection: 'read-models-1-of-2',
          position: 56,
          version: 1,
          updated_at: '2026-01-01T00:00:00.000Z',
          lag_records: 64,
          lag_records_exact: true,
          lag_seconds: 2.5,
          stopped: {
            projection: 'read-models-1-of-2',
            position: 57,
            stream: 'dataset-x',
            cause: 'poisoned',
            attempts: 5,
            stopped_at: '2026-01-01T00:00:01.000Z',
          },
        },
      ],
    })
    expect(text).toBe(
      [
        'log head: 120',
        'PROJECTION          CHECKPOINT  LAG (RECORDS)  LAG (S)  STATE    UPDATED',
        'read-models-0-of-2  120         0              0.000    ok       2026-01-01T00:00:00.000Z',
        'read-models-1-of-2  56          64             2.500    STOPPED  2026-01-01T00:00:00.000Z',
        'stopped: read-models-1-of-2 at position 57 (dataset-x) after 5 attempt(s), 2026-01-01T00:00:01.000Z: poisoned',
        '',
      ].join('\n'),
    )
  })

  it('says when the log is empty and a projection has no checkpoint yet', () => {
    expect(
      formatStatus({
        head: null,
        projections: [
          {
            projection: 'read-models',
            position: null,
            version: null,
            updated_at: null,
            stopped: null,
            lag_records: 0,
            lag_records_exact: true,
            lag_seconds: 0,
          },
        ],
      }),
    ).toBe(
      'log head: none (the log is empty)\nPROJECTION   CHECKPOINT  LAG (RECORDS)  LAG (S)  STATE  UPDATED\nread-models  none        0              0.000    ok     -\n',
    )
  })

  it('marks a lag that the engine counted only up to a bound as a lower bound', () => {
    const text = formatStatus({
      head: 9_000_000,
      projections: [
        {
          projection: 'read-models',
          position: 10,
          version: 1,
          updated_at: null,
          stopped: null,
          lag_records: 100_000,
          lag_records_exact: false,
          lag_seconds: 61.25,
        },
      ],
    })
    expect(text.split('\n')[2]).toBe('read-models  10          ≥ 100000       61.250   ok     -')
  })
})

describe('lagOf', () => {
  it('is the age of the oldest record not yet applied, in seconds', () => {
    expect(lagOf(250_000, true, '2026-01-01T00:00:00.000Z', Date.parse('2026-01-01T00:01:30.250Z'))).toEqual({
      lag_records: 250_000,
      lag_records_exact: true,
      lag_seconds: 90.25,
    })
  })

  it('is 0 s with nothing behind, and never negative when the clock runs behind the append time', () => {
    expect(lagOf(0, true, null, 0)).toEqual({ lag_records: 0, lag_records_exact: true, lag_seconds: 0 })
    expect(lagOf(3, true, '2026-01-01T00:00:05.000Z', Date.parse('2026-01-01T00:00:00.000Z')).lag_seconds).toBe(0)
  })
})
