/**
 * The bench's freshness scenario (docs/performance.md#targets): the built `npm run bench` runs it alone
 * with two short loads (`--freshness 2000@2,1000@1`), each on a fresh service, and its JSON has a run
 * per load: the load, the read models' lag in seconds sampled during it, and the share of samples
 * within 2 s, checked against the target for the first load only. Correctness of the rows, not speed.
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
/** The loads asked, in order: the first is graded, the second reported. */
const LOADS = [
  { rate: 2000, seconds: 2 },
  { rate: 1000, seconds: 1 },
] as const

interface Freshness {
  rate: number
  durationSec: number
  requestRate: number
  achievedEventsPerSec: number
  load: { requests2xx: number; non2xx: number; errors: number; timeouts: number; latencyP99: number }
  lagSeconds: { samples: number; p99: number; max: number; shareWithin: number | null }
  catchUp: { seconds: number | null; behindAfter: number }
}

interface BenchJson {
  rows: { figure: string; value: string; target: string; mark: string }[]
  targets: { name: string; measured: number | null; kind: string; threshold: number; unit: string; pass: boolean }[]
  options: { freshness: { rate: number; seconds: number }[] }
  measurements: { freshness: Freshness[] }
}

/** The load as the rows name it, e.g. `2,000 events/s for 2 s`. */
const loadLabel = (l: { rate: number; seconds: number }) => `${l.rate.toLocaleString('en-US')} events/s for ${String(l.seconds)} s`

