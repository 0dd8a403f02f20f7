/**
 * How the scale bench reads `ocelog project`'s closing lines (bench/scale-steps.ts, closingLine):
 * with the runners side by side, the run ends with the slowest runner, so the whole run's line is
 * the one that tells when every read model was caught up, not the first runner's.
 */
import { describe, expect, it } from 'vitest'
import { closingLine } from '../../bench/scale-steps.js'

/** A pino line as the CLI writes it at LOG_LEVEL=info. */
const line = (fields: Record<string, unknown>): string => JSON.stringify({ level: 30, time: 1, pid: 1, ...fields })

describe('the scale bench reads the closing line of ocelog project', () => {
  it('takes the whole run of runners side by side, not the runner that ended first', () => {
    const out = [
      'not json',
      line({ projector: 'read-models/entities', records: 1000, seconds: 9.8, msg: 'caught up' }),
      line({ projector: 'read-models/process', records: 1000, seconds: 17.4, msg: 'caught up' }),
      line({ projector: 'read-models', records: 1000, seconds: 17.6, runners: 2, msg: 'caught up, 2 runners side by side' }),
    ].join('\n')
    expect(closingLine(out)).toMatchObject({ records: 1000, seconds: 17.6 })
  })

  it('takes the slowest line when no whole-run line is printed, and none when no line has records and seconds', () => {
    const out = [
      line({ projector: 'read-models/process', records: 500, seconds: 4.5 }),
      line({ projector: 'read-models/entities', records: 500, seconds: 2.5 }),
      line({ msg: 'listening' }),
    ].join('\n')
    expect(closingLine(out)).toMatchObject({ records: 500, seconds: 4.5 })
    expect(closingLine(line({ msg: 'no summary' }))).toBeUndefined()
  })
})
