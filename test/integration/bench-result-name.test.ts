/**
 * A bench's JSON result (bench/report.ts) never overwrites an earlier run's of the same day and
 * commit: the second run of `npm run bench:scale` writes `<date>-<commit>-scale-2.json`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freeResultName } from '../../bench/report.js'

describe('freeResultName', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ocelog-bench-results-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('takes the name while it is free, then numbers the next runs from 2', () => {
    const base = '2026-12-07-abc1234-scale'
    expect(freeResultName(dir, base)).toBe(base)
    writeFileSync(join(dir, `${base}.json`), '{}')
    expect(freeResultName(dir, base)).toBe(`${base}-2`)
    writeFileSync(join(dir, `${base}-2.json`), '{}')
    expect(freeResultName(dir, base)).toBe(`${base}-3`)
    // Another commit's name is its own.
    expect(freeResultName(dir, '2026-12-07-def5678-scale')).toBe('2026-12-07-def5678-scale')
  })
})
