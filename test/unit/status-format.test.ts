import { describe, expect, it } from 'vitest'
import { formatStatus } from '../../src/cli/commands/status.js'

describe('formatStatus', () => {
  it('prints the head, a table of projections with their lag, and each stop with its record and cause', () => {
    const text = formatStatus({
      head: 120,
      projections: [
        { projection: 'read-models-0-of-2', position: 120, version: 1, updated_at: '2026-01-01T00:00:00.000Z', stopped: null, lag_records: 0 },
        {
          projection: 'read-models-1-of-2',
          position: 56,
          version: 1,
          updated_at: '2026-01-01T00:00:00.000Z',
          lag_records: 64,
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
        'PROJECTION          CHECKPOINT  LAG (RECORDS)  STATE    UPDATED',
        'read-models-0-of-2  120         0              ok       2026-01-01T00:00:00.000Z',
        'read-models-1-of-2  56          64             STOPPED  2026-01-01T00:00:00.000Z',
        'stopped: read-models-1-of-2 at position 57 (dataset-x) after 5 attempt(s), 2026-01-01T00:00:01.000Z: poisoned',
        '',
      ].join('\n'),
    )
  })

  it('says when the log is empty and a projection has no checkpoint yet', () => {
    expect(
      formatStatus({
        head: null,
        projections: [{ projection: 'read-models', position: null, version: null, updated_at: null, stopped: null, lag_records: 0 }],
      }),
    ).toBe('log head: none (the log is empty)\nPROJECTION   CHECKPOINT  LAG (RECORDS)  STATE  UPDATED\nread-models  none        0              ok     -\n')
  })
})