/** Runs the built bench with only the freshness scenario and `args`; rejects with the process's stderr when it fails. */
const bench = (out: string, args: string[]) =>
  execFileP(
    process.execPath,
    [
      BENCH,
      '--scenarios',
      'freshness',
      ...args,
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

let out: string
let result: BenchJson

beforeAll(async () => {
  requireBuild()
  out = mkdtempSync(join(tmpdir(), 'ocelog-bench-freshness-'))
  await bench(out, ['--freshness', LOADS.map((l) => `${String(l.rate)}@${String(l.seconds)}`).join(',')])
  const files = readdirSync(out).filter((f) => f.endsWith('.json'))
  expect(files).toHaveLength(1)
  result = JSON.parse(readFileSync(join(out, files[0] ?? ''), 'utf8')) as BenchJson
}, 120_000)

afterAll(() => {
  if (out !== undefined) rmSync(out, { recursive: true, force: true })
})

describe('npm run bench --scenarios freshness', () => {
  it('runs each load of --freshness in order, paced at its rate: events/s ÷ 100 events per body requests/s, every one accepted', () => {
    expect(result.options.freshness).toEqual(LOADS)
    const runs = result.measurements.freshness
    expect(runs.map((f) => [f.rate, f.durationSec])).toEqual(LOADS.map((l) => [l.rate, l.seconds]))
    for (const [i, f] of runs.entries()) {
      const { rate, seconds } = LOADS[i] ?? { rate: Number.NaN, seconds: Number.NaN }
      expect(f.requestRate).toBe(rate / 100)
      expect(f.load.requests2xx).toBe((rate / 100) * seconds)
      expect(f.load.non2xx + f.load.errors + f.load.timeouts).toBe(0)
      expect(f.load.latencyP99).toBeGreaterThan(0)
      // Accepted events over the wall time from the load's start to its last answer: the last request is due one interval before the end.
      expect(f.achievedEventsPerSec).toBeGreaterThan(0)
      expect(f.achievedEventsPerSec).toBeLessThanOrEqual((rate * seconds) / (seconds - 1 / (rate / 100)))
      // The read models caught up after so small a load.
      expect(f.catchUp.seconds).not.toBeNull()
      expect(f.catchUp.behindAfter).toBe(0)
    }
  })

  it('samples the lag in seconds every 250 ms during each load, with p99 ≤ max and a share within 0..1', () => {
    expect(result.measurements.freshness).toHaveLength(LOADS.length)
    for (const [i, f] of result.measurements.freshness.entries()) {
      const lag = f.lagSeconds
      // Four samples a second, with room for a busy machine's late timers.
      expect(lag.samples).toBeGreaterThanOrEqual(2 * (LOADS[i]?.seconds ?? Number.NaN))
      expect(lag.p99).toBeGreaterThanOrEqual(0)
      expect(lag.max).toBeGreaterThanOrEqual(lag.p99)
      expect(lag.shareWithin).not.toBeNull()
      expect(lag.shareWithin).toBeGreaterThanOrEqual(0)
      expect(lag.shareWithin).toBeLessThanOrEqual(1)
    }
  })

  it('labels every run\'s rows with its load, and checks "≤ 2 s behind in 99% of samples" on the first run only', () => {
    const [graded, reported] = LOADS.map(loadLabel)
    const prefixes = [`freshness, batch at ${String(graded)}:`, `freshness, batch at ${String(reported)}:`]
    const lagRow = (i: number) => `read models' lag, p99 / max of ${String(result.measurements.freshness[i]?.lagSeconds.samples)} samples (every 250 ms)`
    expect(result.rows.map((r) => r.figure)).toEqual(
      prefixes.flatMap((p, i) => [`${p} events/s accepted`, `${p} p50 / p99`, `${p} ${lagRow(i)}`, `${p} samples with the read models ≤ 2 s behind`]),
    )
    // The first run's share is the one target checked: only the freshness scenario ran.
    const share = result.measurements.freshness[0]?.lagSeconds.shareWithin ?? null
    expect(result.targets).toHaveLength(1)
    const target = result.targets[0]
    expect(target).toMatchObject({ name: `read models ≤ 2 s behind in 99% of samples (${String(graded)})`, kind: 'min', threshold: 99, unit: '%' })
    expect(target?.measured).toBeCloseTo((share ?? Number.NaN) * 100, 9)
    expect(target?.pass).toBe((share ?? 0) * 100 >= 99)
    const shareRow = (p: string | undefined) => result.rows.find((r) => r.figure === `${String(p)} samples with the read models ≤ 2 s behind`)
    expect(shareRow(prefixes[0])).toMatchObject({ target: '≥ 99%', mark: target?.pass === true ? 'pass' : 'miss' })
    expect(shareRow(prefixes[1])).toMatchObject({ target: 'reported', mark: '' })
    const reportedShare = result.measurements.freshness[1]?.lagSeconds.shareWithin ?? Number.NaN
    expect(shareRow(prefixes[1])?.value).toBe(`${(Math.round(reportedShare * 1000) / 10).toFixed(1)}%`)
  })

  it('refuses a malformed item of --freshness, naming it and the form rate@seconds, before any load', async () => {
    for (const bad of ['2000@2,fast', '2000@2,1000@0', '2000', '2000@2s', '']) {
      const failed = await bench(out, ['--freshness', bad]).then(
        () => null,
        (e: unknown) => e as { code: number; stderr: string },
      )
      expect(failed?.code, bad).toBe(1)
      expect(failed?.stderr, bad).toContain("option '--freshness <list>' argument")
      expect(failed?.stderr, bad).toMatch(bad === '' ? /at least one load, as rate@seconds/ : /is not rate@seconds: events\/s @ seconds/)
    }
    const item = await bench(out, ['--freshness', '2000@2,1000@0']).catch((e: unknown) => e as { stderr: string })
    expect(item?.stderr).toContain('item "1000@0" is not rate@seconds')
    // The two options it replaced are gone.
    const old = await bench(out, ['--freshness-rate', '2000']).catch((e: unknown) => e as { code: number; stderr: string })
    expect(old?.stderr).toContain("unknown option '--freshness-rate'")
    // Only the first run's JSON: no failed call wrote one.
    expect(readdirSync(out).filter((f) => f.endsWith('.json'))).toHaveLength(1)
  })
})
