/**
 * The bench's freshness scenario (docs/performance.md): the built `npm run bench` runs it alone for 2 s
 * at a low rate, and its JSON has the load, the read models' lag in seconds sampled during it, and
 * the check of the share of samples within 2 s. Correctness of the row, not speed.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild } from '../helpers/cli.js'

const execFileP = promisify(execFile)
const BENCH = join(process.cwd(), 'dist/bench/run.js')
const RATE = 2000
const DURATION = 2

interface Freshness {
  rate: number
  requestRate: number
  achievedEventsPerSec: number
  load: { requests2xx: number; non2xx: number; errors: number; timeouts: number; latencyP99: number }
  lagSeconds: { samples: number; p99: number; max: number; shareWithin: number | null }
  catchUp: { seconds: number | null; behindAfter: number }
}

interface BenchJson {
  rows: { figure: string; value: string; mark: string }[]
  targets: { name: string; measured: number | null; kind: string; threshold: number; unit: string; pass: boolean }[]
  measurements: { freshness: Freshness | null }
}

let out: string
let result: BenchJson

beforeAll(async () => {
  requireBuild()
  out = mkdtempSync(join(tmpdir(), 'ocelog-bench-freshness-'))
  await execFileP(
    process.execPath,
    [
      BENCH,
      '--scenarios',
      'freshness',
      '--freshness-duration',
      String(DURATION),
      '--freshness-rate',
      String(RATE),
      '--catchup-timeout',
      '30',
      '--no-process-map',
      '--export-events',
      '0',
      '--large-import',
      '0',
      '--repeat-import',
      '0',
      '--out',
      out,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  )
  const files = readdirSync(out).filter((f) => f.endsWith('.json'))
  expect(files).toHaveLength(1)
  result = JSON.parse(readFileSync(join(out, files[0] ?? ''), 'utf8')) as BenchJson
}, 120_000)

afterAll(() => {
  if (out !== undefined) rmSync(out, { recursive: true, force: true })
})

describe('npm run bench --scenarios freshness', () => {
  it('paces the batch load at the asked rate: events/s ÷ 100 events per body requests/s, every one accepted', () => {
    const f = result.measurements.freshness
    expect(f).not.toBeNull()
    if (f === null) return
    expect(f.rate).toBe(RATE)
    expect(f.requestRate).toBe(RATE / 100)
    expect(f.load.requests2xx).toBe((RATE / 100) * DURATION)
    expect(f.load.non2xx + f.load.errors + f.load.timeouts).toBe(0)
    expect(f.load.latencyP99).toBeGreaterThan(0)
    // Accepted events over the wall time from the load's start to its last answer: the last request is due at 1.95 s.
    expect(f.achievedEventsPerSec).toBeGreaterThan(0)
    expect(f.achievedEventsPerSec).toBeLessThanOrEqual((RATE * DURATION) / 1.95)
    // The read models caught up after so small a load.
    expect(f.catchUp.seconds).not.toBeNull()
    expect(f.catchUp.behindAfter).toBe(0)
  })

  it('samples the lag in seconds every 250 ms during the load, with p99 ≤ max and a share within 0..1', () => {
    const lag = result.measurements.freshness?.lagSeconds
    expect(lag).toBeDefined()
    if (lag === undefined) return
    // At least 1.95 s of load at one sample per 250 ms, with room for a busy machine's late timers.
    expect(lag.samples).toBeGreaterThanOrEqual(4)
    expect(lag.p99).toBeGreaterThanOrEqual(0)
    expect(lag.max).toBeGreaterThanOrEqual(lag.p99)
    expect(lag.shareWithin).not.toBeNull()
    expect(lag.shareWithin).toBeGreaterThanOrEqual(0)
    expect(lag.shareWithin).toBeLessThanOrEqual(1)
  })

  it('checks "read models ≤ 2 s behind in 99% of samples" on that share, in the table and the targets', () => {
    const share = result.measurements.freshness?.lagSeconds.shareWithin ?? null
    const target = result.targets.find((t) => t.name.startsWith('read models ≤ 2 s behind in 99% of samples'))
    expect(target).toMatchObject({ kind: 'min', threshold: 99, unit: '%' })
    expect(target?.measured).toBeCloseTo((share ?? Number.NaN) * 100, 9)
    expect(target?.pass).toBe((share ?? 0) * 100 >= 99)
    const row = result.rows.find((r) => r.figure === 'freshness: samples with the read models ≤ 2 s behind')
    expect(row?.mark).toBe(target?.pass === true ? 'pass' : 'miss')
    expect(result.rows.map((r) => r.figure)).toEqual(
      expect.arrayContaining([
        `freshness: batch paced at ${RATE.toLocaleString('en-US')} events/s for ${String(DURATION)} s: events/s accepted`,
        'freshness: batch p50 / p99 during that load',
      ]),
    )
    // Only the freshness scenario ran: no other target was checked.
    expect(result.targets).toHaveLength(1)
  })
})
